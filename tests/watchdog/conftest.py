"""The daemon in-process with a manual idle clock, and phases that record what the watchdog did with them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import structlog

from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.server import build_app
from ghost_agent.server.state import AppContext
from ghost_agent.watchdog import ManualClock, Phase, PhaseContext, PhaseResult, Timing
from ghost_agent.watchdog.runner import Watchdog
from tests.conftest import make_settings

SCALE = 0.01  # every window and cooldown a hundred times shorter: journal drain opens at 1.2 s of idle
CHAT = "/v1/chat/completions"
MESSAGES = [{"role": "user", "content": "hello there"}]


@dataclass
class Daemon:
    """An app under test: its HTTP client, context, watchdog, manual clock and backend."""

    client: httpx.AsyncClient
    ctx: AppContext
    clock: ManualClock
    backend: LLMBackend

    @property
    def watchdog(self) -> Watchdog:
        assert self.ctx.watchdog is not None
        return self.ctx.watchdog

    def idle_for(self, seconds: float) -> None:
        """Make the idle clock read exactly `seconds` (as if the last user request was that long ago)."""
        self.ctx.activity.touch()
        self.clock.advance(seconds)

    def log_events(self, event: str) -> list[dict[str, Any]]:
        """The `event` lines of the daemon's JSON log so far."""
        path = self.ctx.home.log_file
        lines = path.read_bytes().splitlines() if path.exists() else []
        return [e for e in map(orjson.loads, lines) if e.get("event") == event]


@contextlib.asynccontextmanager
async def watchdog_app(
    tmp_path: Path,
    *,
    backend: LLMBackend | None = None,
    phases: tuple[Phase, ...] = (),
    loop: bool = False,
    **overrides: Any,
) -> AsyncIterator[Daemon]:
    """The daemon with a `ManualClock` and `idle_time_scale=SCALE`; `phases` replace their table rows.

    `loop=False` keeps the watchdog's own tick loop asleep (tests call `watchdog.tick()`); `loop=True` ticks
    every 10 ms of real time while the windows are measured on the manual clock.
    """
    clock = ManualClock()
    values: dict[str, Any] = {"idle_time_scale": SCALE, "watchdog_tick_s": 1.0 if loop else 1e5}
    values.update(overrides)
    settings = make_settings(tmp_path, **values)
    backend = backend or ScriptedBackend(model="scripted-model")
    app = build_app(settings, backend, configure_logs=True, clock=clock)
    ctx: AppContext = app.state.ctx
    assert ctx.watchdog is not None
    for phase in phases:
        ctx.watchdog.install(phase)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
                yield Daemon(client, ctx, clock, backend)
    finally:
        structlog.reset_defaults()


PLACEHOLDER = Timing(0.0, None, 0.0)  # replaced by the table row's timing on install


@dataclass
class Recorder(Phase):
    """A phase that records each run (idle time when it ran) and then does `action` (default: ok)."""

    name: str = ""
    action: Callable[[PhaseContext], Any] | None = None
    runs: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(PLACEHOLDER)

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        self.runs.append(ctx.activity.idle_s())
        if self.action is not None:
            result = self.action(ctx)
            if asyncio.iscoroutine(result):
                result = await result
            if isinstance(result, PhaseResult):
                return result
        return PhaseResult.ok(ran=len(self.runs))


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll `predicate()` every 5 ms until true or fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
