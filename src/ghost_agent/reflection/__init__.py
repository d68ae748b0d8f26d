"""Reflection: critique FAILED trajectories into lessons (seed 001, "reflect").

`Reflector` (`reflect_one` for one trajectory, `run` for the idle-time backstop) → lenient parsing
(`parse.py`) → the lesson quality rules (`quality.py`) → `CompositeSink` (SkillMemory + the trajectory store).
`ReflectionScheduler` (`agent/stages/reflection_scheduler.py`) wires a user correction to `reflect_one` as a held task.
"""

from __future__ import annotations

from ghost_agent.reflection.parse import LessonDraft, NoLesson, parse_lesson
from ghost_agent.reflection.quality import Vetted, transient_failure, vet_lesson
from ghost_agent.reflection.reflector import (
    STATUS_FAILED,
    STATUS_NO_LESSON,
    STATUS_OK,
    STATUS_SKIPPED,
    TRIGGER_BACKSTOP,
    TRIGGER_CORRECTION,
    ReflectionRecord,
    ReflectionResult,
    Reflector,
)
from ghost_agent.reflection.sink import CompositeSink

__all__ = [
    "STATUS_FAILED",
    "STATUS_NO_LESSON",
    "STATUS_OK",
    "STATUS_SKIPPED",
    "TRIGGER_BACKSTOP",
    "TRIGGER_CORRECTION",
    "CompositeSink",
    "LessonDraft",
    "NoLesson",
    "ReflectionRecord",
    "ReflectionResult",
    "Reflector",
    "Vetted",
    "parse_lesson",
    "transient_failure",
    "vet_lesson",
]
