"""The biological watchdog: a held task that ticks, and on each tick runs the phases whose window is open.

Per tick, for each phase of the table in order: skip it (with a reason) while a user request is in flight,
while idle time is outside its window or while its cooldown runs; otherwise run it. The cooldown anchor is
set BEFORE the phase is awaited and again in `finally` (seed 001, "Cooldown anchor discipline"), so a phase
that raises — or is cancelled — still waits a full cooldown instead of refiring every tick. A phase exception
is logged (`phase` event, `error` = its type) and never stops the watchdog; cancellation (shutdown) passes
through after the phase's state is recorded.

Log events: `phase` with `action` start | end | skip (skips are logged when their reason changes, not every
tick), `watchdog_started`, `watchdog_stopped`. Metrics: `ghost_phase_runs{phase,status}` and
`ghost_phase_duration_seconds{phase}`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.gate import ModelGate, ModelPreempted
from ghost_agent.logging import get_logger
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, PhaseYielded
from ghost_agent.watchdog.clock import ActivityClock
from ghost_agent.watchdog.counts import CountsCache
from ghost_agent.watchdog.run_log import PhaseRunLog

if TYPE_CHECKING:
    from ghost_agent.watchdog.host import PhaseHost, PhaseMetrics

log = get_logger("watchdog")

@dataclass
class PhaseState:
    """What the watchdog knows about one phase. Times are the clock's `monotonic()` readings."""

    anchor: float | None = None  # the cooldown anchor: set before the run is awaited and again in `finally`
    last_start: float | None = None
    last_end: float | None = None
    last_result: PhaseResult | None = None
    runs: int = 0
    failures: int = 0
    skip_reason: str | None = None
    skip_kind: str | None = None


class Watchdog:
    """Runs the phase table on idle time. `run_forever` is the held task; `tick` is one pass (tests call it)."""

    def __init__(
        self,
        app: PhaseHost,
        phases: Iterable[Phase],
        *,
        tick_s: float,
        gate: ModelGate,
        activity: ActivityClock,
        counts: CountsCache,
        metrics: PhaseMetrics | None = None,
        enabled: bool = True,
        run_log: PhaseRunLog | None = None,
    ) -> None:
        self.app = app
        self.phases: list[Phase] = list(phases)
        self.tick_s = tick_s
        self.gate = gate
        self.activity = activity
        self.counts = counts
        self.metrics = metrics
        self.enabled = enabled
        self.run_log = run_log
        self.states: dict[str, PhaseState] = {p.name: PhaseState() for p in self.phases}
        self.ticks = 0
        self.current: str | None = None
        self.running = False

    @property
    def clock(self) -> Any:
        """The time source shared with the idle clock."""
        return self.activity.clock

    def phase(self, name: str) -> Phase:
        """The phase named `name` (KeyError if none)."""
        for p in self.phases:
            if p.name == name:
                return p
        raise KeyError(name)

    def install(self, phase: Phase, *, keep_timing: bool = True) -> None:
        """Replace the table row of the same name with `phase` (a real implementation of a "not built" row).

        By default the row's timing (from the settings) is kept, so settings stay the one source of windows
        and cooldowns. Raises KeyError for a name the table does not have.
        """
        old = self.phase(phase.name)
        if keep_timing:
            phase.timing = old.timing
        phase.key = phase.key or old.key
        phase.title = phase.title or old.title
        self.phases[self.phases.index(old)] = phase

    # ---- the loop --------------------------------------------------------------------------------------

    async def run_forever(self) -> None:
        """Tick every `tick_s` until cancelled (shutdown)."""
        self.running = True
        log.info("watchdog_started", tick_s=self.tick_s,
                 phases=[{"key": p.key, "name": p.name, **p.timing.to_dict(), "built": p.built} for p in self.phases])
        try:
            while True:
                await asyncio.sleep(self.tick_s)
                try:
                    await self.tick()
                except Exception as exc:  # noqa: BLE001 - phases are guarded; this is a bug of ours, never fatal
                    log.error("watchdog_tick_failed", error=repr(exc), exc_info=exc)
        finally:
            self.running = False
            log.info("watchdog_stopped", ticks=self.ticks)

    async def tick(self) -> dict[str, PhaseResult]:
        """One pass over the table: run every eligible phase in order; returns what ran and how it ended."""
        self.ticks += 1
        ran: dict[str, PhaseResult] = {}
        for phase in list(self.phases):
            state = self.states.setdefault(phase.name, PhaseState())
            kind, reason = self.skip_reason(phase, state)
            if kind is not None:
                self._note_skip(phase, state, kind, reason)
                continue
            state.skip_kind = state.skip_reason = None
            ran[phase.name] = await self.run_phase(phase, state)
        return ran

    def skip_reason(self, phase: Phase, state: PhaseState) -> tuple[str | None, str]:
        """Why `phase` may not run now, as (kind, human reason); kind None = it may run."""
        timing = phase.timing
        if self.gate.user_active:
            return "user_active", "a user request is in flight"
        idle = self.activity.idle_s()
        if idle < timing.min_idle_s:
            return "idle_below_window", f"idle {idle:.0f}s < window start {timing.min_idle_s:g}s"
        if timing.max_idle_s is not None and idle >= timing.max_idle_s:
            return "idle_past_window", f"idle {idle:.0f}s >= window end {timing.max_idle_s:g}s"
        if state.anchor is not None:
            left = state.anchor + timing.cooldown_s - self.clock.monotonic()
            if left > 0:
                return "cooldown", f"cooldown: {left:.0f}s left"
        return None, ""

    def _note_skip(self, phase: Phase, state: PhaseState, kind: str, reason: str) -> None:
        changed = kind != state.skip_kind
        state.skip_kind, state.skip_reason = kind, reason
        if changed:
            log.info("phase", action="skip", phase=phase.name, key=phase.key, reason=reason, kind=kind)

    async def run_phase(self, phase: Phase, state: PhaseState) -> PhaseResult:
        """Run `phase` once under the anchor discipline; never raises except CancelledError."""
        ctx = PhaseContext(self.app, self.gate, self.activity, phase.name, self.counts)
        quiet = getattr(phase, "quiet", False)
        # 1. The anchor BEFORE the await: a run that raises or hangs until shutdown still advances it.
        state.anchor = state.last_start = self.clock.monotonic()
        state.runs += 1
        self.current = phase.name
        (log.debug if quiet else log.info)("phase", action="start", phase=phase.name, key=phase.key,
                                           idle_s=round(self.activity.idle_s(), 3))
        t0, wall = time.perf_counter(), time.time()
        result = PhaseResult("cancelled", "shutdown")
        try:
            result = await phase.run(ctx)
        except (ModelPreempted, PhaseYielded) as exc:
            result = PhaseResult.yielded(str(exc))
        except asyncio.CancelledError:
            result = PhaseResult("cancelled", "shutdown")
            raise
        except Exception as exc:  # noqa: BLE001 - a phase failure is logged, never fatal to the watchdog
            state.failures += 1
            result = PhaseResult("failed", type(exc).__name__, {"message": str(exc)[:500]})
            log.error("phase", action="end", phase=phase.name, key=phase.key, status="failed",
                      error=type(exc).__name__, message=str(exc)[:500], exc_info=exc)
        finally:
            # 2. And again in `finally`: belt and braces (seed 001).
            state.anchor = state.last_end = self.clock.monotonic()
            state.last_result = result
            self.current = None
            seconds = time.perf_counter() - t0
            self._observe(phase, result, seconds)
            self._log_run(phase, result, wall, seconds)
            if result.status != "failed":
                level = log.debug if quiet and result.status == "ok" else log.info
                level("phase", action="skip" if result.status == "skipped" else "end", phase=phase.name,
                      key=phase.key, status=result.status, reason=result.detail or None,
                      duration_ms=round(seconds * 1000.0, 3), **_loggable(result.data))
        return result

    def _log_run(self, phase: Phase, result: PhaseResult, wall: float, seconds: float) -> None:
        if self.run_log is None:
            return
        try:
            self.run_log.append(phase=phase.name, key=phase.key, started=wall, ended=wall + seconds,
                                status=result.status, detail=result.detail, data=result.data)
        except OSError as exc:  # the history is for the status page; a full disk must not stop the phases
            log.warning("phase_run_log_failed", phase=phase.name, error=repr(exc))

    def _observe(self, phase: Phase, result: PhaseResult, seconds: float) -> None:
        if self.metrics is None:
            return
        self.metrics.phase_runs.labels(phase.name, result.status).inc()
        self.metrics.phase_duration.labels(phase.name).observe(seconds)

    # ---- status ----------------------------------------------------------------------------------------

    def next_eligible(self, phase: Phase, state: PhaseState) -> float | None:
        """When (monotonic) the phase may next run if no user request comes; None = not in this idle stretch."""
        if not self.enabled:
            return None
        now = self.clock.monotonic()
        timing = phase.timing
        start = self.activity.last_activity + timing.min_idle_s
        end = math.inf if timing.max_idle_s is None else self.activity.last_activity + timing.max_idle_s
        ready = now if state.anchor is None else state.anchor + timing.cooldown_s
        earliest = max(now, start, ready)
        return None if earliest >= end else earliest

    def status(self) -> JSON:
        """The watchdog and every phase: window, cooldown, last run, result, next eligible time, skip reason."""
        iso = self.activity.iso
        now = self.clock.monotonic()
        phases = []
        for p in self.phases:
            st = self.states.setdefault(p.name, PhaseState())
            nxt = self.next_eligible(p, st)
            phases.append({
                "key": p.key,
                "name": p.name,
                "title": p.title,
                "built": p.built,
                "window": {"min_idle_s": p.timing.min_idle_s, "max_idle_s": p.timing.max_idle_s},
                "cooldown_s": p.timing.cooldown_s,
                "running": self.current == p.name,
                "runs": st.runs,
                "failures": st.failures,
                "last_start": iso(st.last_start),
                "last_end": iso(st.last_end),
                "last_result": None if st.last_result is None else st.last_result.to_dict(),
                "next_eligible": iso(nxt),
                "next_eligible_in_s": None if nxt is None else round(max(0.0, nxt - now), 3),
                "skip_reason": st.skip_reason,
            })
        return {
            "watchdog": {
                "enabled": self.enabled,
                "running": self.running,
                "tick_s": self.tick_s,
                "ticks": self.ticks,
                "current_phase": self.current,
                "idle_s": round(self.activity.idle_s(), 3),
                "last_activity": iso(self.activity.last_activity),
                "user_requests_in_flight": self.gate.users,
                "preemptions": self.gate.preemptions,
            },
            "phases": phases,
        }


def _loggable(data: JSON) -> JSON:
    """A phase's result figures as log fields (scalars only, names that cannot clash with ours)."""
    reserved = {"action", "phase", "key", "status", "reason", "duration_ms", "event"}
    return {k: v for k, v in data.items() if k not in reserved and isinstance(v, (int, float, str, bool))}


__all__ = ["PhaseState", "Watchdog"]
