"""Lesson, candidate and trajectory counts for the status surface, computed off the event loop and cached.

Counting trajectories is a full scan of the store, so it never happens per request: the journal drain
refreshes the cache while the daemon is idle ("compact counters"), and a status request recomputes only when
the cache is older than `ttl_s` (or when asked to). Each count comes from a provider (name -> function); a
provider that raises reports `{"error": ...}` instead of failing the whole status. `candidates` are the
skills phase's (`skills_auto/store.py::candidate_counts`); later subsystems may `register` their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ghost_agent.jsonsafe import JSON
from ghost_agent.skills_auto.store import candidate_counts
from ghost_agent.watchdog.clock import Clock, SystemClock

if TYPE_CHECKING:
    from ghost_agent.trajectories.collector import TrajectoryCollector
    from ghost_agent.watchdog.host import PhaseHost

Provider = Callable[[], JSON]
DEFAULT_TTL_S = 60.0


class CountsCache:
    """Named count providers run together in a worker thread; the last snapshot is kept for `ttl_s`."""

    def __init__(self, providers: dict[str, Provider] | None = None, *, ttl_s: float = DEFAULT_TTL_S,
                 clock: Clock | None = None) -> None:
        self.providers: dict[str, Provider] = dict(providers or {})
        self.ttl_s = ttl_s
        self.clock: Clock = clock or SystemClock()
        self._snapshot: JSON | None = None
        self._at: float | None = None
        self._lock: asyncio.Lock | None = None

    def register(self, name: str, provider: Provider) -> None:
        """Add or replace a provider; the next `get` recomputes."""
        self.providers[name] = provider
        self._at = None

    @property
    def snapshot(self) -> JSON | None:
        """The last computed counts (None before the first computation)."""
        return self._snapshot

    @property
    def stale(self) -> bool:
        """Whether the next `get` recomputes (never computed, or older than `ttl_s`)."""
        return self._at is None or self.clock.monotonic() - self._at >= self.ttl_s

    async def get(self, *, refresh: bool = False) -> JSON:
        """The counts: cached unless stale or `refresh`; concurrent callers share one computation."""
        if not refresh and not self.stale and self._snapshot is not None:
            return self._snapshot
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not refresh and not self.stale and self._snapshot is not None:
                return self._snapshot  # another caller computed it while we waited
            return await self.refresh()

    async def refresh(self) -> JSON:
        """Recompute every count now (in a worker thread) and cache the result."""
        return self.put(await asyncio.to_thread(self.compute))

    def put(self, snapshot: JSON) -> JSON:
        """Cache `snapshot` (from `compute`, run wherever the caller likes) as the current counts."""
        self._snapshot, self._at = snapshot, self.clock.monotonic()
        return snapshot

    def compute(self) -> JSON:
        """Run every provider (blocking); a failing one reports its error."""
        out: JSON = {}
        for name, provider in list(self.providers.items()):
            try:
                out[name] = provider()
            except Exception as exc:  # noqa: BLE001 - one broken count must not hide the others
                out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        out["computed_at"] = self.clock.time()
        return out


def trajectory_counts(collector: TrajectoryCollector) -> JSON:
    """Trajectories by outcome (corrections overlaid) and by source (one full scan)."""
    stats = collector.stats()
    return {
        "total": stats["trajectories"],
        "by_outcome": stats["outcomes"],
        "by_source": stats["sources"],
        "corrections": stats["corrections"]["ids"],
        "corrupt_lines": stats["corrupt_lines"],
    }


def lesson_counts(ctx: PhaseHost) -> JSON:
    """Lessons by status: active / pinned / archived / retracted (absent store = `available: false`)."""
    memory = ctx.memory
    if memory is None:
        return {"available": False, "reason": "no lesson store", "total": 0, "by_status": {}}
    by_status = memory.status_counts()
    return {"available": True, "total": sum(by_status.values()), "by_status": dict(sorted(by_status.items()))}


def not_built_counts() -> JSON:
    """The placeholder for counts whose subsystem is not built yet (skill candidates)."""
    return {"available": False, "reason": "not built", "total": 0, "by_status": {}}


def default_providers(ctx: PhaseHost) -> dict[str, Provider]:
    """Trajectories, lessons, and skill candidates (the skills phase's store, read-only)."""
    return {
        "trajectories": lambda: trajectory_counts(ctx.collector),
        "lessons": lambda: lesson_counts(ctx),
        "candidates": lambda: candidate_counts(ctx.home.skills_db),
    }


__all__ = ["CountsCache", "Provider", "default_providers", "lesson_counts", "not_built_counts", "trajectory_counts"]
