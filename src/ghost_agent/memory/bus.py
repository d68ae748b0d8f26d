"""The memory bus's formatting: retrieved lessons as one bounded, stable block of the system prompt.

Stable means the same lessons always render to the same bytes (no timestamps, no scores), so the part of
the prompt after the fixed prefix only changes when the lessons do. Bounded means the block never exceeds
`max_chars`: each lesson is squashed onto one line and clipped to an equal share of the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ghost_agent.memory.lessons import Lesson, ScoredLesson

HEADER = "Lessons from earlier turns (apply when relevant):"
MAX_CHARS = 1500
LESSON_CHARS = 500  # no single lesson takes more than this, however much room is left
MIN_LESSON_CHARS = 60  # below this a clipped lesson says nothing; fewer lessons are shown instead
ELLIPSIS = "..."

LessonLike = Lesson | ScoredLesson


@dataclass(frozen=True)
class LessonsBlock:
    """The rendered block and the lessons it actually shows (a prefix of the input, in order)."""

    text: str
    shown: tuple[LessonLike, ...]


def build_lessons_block(lessons: Sequence[LessonLike], *, max_chars: int = MAX_CHARS) -> LessonsBlock:
    """Render `lessons` (best first) as a numbered block of at most `max_chars` characters.

    Each line is "N. When <task>: <mistake> -> <solution>" ("N. When <task>: <solution>" when the mistake is
    empty), whitespace squashed, each lesson clipped to min(`LESSON_CHARS`, an equal share of the budget).
    Trailing lessons are dropped only when a share would fall below `MIN_LESSON_CHARS`. No lessons, or no
    room for even one, gives an empty block.
    """
    count = len(lessons)
    while count > 0:
        share = (max_chars - len(HEADER) - count) // count  # `count` newlines: one before each entry
        if share >= MIN_LESSON_CHARS:
            break
        count -= 1
    if count == 0:
        return LessonsBlock(text="", shown=())
    share = min(LESSON_CHARS, share)
    shown = tuple(lessons[:count])
    lines = [HEADER] + [_entry(i, _lesson(item), share) for i, item in enumerate(shown, 1)]
    return LessonsBlock(text="\n".join(lines), shown=shown)


def format_lessons_block(lessons: Sequence[LessonLike], *, max_chars: int = MAX_CHARS) -> str:
    """The text of `build_lessons_block` ("" for no lessons)."""
    return build_lessons_block(lessons, max_chars=max_chars).text


def lesson_refs(lessons: Sequence[LessonLike]) -> list[dict[str, Any]]:
    """What the trajectory records about shown lessons: id, score (None for a bare Lesson), provenance."""
    refs: list[dict[str, Any]] = []
    for item in lessons:
        lesson = _lesson(item)
        refs.append({
            "id": lesson.id,
            "score": item.score if isinstance(item, ScoredLesson) else None,
            "source_trajectory_id": lesson.source_trajectory_id,
        })
    return refs


def _entry(index: int, lesson: Lesson, limit: int) -> str:
    prefix = f"{index}. When "
    room = limit - len(prefix)
    # The task and the mistake each get at most a third so the solution - the actionable part - survives.
    task = _clip(_squash(lesson.task), max(room // 3, 8))
    mistake = _clip(_squash(lesson.mistake), max(room // 3, 8)) if lesson.mistake.strip() else ""
    solution = _squash(lesson.solution)
    body = f"{task}: {mistake} -> {solution}" if mistake else f"{task}: {solution}"
    return _clip(prefix + body, limit)


def _lesson(item: LessonLike) -> Lesson:
    return item.lesson if isinstance(item, ScoredLesson) else item


def _squash(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS


__all__ = ["HEADER", "LessonsBlock", "build_lessons_block", "format_lessons_block", "lesson_refs"]
