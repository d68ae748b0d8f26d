"""Phase 2.5, reflection backstop (idle 900–3600 s, every 40 min): reflect on the failures nobody corrected.

A user correction reflects on the turn it corrected at once (`agent/stages/reflection_scheduler.py`). Everything else
that FAILED — a verifier's refutation, a heuristic, a correction whose real-time reflection was cut short by a
shutdown — waits for this phase: `Reflector.run(--reflection-batch)` over recent FAILED trajectories not yet
reflected, newest first. It shares the real-time path's "already reflected" set (and reads the reflection
records on disk), so each trajectory is reflected once whichever path reaches it first.

Every critique is a model call through the app's model gate at low priority without waiting (the Reflector
holds `ctx.model_gate`): a user request arriving mid-critique cancels it and the phase ends as `yielded`
(the trajectory stays unreflected, for the next pass). With `--no-reflection` the phase skips, saying so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ghost_agent.reflection.reflector import STATUS_OK
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing

DEFAULT_BATCH = 5


class ReflectionPhase(Phase):
    """`Reflector.run(batch)`: the reflection backstop over recent FAILED trajectories."""

    name = "reflection"
    title = "reflection backstop"

    def __init__(self, timing: Timing, *, key: str = "", batch: int = DEFAULT_BATCH) -> None:
        super().__init__(timing, key=key)
        self.batch = batch

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """One backstop pass; `ModelPreempted` (a user arrived) propagates and the watchdog records `yielded`."""
        reflector = ctx.app.reflector
        if reflector is None:
            return PhaseResult.skipped("reflection is off (--no-reflection)")
        if reflector.collector is None:
            return PhaseResult.skipped("no trajectory store to reflect on")
        ctx.check_yield()
        results = await reflector.run(self.batch)
        figures: dict[str, Any] = {
            "reflected": len(results),
            "lessons": sum(1 for r in results if r.status == STATUS_OK and r.lesson_id),
        }
        for status, count in sorted(Counter(r.status for r in results).items()):
            figures[f"status_{status}"] = count  # ok / no_lesson / skipped / failed
        return PhaseResult("ok", "", figures)


__all__ = ["ReflectionPhase"]
