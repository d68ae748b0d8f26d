"""The live services an agent turn uses, in one typed holder the stages share.

Built with the app and filled in by the lifespan (learned models, the lesson store, the experience bank and the
sandbox appear
only once their files and probes are ready). Stages read the holder on every turn, so a hot-swapped PRM or
router, or a sandbox whose probe just finished, is used by the very next turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ghost_agent.agent.recent import RecentTurns
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.router.dispatch import Router

if TYPE_CHECKING:
    from ghost_agent.llm.base import LLMBackend
    from ghost_agent.memory.store import SkillMemory
    from ghost_agent.sandbox.base import SandboxBackend
    from ghost_agent.sandbox.workspace import Workspaces
    from ghost_agent.selfhood.service import Selfhood
    from ghost_agent.selfplay.experience import ExperienceBank
    from ghost_agent.settings import Settings
    from ghost_agent.tools.registry import ToolRegistry
    from ghost_agent.trajectories.collector import TrajectoryCollector


@dataclass
class AgentServices:
    """Everything a turn's stages need beyond the request itself."""

    settings: Settings
    backend: LLMBackend
    collector: TrajectoryCollector
    registry: ToolRegistry
    prm_scorer: PRMScorer = field(default_factory=PRMScorer)
    router: Router = field(default_factory=Router)
    memory: SkillMemory | None = None
    workspaces: Workspaces | None = None
    sandbox: SandboxBackend | None = None
    sandbox_error: str | None = None
    recent: RecentTurns = field(default_factory=RecentTurns)
    # The diary / self-state / narrative of the home; its narrative is the turn's wake-up prefix (memory stage).
    selfhood: Selfhood | None = None
    # Validated self-play solutions, shown as worked examples to similar requests (the experience stage).
    experience: ExperienceBank | None = None
