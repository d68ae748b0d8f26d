"""The critique reply parser: every shape a small model answers in, and the reasons nothing was learned."""

from __future__ import annotations

import pytest

from ghost_agent.reflection.parse import (
    DECLINED,
    EMPTY,
    NO_SOLUTION,
    SOLUTION_CHARS,
    UNPARSEABLE,
    LessonDraft,
    NoLesson,
    parse_lesson,
)

LESSON = LessonDraft(
    task="replying with an exact list of words",
    mistake="added an extra word",
    solution="Reply with exactly the words asked for, nothing else.",
)


@pytest.mark.parametrize(
    "reply",
    [
        '{"task": "replying with an exact list of words", "mistake": "added an extra word", '
        '"solution": "Reply with exactly the words asked for, nothing else."}',
        'Here is my analysis.\n```json\n{"task": "replying with an exact list of words",\n'
        '"mistake": "added an extra word",\n"solution": "Reply with exactly the words asked for, nothing else."}\n```',
        'Sure! {"task": "replying with an exact list of words", "mistake": "added an extra word", '
        '"solution": "Reply with exactly the words asked for, nothing else."} Hope this helps.',
        '{"lesson": {"Task": "replying with an exact list of words", "What went wrong": "added an extra word", '
        '"fix": "Reply with exactly the words asked for, nothing else."}}',
        '[{"request_kind": "replying with an exact list of words", "diagnosis": "added an extra word", '
        '"plan": "Reply with exactly the words asked for, nothing else."}]',
        "Task: replying with an exact list of words\nMistake: added an extra word\n"
        "Solution: Reply with exactly the words asked for, nothing else.",
        "**Task:** replying with an exact list of words\n**Mistake:** added an extra word\n"
        "**Solution:** Reply with exactly the words asked for, nothing else.",
        "Lesson:\n- **Task**: replying with an exact list of words\n- **Mistake**: added an extra word\n"
        "- **Solution**: Reply with exactly the words asked for,\n  nothing else.",
        "```\nTASK = replying with an exact list of words\nMISTAKE = added an extra word\n"
        "SOLUTION = Reply with exactly the words asked for, nothing else.\n```",
        "  ```text\nTask: replying with an exact list of words\nMistake: added an extra word\n"
        "Solution: Reply with exactly the words asked for, nothing else.\n  ```",
        "1. Task - replying with an exact list of words\n2. Mistake - added an extra word\n"
        "3. Solution - \"Reply with exactly the words asked for, nothing else.\"",
    ],
    ids=["json", "fenced", "prose-wrapped", "nested-aliases", "list-aliases", "labels", "bold-labels",
         "bullets-continued", "fenced-labels", "indented-fence", "numbered-dashes"],
)
def test_every_shape_gives_the_same_lesson(reply: str) -> None:
    assert parse_lesson(reply) == LESSON


def test_whitespace_is_squashed_and_long_fields_are_clipped() -> None:
    parsed = parse_lesson('{"task": "  a\\n  b  task ", "mistake": "m", "solution": "' + "word " * 400 + '"}')
    assert isinstance(parsed, LessonDraft)
    assert parsed.task == "a b task"
    assert len(parsed.solution) <= SOLUTION_CHARS + 3 and parsed.solution.endswith("...")


def test_missing_mistake_and_task_still_give_a_draft() -> None:
    assert parse_lesson('{"solution": "List the directory first."}') == LessonDraft("", "", "List the directory first.")
    assert parse_lesson('{"lesson": "When a file is missing, list the directory first."}') == LessonDraft(
        "", "", "When a file is missing, list the directory first."
    )


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", EMPTY),
        ("   \n ", EMPTY),
        ('{"lesson": null}', DECLINED),
        ("null", DECLINED),
        ("NO LESSON: the answer was fine.", DECLINED),
        ('{"task": "x y", "mistake": "something"}', NO_SOLUTION),
        ('{"task": "x y", "mistake": "m", "solution": "none"}', NO_SOLUTION),
        ("Task: sorting lists\nMistake: wrong order", NO_SOLUTION),
        ("I think the assistant did fine overall and the user was happy.", UNPARSEABLE),
        ('{"verdict": "REFUTED"}', UNPARSEABLE),
        ("{not json at all", UNPARSEABLE),
    ],
)
def test_no_lesson_reasons(reply: str, reason: str) -> None:
    assert parse_lesson(reply) == NoLesson(reason)


def test_non_string_input_never_raises() -> None:
    assert parse_lesson(None) == NoLesson(EMPTY)
    assert parse_lesson(42) == NoLesson(EMPTY)


def test_a_repeated_label_keeps_the_first_value() -> None:
    parsed = parse_lesson("Task: counting lines of code\nSolution: give the command\nTask: other\nSolution: other")
    assert parsed == LessonDraft("counting lines of code", "", "give the command")
