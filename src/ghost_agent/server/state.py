"""The typed context the lifespan owns: every service a route needs, and the background tasks.

It is also the watchdog's host: it satisfies `watchdog.host.PhaseHost` and `watchdog.service.WatchdogHost`
(structurally; the watchdog never imports the server).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ghost_agent.agent.pipeline import TurnPipeline
from ghost_agent.agent.services import AgentServices
from ghost_agent.home import GhostHome
from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.gate import ModelGate
from ghost_agent.llm.model_names import ModelNames
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.router.dispatch import Router
from ghost_agent.sandbox.base import SandboxBackend
from ghost_agent.sandbox.detect import Detection
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.selfplay.practice import Grader, PracticeTurn
from ghost_agent.server.metrics import Metrics
from ghost_agent.server.practice import practice_turn
from ghost_agent.server.reply_rates import RecentReplies
from ghost_agent.server.turn_index import TurnIndex
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.watchdog.clock import ActivityClock

if TYPE_CHECKING:
    from ghost_agent.agent.stages.reflection_scheduler import ReflectionScheduler
    from ghost_agent.memory.store import SkillMemory
    from ghost_agent.reflection.reflector import Reflector
    from ghost_agent.selfhood.service import Selfhood
    from ghost_agent.selfplay.experience import ExperienceBank
    from ghost_agent.watchdog.runner import Watchdog


@dataclass
class AppContext:
    """Services shared by the routes. Created by `build_app`, started and stopped by the lifespan."""

    settings: Settings
    home: GhostHome
    backend: LLMBackend
    pipeline: TurnPipeline
    metrics: Metrics
    # The advertised, forwarded and replied model names (`served_model` is the advertised one).
    models: ModelNames
    collector: TrajectoryCollector
    started_at: float = field(default_factory=time.time)
    backend_ready: asyncio.Event = field(default_factory=asyncio.Event)
    backend_error: str | None = None
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    services: set[asyncio.Task[Any]] = field(default_factory=set)
    # What the agent turn's stages use (PRM, router, lessons, tools, workspaces, the sandbox backend).
    agent: AgentServices | None = None
    # The sandbox is probed in the background at startup (about 0.1 s): `sandbox` stays None until then, and
    # stays None with `sandbox_error` set when no backend may run code: `sandbox_refused` when that is because
    # bubblewrap cannot run and unisolated code was not opted into (the default), else nothing runs at all.
    sandbox: Detection | None = None
    sandbox_error: str | None = None
    sandbox_refused: bool = False
    # Facts other subsystems publish in /v1/ghost/health (the open /health shows none of them).
    health_extra: dict[str, Any] = field(default_factory=dict)
    # The idle clock (only user chat requests move it), the model-priority gate (user requests first, background
    # model calls preempted) and the biological watchdog that runs the idle-time phases (set by `build_app`).
    activity: ActivityClock = field(default_factory=ActivityClock)
    model_gate: ModelGate = field(default_factory=ModelGate)
    watchdog: Watchdog | None = None
    # Reflection (None when --no-reflection): the Reflector (`.reflector`, whose `run` is the watchdog's
    # reflection backstop) and the held post-correction reflection tasks (`.tasks`).
    reflection: ReflectionScheduler | None = None
    # The status page's sources: the last replies (rates and tokens/s for "Now"), the turns index (made on
    # first use: `turn_index`).
    replies: RecentReplies = field(default_factory=RecentReplies)
    _turns: TurnIndex | None = None

    def turn_index(self) -> TurnIndex:
        """The turns the status page lists, indexed incrementally from the trajectory store."""
        if self._turns is None:
            self._turns = TurnIndex(self.collector)
        return self._turns

    @property
    def served_model(self) -> str:
        """The model name /v1/models advertises and replies carry when the daemon pins one."""
        return self.models.advertised

    @property
    def agent_services(self) -> AgentServices:
        """The agent services (always set by `build_app`)."""
        if self.agent is None:
            raise RuntimeError("AppContext.agent is not set")
        return self.agent

    @property
    def prm_scorer(self) -> PRMScorer:
        """The live PRM scorer (neutral until a checkpoint loads; hot-swappable)."""
        return self.agent_services.prm_scorer

    @property
    def router(self) -> Router:
        """The live router (no model = always the agent; hot-swappable)."""
        return self.agent_services.router

    @property
    def workspaces(self) -> Workspaces | None:
        """Per-session workspaces (set by the lifespan)."""
        return self.agent_services.workspaces

    @property
    def memory(self) -> SkillMemory | None:
        """The lesson store (None until the lifespan opens it, or when it cannot be opened)."""
        return self.agent_services.memory

    @property
    def experience(self) -> ExperienceBank | None:
        """The experience bank (None until the lifespan opens it, or when it cannot be opened)."""
        return self.agent_services.experience

    @property
    def selfhood(self) -> Selfhood | None:
        """The diary, self-state and narrative (None: selfhood off)."""
        return self.agent_services.selfhood

    @property
    def reflector(self) -> Reflector | None:
        """The Reflector the watchdog's reflection backstop runs (None: --no-reflection)."""
        return None if self.reflection is None else self.reflection.reflector

    @property
    def sandbox_backend(self) -> SandboxBackend | None:
        """The sandbox code runs in (None until probed, or when none may run)."""
        return self.agent_services.sandbox

    async def ready_to_practise(self, backend_timeout_s: float, sandbox_timeout_s: float = 60.0) -> SandboxBackend:
        """Wait until the backend has started and the sandbox probe has finished (self-play outside the
        watchdog: `selfplay run`, the benches); the sandbox, or RuntimeError saying what is missing."""
        await asyncio.wait_for(self.backend_ready.wait(), timeout=backend_timeout_s)
        if self.backend_error:
            raise RuntimeError(f"the backend did not start: {self.backend_error}")
        deadline = time.monotonic() + sandbox_timeout_s
        while self.sandbox_backend is None and self.sandbox_error is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        sandbox = self.sandbox_backend
        if sandbox is None:
            raise RuntimeError(f"no sandbox to grade code in: {self.sandbox_error or 'the probe did not finish'}")
        return sandbox

    async def practice_turn(
        self, prompt: str, *, session_id: str, files: dict[str, str], grade: Grader, show_examples: bool = True
    ) -> PracticeTurn:
        """One self-play turn: run, graded, recorded (`server/practice.py`)."""
        return await practice_turn(self.pipeline, self.model_gate, self.workspaces, prompt, session_id=session_id,
                                   files=files, grade=grade, show_examples=show_examples)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, *, service: bool = False) -> asyncio.Task[Any]:
        """Start a background task that is held (never fire-and-forget) until it ends or shutdown.

        `service=True` marks an endless loop (a periodic flush, later the watchdog): shutdown cancels it at
        once instead of waiting for it to finish.
        """
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if service:
            self.services.add(task)
            task.add_done_callback(self.services.discard)
        return task

    async def stop_tasks(self, grace_s: float) -> None:
        """Give background tasks `grace_s` to finish, then cancel the rest and wait for them."""
        for task in list(self.services):
            task.cancel()
        if not self.tasks:
            return
        _, pending = await asyncio.wait(set(self.tasks), timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


def app_context(request: Any) -> AppContext:
    """The AppContext `build_app` attached to the app a request (a Starlette `Request`) came to."""
    ctx: AppContext = request.app.state.ctx
    return ctx
