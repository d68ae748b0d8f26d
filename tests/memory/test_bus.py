"""The lessons block: format, bounds, stability, and the refs the trajectory records."""

from __future__ import annotations

import pytest

from ghost_agent.memory import Lesson, ScoredLesson, build_lessons_block, format_lessons_block, lesson_refs
from ghost_agent.memory.bus import HEADER, LESSON_CHARS, MIN_LESSON_CHARS


def lesson(i: int, *, task: str = "", mistake: str = "m", solution: str = "s", source: str = "") -> Lesson:
    return Lesson(id=f"id{i}", task=task or f"task {i}", mistake=mistake, solution=solution,
                  source_trajectory_id=source)


def test_empty_input_is_empty_block() -> None:
    assert format_lessons_block([]) == ""
    assert build_lessons_block([]).shown == ()


def test_format_of_lines() -> None:
    a = lesson(1, task="count lines of code", mistake="answered with a number", solution="give the command")
    b = lesson(2, task="read a csv", mistake="", solution="pass sep=';'")
    assert format_lessons_block([a, b]) == (
        f"{HEADER}\n"
        "1. When count lines of code: answered with a number -> give the command\n"
        "2. When read a csv: pass sep=';'"
    )


def test_scored_lessons_render_like_lessons() -> None:
    a = lesson(1)
    assert format_lessons_block([ScoredLesson(a, 1.5, 1.0)]) == format_lessons_block([a])


def test_multiline_text_stays_on_one_line_per_lesson() -> None:
    code = "import pandas as pd\n\ndf = pd.read_csv(path,\n    sep=';')\nprint(df)"
    text = format_lessons_block([lesson(1, solution=code), lesson(2)])
    lines = text.split("\n")
    assert len(lines) == 3 and "df = pd.read_csv(path, sep=';') print(df)" in lines[1]


@pytest.mark.parametrize("max_chars", [120, 300, 700, 1500, 4000])
@pytest.mark.parametrize("n", [1, 3, 8, 40])
def test_block_is_bounded_and_stable(max_chars: int, n: int) -> None:
    lessons = [lesson(i, task="t" * 900 + str(i), mistake="m " * 500, solution="s " * 2000) for i in range(n)]
    block = build_lessons_block(lessons, max_chars=max_chars)
    assert len(block.text) <= max_chars
    assert block.text == format_lessons_block(lessons, max_chars=max_chars)  # stable
    lines = block.text.split("\n")[1:] if block.text else []
    assert len(lines) == len(block.shown)
    assert list(block.shown) == lessons[: len(block.shown)]
    assert all(len(line) <= LESSON_CHARS for line in lines)
    assert all(line.endswith("...") for line in lines)  # every one was clipped
    assert all(" -> " in line for line in lines)  # the solution survives the clipping of task and mistake
    if block.shown:
        assert all(len(line) >= MIN_LESSON_CHARS - 3 for line in lines)


def test_too_many_lessons_drops_the_tail_not_the_bound() -> None:
    lessons = [lesson(i, solution="x" * 300) for i in range(50)]
    block = build_lessons_block(lessons, max_chars=1500)
    assert 0 < len(block.shown) < 50 and len(block.text) <= 1500


def test_no_room_gives_empty_block() -> None:
    assert format_lessons_block([lesson(1)], max_chars=len(HEADER) + 10) == ""


def test_lesson_refs() -> None:
    a = lesson(1, source="traj-a")
    b = lesson(2)
    assert lesson_refs([ScoredLesson(a, 2.5, 0.5), b]) == [
        {"id": "id1", "score": 2.5, "source_trajectory_id": "traj-a"},
        {"id": "id2", "score": None, "source_trajectory_id": ""},
    ]
    assert lesson_refs([]) == []
