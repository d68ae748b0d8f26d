"""Wiring: build the watchdog for its host (the daemon), and start it as a held background service."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ghost_agent.watchdog.counts import CountsCache, default_providers
from ghost_agent.watchdog.host import PhaseHost
from ghost_agent.watchdog.run_log import PhaseRunLog
from ghost_agent.watchdog.runner import Watchdog
from ghost_agent.watchdog.table import build_phases, tick_seconds

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine
    from typing import Any

    from ghost_agent.llm.gate import ModelGate
    from ghost_agent.watchdog.clock import ActivityClock
    from ghost_agent.watchdog.host import PhaseMetrics

COUNTS_TTL_S = 300.0  # status requests recount at most this often; the journal drain keeps it fresh when idle


class WatchdogHost(PhaseHost, Protocol):
    """What building and starting the watchdog takes from the daemon, beyond what its phases use: the idle
    clock, the model gate, the metrics, the watchdog it holds, and a way to hold a background task."""

    @property
    def activity(self) -> ActivityClock:
        """The idle clock (only user requests move it)."""

    @property
    def model_gate(self) -> ModelGate:
        """User requests first, background model calls preempted."""

    @property
    def metrics(self) -> PhaseMetrics:
        """Where phase runs are counted and timed."""

    @property
    def watchdog(self) -> Watchdog | None:
        """The watchdog `build_watchdog` made for this host (None before)."""

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, *, service: bool = False) -> asyncio.Task[Any]:
        """Start a held background task (`service=True`: cancelled at once at shutdown)."""


def build_watchdog(ctx: WatchdogHost) -> Watchdog:
    """The watchdog over the phase table of `ctx.settings`, sharing the context's idle clock and model gate."""
    settings = ctx.settings
    counts = CountsCache(default_providers(ctx), ttl_s=COUNTS_TTL_S, clock=ctx.activity.clock)
    return Watchdog(
        ctx,
        build_phases(settings),
        tick_s=tick_seconds(settings),
        gate=ctx.model_gate,
        activity=ctx.activity,
        counts=counts,
        metrics=ctx.metrics,
        enabled=settings.watchdog.enabled,
        run_log=PhaseRunLog(ctx.home.watchdog_runs),
    )


def start_watchdog(ctx: WatchdogHost) -> asyncio.Task[Any] | None:
    """Spawn the watchdog as a held service task (cancelled and awaited at shutdown); None when disabled."""
    watchdog = ctx.watchdog
    if watchdog is None or not watchdog.enabled:
        return None
    ctx.activity.touch()  # idle time counts from startup, not from when the app object was built
    return ctx.spawn(watchdog.run_forever(), "watchdog", service=True)


__all__ = ["COUNTS_TTL_S", "WatchdogHost", "build_watchdog", "start_watchdog"]
