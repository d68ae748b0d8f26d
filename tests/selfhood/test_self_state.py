"""The self-state from a synthetic store: pass/fail per task kind, route and source (corrections overlaid),
strengths and weaknesses, and nothing but fixed labels and numbers in it."""

from __future__ import annotations

from pathlib import Path

import orjson

from ghost_agent.home import GhostHome
from ghost_agent.selfhood.self_state import SelfStateBuilder, Tally, task_kind
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome
from tests.skills_auto.helpers import LIST, READ, turn, write

CODE = "write a python function that reverses a string"
FILES = "summarise the columns of sales.csv in my workspace"
SUM = "what is 15% of 2340 dollars"


def synthetic_store(home: Path) -> list[str]:
    turns = (
        [turn([], Outcome.PASSED, CODE, kind="code") for _ in range(4)]
        + [turn([], Outcome.FAILED, CODE, kind="code")]
        + [turn([LIST, READ], Outcome.FAILED, FILES, route="agent") for _ in range(3)]
        + [turn([LIST, READ], Outcome.PASSED, FILES)]
        + [turn([], Outcome.UNKNOWN, "hi", route="fast") for _ in range(5)]
        + [turn([], Outcome.PASSED, SUM, route="fast", source="self_play") for _ in range(2)]
        + [turn([], Outcome.FAILED, "critique", source="reflection")]  # not a task: not counted
    )
    ids = write(home, turns)
    # A user said the last code turn was wrong, and a verifier later passed one files turn.
    write(home, [], [(ids[3], Outcome.FAILED, "user_correction"), (ids[5], Outcome.PASSED, "verifier")])
    return ids


def test_self_state_counts_per_kind_route_and_source(tmp_path: Path) -> None:
    synthetic_store(tmp_path / "home")
    builder = SelfStateBuilder()
    with TrajectoryCollector(GhostHome(tmp_path / "home").trajectories) as collector:
        kinds = [builder.add(t) for t in collector.iter_trajectories()]
    assert kinds.count(None) == 1  # the reflection record
    state = builder.build(computed_at="2026-01-02T00:00:00+00:00", window_days=30, lessons={"active": 2},
                          models={"prm": None, "router": "abc"})
    assert state["overall"] == {"total": 16, "passed": 7, "failed": 4, "unknown": 5, "pass_rate": 0.636}
    assert state["by_kind"] == {
        "code": {"total": 5, "passed": 3, "failed": 2, "unknown": 0, "pass_rate": 0.6},
        "files": {"total": 4, "passed": 2, "failed": 2, "unknown": 0, "pass_rate": 0.5},
        "general": {"total": 5, "passed": 0, "failed": 0, "unknown": 5, "pass_rate": None},
        "quantitative": {"total": 2, "passed": 2, "failed": 0, "unknown": 0, "pass_rate": None},
    }
    assert state["by_route"]["fast"]["total"] == 7 and state["by_route"]["agent"]["total"] == 9
    assert state["by_source"] == {
        "chat": {"total": 14, "passed": 5, "failed": 4, "unknown": 5, "pass_rate": 0.556},
        "self_play": {"total": 2, "passed": 2, "failed": 0, "unknown": 0, "pass_rate": None},
    }
    assert state["strengths"] == [] and state["weaknesses"] == []  # 0.6 and 0.5: neither strong nor weak
    assert state["lessons"] == {"active": 2} and state["models"] == {"prm": None, "router": "abc"}
    text = orjson.dumps(state).decode()
    for request in (CODE, FILES, SUM, "critique"):
        assert request not in text  # labels and numbers only


def test_strengths_and_weaknesses_need_enough_judged_turns() -> None:
    builder = SelfStateBuilder()
    for outcome in [Outcome.PASSED] * 4:
        builder.add(turn([], outcome, CODE, kind="code"))
    for outcome in [Outcome.FAILED] * 3 + [Outcome.PASSED]:
        builder.add(turn([LIST, READ], outcome, FILES))
    for outcome in [Outcome.FAILED] * 2:
        builder.add(turn([], outcome, SUM))  # 2 judged: too few to call it a weakness
    state = builder.build(computed_at="t", window_days=7)
    assert state["strengths"] == ["code"] and state["weaknesses"] == ["files"]
    assert state["by_kind"]["quantitative"]["pass_rate"] is None
    assert Tally(passed=1, failed=1).pass_rate is None and Tally(passed=2, failed=1).pass_rate == 0.667


def test_the_kind_is_the_turns_own_label_else_the_request_classified() -> None:
    assert task_kind(turn([], Outcome.PASSED, "anything", kind="quantitative")) == "quantitative"
    assert task_kind(turn([], Outcome.PASSED, CODE)) == "code"
    assert task_kind(turn([], Outcome.PASSED, SUM, kind="bogus")) == "quantitative"
    assert task_kind(turn([], Outcome.PASSED, "hello there")) == "general"
