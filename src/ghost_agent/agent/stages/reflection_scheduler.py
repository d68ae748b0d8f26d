"""Real-time loop closure: a user correction schedules `reflect_one` on the turn it corrected.

`ReflectionScheduler` is both the correction stage's `on_correction` hook and a pipeline finisher. The
user's reply never waits for a reflection, and chat goes first on the one model:

* with a model-priority gate (`Reflector.gate`, the watchdog's `ModelGate`) the hook schedules the
  reflection at once; its critique waits at low priority until no user request is in flight (the correcting
  request holds the gate until its reply is delivered) and is preempted and retried if one arrives;
* without a gate the hook leaves the event on the turn and the finisher schedules it once the reply has been
  sent (finishers run after delivery), so the critique at least never overlaps the turn that caused it.

Each reflection is a held task: kept in `tasks` (and in the app's task set through `spawn`, so shutdown
waits for it briefly, then cancels it), with a done-callback that logs `post_turn_reflection`: ok with the
lesson, no lesson with the reason, or failed with the exception type.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ghost_agent.agent.stages.correction import CorrectionEvent
from ghost_agent.agent.turn import Turn
from ghost_agent.logging import get_logger
from ghost_agent.reflection.reflector import (
    STATUS_OK,
    TRIGGER_CORRECTION,
    ModelGate,
    ReflectionResult,
    Reflector,
)
from ghost_agent.reflection.sink import CompositeSink
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory

if TYPE_CHECKING:
    from ghost_agent.agent.services import AgentServices

log = get_logger("reflection")

Spawn = Callable[[Coroutine[Any, Any, Any], str], "asyncio.Task[Any]"]


class ReflectionScheduler:
    """Schedules one held reflection task per user correction (hook + finisher; see the module doc)."""

    name = "reflect"

    def __init__(
        self, reflector: Reflector, collector: TrajectoryCollector | None = None, *, spawn: Spawn | None = None
    ) -> None:
        self.reflector = reflector
        self.collector = collector
        self.spawn = spawn  # the app's `spawn` (tasks held by the app too, for shutdown); None = own tasks only
        self.tasks: set[asyncio.Task[ReflectionResult]] = set()

    # ---- the correction hook and the finisher ----------------------------------------------------------

    async def on_correction(self, event: CorrectionEvent) -> None:
        """The `CorrectionStage` hook: schedule now (a gate orders the model), else after the reply."""
        if self.reflector.gate is not None:
            self.schedule(event)
        else:
            event.turn.state.reflections_pending.append(lambda: self.schedule(event))

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        """The finisher: schedule the corrections this turn left pending (its reply has been delivered)."""
        pending, turn.state.reflections_pending = turn.state.reflections_pending, []
        for start in pending:
            start()

    # ---- the held tasks --------------------------------------------------------------------------------

    def schedule(self, event: CorrectionEvent) -> asyncio.Task[ReflectionResult]:
        """Start the reflection of `event`'s failed turn as a held task (never awaited by the turn)."""
        coro = self._reflect(event)
        name = f"reflect-{event.trajectory_id[:12]}"
        if self.spawn is not None:
            task: asyncio.Task[ReflectionResult] = self.spawn(coro, name)
        else:
            task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(lambda t: self._done(t, event.trajectory_id))
        log.info("post_turn_reflection", status="scheduled", trajectory_id=event.trajectory_id,
                 by_request=event.turn.request_id, gate=self.reflector.gate is not None)
        return task

    async def _reflect(self, event: CorrectionEvent) -> ReflectionResult:
        traj = await self.load(event)
        return await self.reflector.reflect_one(
            traj, correction=event.correcting_message, session_id=event.session_id, trigger=TRIGGER_CORRECTION
        )

    async def load(self, event: CorrectionEvent) -> Trajectory:
        """The corrected turn's record (correction overlaid), else one rebuilt from the event (recording off).

        Its outcome is FAILED either way: the user's verdict holds in memory even where the sidecar is off.
        """
        traj: Trajectory | None = None
        if self.collector is not None:
            try:
                traj = await asyncio.to_thread(self.collector.get, event.trajectory_id)
            except OSError as exc:
                log.warning("post_turn_reflection", status="load_failed", trajectory_id=event.trajectory_id,
                            error=repr(exc))
        if traj is None:
            traj = Trajectory(id=event.trajectory_id, session_id=event.session_id,
                              user_request=event.prior_request, final_response=event.prior_reply)
        if traj.outcome is not Outcome.FAILED:
            traj.outcome = Outcome.FAILED
            traj.failure_reason = event.reason
        return traj

    def _done(self, task: asyncio.Task[ReflectionResult], trajectory_id: str) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            log.info("post_turn_reflection", status="cancelled", trajectory_id=trajectory_id)
            return
        exc = task.exception()
        if exc is not None:
            log.error("post_turn_reflection", status="failed", trajectory_id=trajectory_id,
                      error_type=type(exc).__name__, error=str(exc)[:300])
            return
        result = task.result()
        if result.status == STATUS_OK and result.lesson is not None:
            log.info("post_turn_reflection", status="ok", trajectory_id=trajectory_id, lesson_id=result.lesson_id,
                     task=result.lesson.task[:120], solution=result.lesson.solution[:160], ms=round(result.ms, 1))
        else:
            log.info("post_turn_reflection", status="no_lesson" if result.status != "skipped" else "skipped",
                     trajectory_id=trajectory_id, reason=result.reason, ms=round(result.ms, 1))

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for the reflections in flight (tests, benchmarks); those still running after `timeout` stay."""
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=timeout)


def build_reflection(services: AgentServices, gate: ModelGate | None = None) -> ReflectionScheduler | None:
    """The daemon's reflection from its settings (None with `--no-reflection`): a Reflector on the turn's
    backend with the composite sink (the lesson store is read when a lesson is stored: it opens later)."""
    settings = services.settings
    if not settings.learning.reflection:
        return None
    collector = services.collector
    reflector = Reflector(
        services.backend,
        sink=CompositeSink(collector if collector.enabled else None, lambda: services.memory),
        collector=collector,
        model=settings.backend.model,
        per_call_timeout_s=settings.learning.reflection_timeout_s,
        max_tokens=settings.learning.reflection_max_tokens,
        batch=settings.learning.reflection_batch,
        lookback_h=settings.learning.reflection_lookback_h,
        gate=gate,
    )
    return ReflectionScheduler(reflector, collector)


__all__ = ["ReflectionScheduler", "build_reflection"]
