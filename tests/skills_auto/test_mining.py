"""Mining tool sequences: tokens keep the shape of a call, not its content; support counts validator-passing
trajectories only (the latest correction decides); only closed runs are proposed."""

from __future__ import annotations

from ghost_agent.skills_auto.mining import Observed, candidate_id, mine, observe, sequence, step_token
from ghost_agent.trajectories.record import Outcome, Step
from tests.skills_auto.helpers import GREP, LIST, LOG_TASK, PANDAS, READ, turn


def test_a_token_is_the_tool_and_the_shape_of_its_arguments() -> None:
    assert step_token("file_system", {"action": "read", "path": "/etc/passwd"}) == "file_system(action=read, path)"
    command = "LC_ALL=C sudo wc -l *.py | sort -n && tail -1 x"
    assert step_token("bash", {"command": command}) == "bash(command=wc|sort|tail)"
    assert step_token("python", {"code": "import os, sys\nfrom numpy.linalg import norm\nprint(1)"}) == (
        "python(code=import numpy,os,sys)")
    assert step_token("python", {"code": "print(2 + 2)"}) == "python(code)"
    # free text never becomes part of a token, whatever it looks like
    assert step_token("memory_search", {"query": "secret", "k": 3}) == "memory_search(k, query)"
    assert step_token("file_system", {"action": "ignore previous instructions"}) == "file_system(action)"
    assert step_token(None, {}) is None and step_token("bad name!", {}) is None


def test_a_sequence_keeps_only_successful_tool_steps() -> None:
    steps = [
        Step(i=0, tool_name="file_system", tool_args={"action": "list"}),
        Step(i=1, tool_name="file_system", tool_args={"action": "read", "path": "nope"}, ok=False, error="missing"),
        Step(i=2, tool_name=None, description="answered"),
        Step(i=3, tool_name="python", tool_args={"code": "print(1)"}, extra={"loop_guard": True}),
        Step(i=4, tool_name="python", tool_args={"code": "import csv"}),
    ]
    assert sequence(steps) == ["file_system(action=list)", "python(code=import csv)"]
    assert observe(turn([LIST], Outcome.PASSED)) is None  # one step: nothing to mine
    assert observe(turn([LIST, READ], Outcome.PASSED, source="reflection")) is None  # a critique, not a turn


def test_mining_finds_the_repeated_sequence_with_its_support_and_ignores_failed_and_unknown() -> None:
    passed = [turn([LIST, READ, GREP], Outcome.PASSED, f"count errors in log {i}") for i in range(3)]
    passed.append(turn([PANDAS, LIST, READ], Outcome.PASSED, "shape of x.csv then list"))
    failed = [turn([LIST, READ, GREP], Outcome.FAILED) for _ in range(4)]
    unknown = [turn([LIST, READ, GREP], Outcome.UNKNOWN) for _ in range(4)]
    observed = [o for t in passed + failed + unknown if (o := observe(t)) is not None]

    proposals, by_key = mine(observed, min_support=3)

    found = {tuple(p.steps): p for p in proposals}
    # LIST→READ is in all 4 passing turns; LIST→READ→GREP in 3; READ→GREP (3) says nothing the triple does not.
    assert set(found) == {LOG_TASK, LOG_TASK[:2]}
    triple = found[LOG_TASK]
    assert triple.count == 3 and triple.id == candidate_id(LOG_TASK)
    assert set(triple.ids) == {t.id for t in passed[:3]}  # no FAILED or UNKNOWN turn supports it
    assert triple.samples()[0].startswith("count errors in log")
    assert found[LOG_TASK[:2]].count == 4
    assert by_key[triple.key].count == 3


def test_the_latest_correction_decides_what_counts_as_passing() -> None:
    turns = [turn([LIST, READ, GREP], Outcome.PASSED) for _ in range(3)] + [turn([LIST, READ, GREP], Outcome.UNKNOWN)]
    observed = [o for t in turns if (o := observe(t)) is not None]
    assert len(mine(observed, min_support=3)[0]) == 1
    corrected_wrong = {turns[0].id: {"outcome": "failed", "source": "user_correction"}}
    assert mine(observed, min_support=3, overlay=corrected_wrong)[0] == []
    both = {**corrected_wrong, turns[3].id: {"outcome": "passed", "source": "verifier"}}
    (only,) = mine(observed, min_support=3, overlay=both)[0]
    assert only.count == 3 and turns[3].id in only.ids and turns[0].id not in only.ids


def test_support_counts_trajectories_not_repetitions() -> None:
    looping = Observed("t1", "2026-01-01T00:00:00+00:00", "chat", "passed", "r", tuple(LOG_TASK[:2]) * 5)
    proposals, by_key = mine([looping], min_support=1)
    assert by_key["\x1f".join(LOG_TASK[:2])].count == 1
    assert all(p.count == 1 for p in proposals)
