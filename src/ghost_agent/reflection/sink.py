"""The composite sink: what closes the loop. A reflection is stored twice, and neither store may break it.

1. its lesson → `SkillMemory.learn_lesson(task, mistake, solution, source_trajectory_id=reflected_from,
   session_id=<the corrected turn's session>, source=record.lesson_source)` ("reflection" for a critique's
   lesson, "preference" for the user's stated preference, `memory/preference.py`): provenance is the
   FAILED turn's id (not the reflection's), so the lesson is retracted together with anything else that turn
   taught if it is ever judged wrong again; the session decides who is shown it (the store's visibility rule);
2. the reflection itself → the trajectory store (source `reflection`, `extra.reflected_from`, and
   `extra.lesson_id` once the lesson is stored), which is also how the backstop knows after a restart that
   the failure was already reflected on.

Secrets: both stores redact on write (`learn_lesson` and `TrajectoryCollector.append`); the sink adds no
path around them. Each store's failure is logged (`reflection_sink_failed`) and swallowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ghost_agent.logging import get_logger
from ghost_agent.reflection.reflector import ReflectionRecord
from ghost_agent.trajectories.collector import TrajectoryCollector

if TYPE_CHECKING:
    from ghost_agent.memory.store import SkillMemory

log = get_logger("reflection.sink")

LESSON_SOURCE = "reflection"  # how the lesson was learned, as the lesson store records it


class CompositeSink:
    """Lesson into SkillMemory, reflection into the trajectory store. `memory` is read at call time (the
    lesson store opens in the lifespan and may be missing)."""

    def __init__(self, collector: TrajectoryCollector | None, memory: Callable[[], SkillMemory | None]) -> None:
        self.collector = collector
        self.memory = memory

    async def __call__(self, record: ReflectionRecord) -> str | None:
        """Store the lesson (if any), then the reflection record; returns the stored lesson's id or None."""
        lesson_id: str | None = None
        lesson = record.lesson
        if lesson is not None:
            memory = self.memory()
            if memory is None:
                log.warning("reflection_sink_failed", part="lesson", reflected_from=record.reflected_from,
                            error="no lesson store")
            else:
                try:
                    result = await memory.alearn_lesson(
                        lesson.task, lesson.mistake, lesson.solution, source_trajectory_id=record.reflected_from,
                        session_id=record.session_id, source=record.lesson_source or LESSON_SOURCE,
                    )
                    lesson_id = result.lesson.id
                    record.trajectory.extra["lesson_id"] = lesson_id
                    record.trajectory.extra["lesson_created"] = result.created
                except Exception as exc:  # noqa: BLE001 - a store failure costs this lesson, nothing else
                    log.warning("reflection_sink_failed", part="lesson", reflected_from=record.reflected_from,
                                error_type=type(exc).__name__, error=str(exc)[:300])
        if self.collector is not None:
            try:
                await self.collector.aappend(record.trajectory)
            except Exception as exc:  # noqa: BLE001
                log.warning("reflection_sink_failed", part="trajectory", reflected_from=record.reflected_from,
                            error_type=type(exc).__name__, error=str(exc)[:300])
        return lesson_id


__all__ = ["CompositeSink"]
