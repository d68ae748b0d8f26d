"""What the watchdog needs from the daemon that hosts it, as protocols: the app's services a phase may use.

The server's `AppContext` satisfies both structurally (nothing here names it): phases, the counts and the
runner see these members and nothing else, and nothing under `watchdog/` imports the server. A test host may be
any object with the same members.

- `PhaseHost`: what a running phase reads through `PhaseContext.app` (settings, the home, the backend, the
  trajectory store, the model names, the live PRM and router, the lesson store, selfhood, the reflector, the
  sandbox, and the practice turn self-play runs).
- `PhaseMetrics`: the two metrics the runner records per phase run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from prometheus_client import Counter, Histogram

    from ghost_agent.home import GhostHome
    from ghost_agent.llm.base import LLMBackend
    from ghost_agent.llm.model_names import ModelNames
    from ghost_agent.memory.store import SkillMemory
    from ghost_agent.prm.scorer import PRMScorer
    from ghost_agent.reflection.reflector import Reflector
    from ghost_agent.router.dispatch import Router
    from ghost_agent.sandbox.base import SandboxBackend
    from ghost_agent.selfhood.service import Selfhood
    from ghost_agent.selfplay.experience import ExperienceBank
    from ghost_agent.selfplay.practice import Grader, PracticeTurn
    from ghost_agent.settings import Settings
    from ghost_agent.trajectories.collector import TrajectoryCollector


class PhaseHost(Protocol):
    """The daemon's services as a phase sees them (read-only: a phase swaps a live model through its slot)."""

    @property
    def settings(self) -> Settings:
        """The daemon's settings."""

    @property
    def home(self) -> GhostHome:
        """The home's paths (checkpoints, skills database, log file)."""

    @property
    def backend(self) -> LLMBackend:
        """The model backend (phases call it through `PhaseContext.complete`, at low priority)."""

    @property
    def collector(self) -> TrajectoryCollector:
        """The trajectory store."""

    @property
    def models(self) -> ModelNames:
        """The advertised and forwarded model names."""

    @property
    def prm_scorer(self) -> PRMScorer:
        """The live PRM slot (hot-swappable)."""

    @property
    def router(self) -> Router:
        """The live router slot (hot-swappable)."""

    @property
    def memory(self) -> SkillMemory | None:
        """The lesson store (None: no store)."""

    @property
    def selfhood(self) -> Selfhood | None:
        """The diary, self-state and narrative (None: selfhood off)."""

    @property
    def experience(self) -> ExperienceBank | None:
        """The experience bank self-play fills (None: no bank)."""

    @property
    def reflector(self) -> Reflector | None:
        """The Reflector the reflection backstop runs (None: --no-reflection)."""

    @property
    def sandbox_backend(self) -> SandboxBackend | None:
        """The sandbox code runs in (None until probed, or when none may run)."""

    async def practice_turn(
        self, prompt: str, *, session_id: str, files: dict[str, str], grade: Grader, show_examples: bool = True
    ) -> PracticeTurn:
        """Self-play: the chat turn on `prompt`, in-process at low priority, graded and recorded."""


class PhaseMetrics(Protocol):
    """The per-phase metrics: runs by phase and status, and each run's wall time by phase."""

    @property
    def phase_runs(self) -> Counter:
        """`ghost_phase_runs{phase,status}`."""

    @property
    def phase_duration(self) -> Histogram:
        """`ghost_phase_duration_seconds{phase}`."""


__all__ = ["PhaseHost", "PhaseMetrics"]
