"""The lesson quality rules, one test (or group) per rule: scoped to the kind of task, never a global
prohibition, transient failures never blame a tool, no secrets (the store's redaction)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.memory.store import SkillMemory
from ghost_agent.reflection.parse import LessonDraft
from ghost_agent.reflection.quality import is_generic_task, request_kind, transient_failure, vet_lesson
from ghost_agent.trajectories.record import Trajectory
from tests.reflection.helpers import THREE_WORDS, failed, step

SOURCE = failed()


# ---- rule 1: a lesson is scoped to the kind of task it came from ----------------------------------------


@pytest.mark.parametrize("task", ["", "any task", "All requests", "coding", "general", "answering questions",
                                  "in every task", "tasks"])
def test_a_generic_task_is_rewritten_from_the_request(task: str) -> None:
    vetted = vet_lesson(LessonDraft(task, "added a word", "Reply with only the requested words."), SOURCE)
    assert vetted.lesson is not None
    assert vetted.lesson.task.startswith("requests like: Reply with three words exactly")
    assert any("generic task" in n for n in vetted.notes)


def test_a_specific_task_is_kept() -> None:
    draft = LessonDraft("replying with exactly three given words", "added a word", "Reply with only those words.")
    vetted = vet_lesson(draft, SOURCE)
    assert vetted.lesson == draft and vetted.notes == ()


def test_a_task_sharing_no_word_with_the_request_gets_the_request_appended() -> None:
    vetted = vet_lesson(LessonDraft("terse output formatting", "chatty", "Answer with the bare result."), SOURCE)
    assert vetted.lesson is not None
    assert vetted.lesson.task.startswith("terse output formatting (e.g. Reply with three words exactly")


def test_generic_task_detection() -> None:
    assert is_generic_task("any task") and is_generic_task("sql") and is_generic_task("  ")
    assert not is_generic_task("counting lines of code in a project")
    assert request_kind("Count the lines. Then tell me.") == "requests like: Count the lines."


def test_a_scoped_lesson_is_retrieved_for_similar_requests_and_not_unrelated_ones(tmp_path: Path) -> None:
    # The model's lesson named no kind of task at all: the rewrite scopes it to the request it came from.
    vetted = vet_lesson(LessonDraft("any task", "added extra words around the answer",
                                    "Reply with exactly the requested words and nothing else."), SOURCE)
    assert vetted.lesson is not None
    with SkillMemory(tmp_path / "lessons.db") as memory:
        memory.learn_lesson(vetted.lesson.task, vetted.lesson.mistake, vetted.lesson.solution,
                            source_trajectory_id=SOURCE.id, session_id="s1", source="reflection")
        similar = memory.search("Reply with three words exactly: apple banana cherry", session="s1")
        unrelated = memory.search("use python to compute the sum of the squares of 1..100", session="s1")
        other = memory.search("what is the capital of France?", session="s1")
    assert [h.lesson.source_trajectory_id for h in similar] == [SOURCE.id]
    assert unrelated == [] and other == []


# ---- rule 2: never a global prohibition -------------------------------------------------------------------


@pytest.mark.parametrize("solution", ["Never use python.", "Don't use any tools.", "Avoid the bash tool.",
                                      "Stop calling tools!", "You should not rely on scripts."])
def test_a_bare_tool_ban_is_rejected(solution: str) -> None:
    vetted = vet_lesson(LessonDraft("replying with three words", "ran python", solution), SOURCE)
    assert vetted.lesson is None and vetted.reason.startswith("global prohibition")


def test_a_ban_is_cut_out_and_the_positive_part_kept() -> None:
    vetted = vet_lesson(LessonDraft("replying with three words", "ran python",
                                    "Never use python. Reply with the three words only."), SOURCE)
    assert vetted.lesson is not None and vetted.lesson.solution == "Reply with the three words only."
    vetted = vet_lesson(LessonDraft("replying with three words", "ran code", "Don't run code, just answer."), SOURCE)
    assert vetted.lesson is not None and vetted.lesson.solution == "just answer."


def test_universal_rules_are_dropped_but_formatting_advice_is_not_a_ban() -> None:
    draft = LessonDraft("replying with three words", "wrapped the words in a code block",
                        "In every task, always answer in JSON. Do not use code fences; write the words on one line.")
    vetted = vet_lesson(draft, SOURCE)
    assert vetted.lesson is not None
    assert vetted.lesson.solution == "Do not use code fences; write the words on one line."
    assert any("universal rule" in n for n in vetted.notes)


def test_a_global_task_with_a_ban_is_neither_global_nor_a_ban() -> None:
    vetted = vet_lesson(LessonDraft("all requests", "used python", "Never use python for anything."), SOURCE)
    assert vetted.lesson is None


# ---- rule 3: transient failures never produce "avoid tool X" lessons -------------------------------------


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        ("python: timed out after 30.0 s; make it faster, print progress, or work on less data", "timeout"),
        ("python: out of memory (limit 512 MB); process the data in smaller pieces", "memory limit"),
        ("bash: killed by signal 9", "memory limit"),
        ("upstream returned 503 Service Unavailable", "upstream error"),
    ],
)
def test_transient_step_failures_are_detected(error: str, cause: str) -> None:
    traj = failed(steps=[step(0, ok=False, error=error), step(1)])
    found = transient_failure(traj)
    assert found is not None and found.startswith(cause)


def test_a_backend_error_is_transient() -> None:
    traj = failed(failure_reason="backend error 502: upstream unreachable", extra={"backend_error": {"status": 502}})
    assert transient_failure(traj) == "upstream error: backend error 502: upstream unreachable"


@pytest.mark.parametrize(
    "traj",
    [
        failed(),  # no failing step: the answer itself was wrong
        failed(steps=[step(0, ok=False, error="python: exited with code 1", preview="NameError: name 'x'")]),
        failed(steps=[step(0, ok=False, error="python: timed out after 30.0 s"),
                      step(1, ok=False, error="python: exited with code 1")]),  # one real failure
    ],
)
def test_real_failures_are_not_transient(traj: Trajectory) -> None:
    assert transient_failure(traj) is None


def test_after_a_transient_failure_tool_avoidance_is_dropped() -> None:
    draft = LessonDraft("summing a large csv column", "python timed out",
                        "Use bash instead of python. Read the file in chunks and print the running total.")
    vetted = vet_lesson(draft, failed("sum the price column of big.csv"), transient="timeout: python timed out")
    assert vetted.lesson is not None
    assert vetted.lesson.solution == "Read the file in chunks and print the running total."
    only_blame = vet_lesson(LessonDraft("summing a csv column", "python timed out", "Use bash instead of python."),
                            failed("sum the price column of big.csv"), transient="timeout")
    assert only_blame.lesson is None and only_blame.reason.startswith("transient failure (timeout)")


def test_without_a_transient_failure_a_tool_choice_may_stand() -> None:
    draft = LessonDraft("listing files in the workspace", "wrote python", "Use bash instead of python: ls -la.")
    vetted = vet_lesson(draft, failed("list the files in the workspace"))
    assert vetted.lesson is not None and "instead of python" in vetted.lesson.solution


# ---- rule 4: no secrets (the store redacts; the rules do not need to) -------------------------------------


def test_the_store_redacts_what_the_rules_let_through(tmp_path: Path) -> None:
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    draft = LessonDraft("calling the weather api", f"used the key {key} inline",
                        f"Read the key from the environment, not {key}; keep /home/alice/notes.txt private.")
    vetted = vet_lesson(draft, failed("call the weather api with my key"))
    assert vetted.lesson is not None and key in vetted.lesson.solution  # vetting is not redaction ...
    with SkillMemory(tmp_path / "lessons.db") as memory:
        stored = memory.learn_lesson(vetted.lesson.task, vetted.lesson.mistake, vetted.lesson.solution,
                                     source_trajectory_id="t", session_id="s1").lesson
    assert key not in stored.mistake + stored.solution  # ... the store is
    assert "alice" not in stored.solution


def test_vetting_never_raises_on_odd_input() -> None:
    vetted = vet_lesson(LessonDraft("", "", "..."), failed(""))
    assert vetted.lesson is None
    assert vet_lesson(LessonDraft("", "", "Do the thing properly."), failed("")).lesson is None
    assert THREE_WORDS  # the helpers' request is the seed's


def test_the_programs_own_output_does_not_make_a_failure_transient() -> None:
    printed = failed(steps=[step(0, ok=False, error="python: exited with code 1",
                                 preview="status 503 from the mock\nTimeoutError: my own timeout\n[exit code 1]")])
    assert transient_failure(printed) is None
    killed = failed(steps=[step(0, ok=False, error=None, preview="partial output\n[killed: timed out after 5.0 s]")])
    assert transient_failure(killed) == "timeout: partial output [killed: timed out after 5.0 s]"
