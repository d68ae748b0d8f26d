"""Wiring: build the watchdog for an app context, and start it as a held background service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ghost_agent.watchdog.counts import CountsCache, default_providers
from ghost_agent.watchdog.runner import Watchdog
from ghost_agent.watchdog.table import build_phases, tick_seconds

if TYPE_CHECKING:
    import asyncio
    from typing import Any

    from ghost_agent.server.state import AppContext

COUNTS_TTL_S = 300.0  # status requests recount at most this often; the journal drain keeps it fresh when idle


def build_watchdog(ctx: AppContext) -> Watchdog:
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
    )


def start_watchdog(ctx: AppContext) -> asyncio.Task[Any] | None:
    """Spawn the watchdog as a held service task (cancelled and awaited at shutdown); None when disabled."""
    watchdog = ctx.watchdog
    if watchdog is None or not watchdog.enabled:
        return None
    ctx.activity.touch()  # idle time counts from startup, not from when the app object was built
    return ctx.spawn(watchdog.run_forever(), "watchdog", service=True)


__all__ = ["COUNTS_TTL_S", "build_watchdog", "start_watchdog"]
