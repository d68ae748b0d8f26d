"""Skill memory: lessons with provenance (SQLite + FTS5 BM25), retraction by trajectory, the prompt block."""

from __future__ import annotations

from ghost_agent.memory.bus import LessonsBlock, build_lessons_block, format_lessons_block, lesson_refs
from ghost_agent.memory.lessons import LearnResult, Lesson, ScoredLesson, lesson_tokens
from ghost_agent.memory.store import SkillMemory, SkillMemoryError

__all__ = [
    "LearnResult",
    "Lesson",
    "LessonsBlock",
    "ScoredLesson",
    "SkillMemory",
    "SkillMemoryError",
    "build_lessons_block",
    "format_lessons_block",
    "lesson_refs",
    "lesson_tokens",
]
