"""The `Phase` interface, its timing (idle window + cooldown), its result, and what a phase may use.

A phase is one idle-time job of the biological watchdog (DESIGN §5): `name`, an idle `window`, a
`cooldown`, and `async run(ctx) -> PhaseResult`. Timing comes from the phase table (settings), never from
the phase class, so every window and cooldown is a setting and `--idle-time-scale` compresses them all.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.gate import ModelGate, ModelPreempted
from ghost_agent.watchdog.clock import ActivityClock
from ghost_agent.watchdog.counts import CountsCache

if TYPE_CHECKING:
    from ghost_agent.watchdog.host import PhaseHost

T = TypeVar("T")
Status = Literal["ok", "skipped", "yielded", "failed", "cancelled"]


@dataclass(frozen=True)
class Timing:
    """When a phase may run: idle time in `[min_idle_s, max_idle_s)` (no upper bound when None), and at least
    `cooldown_s` after its previous run (0 = every tick)."""

    min_idle_s: float
    max_idle_s: float | None
    cooldown_s: float

    def __post_init__(self) -> None:
        if self.max_idle_s is not None and self.max_idle_s <= self.min_idle_s:
            raise ValueError(f"empty idle window [{self.min_idle_s}, {self.max_idle_s})")

    def in_window(self, idle_s: float) -> bool:
        """True when `idle_s` lies inside the window."""
        return idle_s >= self.min_idle_s and (self.max_idle_s is None or idle_s < self.max_idle_s)

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {"min_idle_s": self.min_idle_s, "max_idle_s": self.max_idle_s, "cooldown_s": self.cooldown_s}


@dataclass(frozen=True)
class PhaseResult:
    """What one run did. `status`: ok | skipped (nothing to do, or not built: `detail` says why) | yielded
    (gave way to a user request) | failed (raised: `detail` is the exception type) | cancelled (shutdown)."""

    status: Status
    detail: str = ""
    data: JSON = field(default_factory=dict)

    @classmethod
    def ok(cls, detail: str = "", **data: Any) -> PhaseResult:
        """A completed run with its figures."""
        return cls("ok", detail, data)

    @classmethod
    def skipped(cls, reason: str, **data: Any) -> PhaseResult:
        """Nothing done, and why."""
        return cls("skipped", reason, data)

    @classmethod
    def yielded(cls, detail: str = "a user request arrived", **data: Any) -> PhaseResult:
        """Stopped early for a user request (what was done so far is in `data`)."""
        return cls("yielded", detail, data)

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {"status": self.status, "detail": self.detail, "data": dict(self.data)}


class PhaseYielded(Exception):
    """Raised by `PhaseContext.check_yield` between steps when a user request is in flight."""


class PhaseContext:
    """What a running phase may use: the host's services (`app`, a `PhaseHost`), the model gate, the idle clock,
    thread offload.

    Phases never touch the idle clock (only user requests move it) and make every model call through
    `complete` (low priority, preempted by user requests).
    """

    def __init__(
        self, app: PhaseHost, gate: ModelGate, activity: ActivityClock, phase: str, counts: CountsCache | None = None
    ) -> None:
        self.app = app
        self.gate = gate
        self.activity = activity
        self.phase = phase
        self.counts = counts

    def user_active(self) -> bool:
        """True while a user request is in flight: stop between steps and let it have the machine."""
        return self.gate.user_active

    def check_yield(self) -> None:
        """Raise `PhaseYielded` when a user request is in flight (call between steps)."""
        if self.gate.user_active:
            raise PhaseYielded("a user request arrived")

    def now(self) -> float:
        """Wall time (epoch seconds) from the watchdog's clock (injectable in tests)."""
        return self.activity.clock.time()

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking or CPU-bound `fn(*args)` in a worker thread, off the event loop.

        A thread cannot be interrupted: when the phase is cancelled (shutdown) this waits for `fn` to return
        before re-raising, so nothing a phase started still runs after the lifespan closes the stores. Keep
        each `fn` short (one step), and check `user_active` between steps.
        """
        task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            await asyncio.wait({task})
            if not task.cancelled():
                task.exception()  # retrieved: a failure after cancellation is not "never retrieved"
            raise

    async def complete(self, body: JSON) -> JSON:
        """One model call at low priority (`ModelPreempted` if a user request is, or becomes, active)."""
        backend = self.app.backend
        return await self.gate.background(lambda: backend.complete(body))


class Phase(abc.ABC):
    """One idle-time job. Subclasses set `name` (and `title`) and implement `run`; the table sets `timing`."""

    name: str = ""
    title: str = ""
    built: bool = True  # False for a row whose implementation comes later ("not built")

    def __init__(self, timing: Timing, *, key: str = "") -> None:
        self.timing = timing
        self.key = key

    @property
    def window(self) -> tuple[float, float | None]:
        """The idle window `(min_idle_s, max_idle_s)`."""
        return (self.timing.min_idle_s, self.timing.max_idle_s)

    @property
    def cooldown_s(self) -> float:
        """Seconds between runs (0 = every tick)."""
        return self.timing.cooldown_s

    @abc.abstractmethod
    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """Do the job once. May raise (logged, never fatal); `ModelPreempted`/`PhaseYielded` end it as yielded."""


class NotBuiltPhase(Phase):
    """A row of the phase table whose implementation comes later: every run is skipped as "not built"."""

    built = False

    def __init__(self, timing: Timing, *, key: str = "", name: str = "", title: str = "") -> None:
        super().__init__(timing, key=key)
        self.name = name
        self.title = title or name

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """Always skipped."""
        return PhaseResult.skipped("not built")


__all__ = [
    "ModelPreempted",
    "NotBuiltPhase",
    "Phase",
    "PhaseContext",
    "PhaseResult",
    "PhaseYielded",
    "Timing",
]
