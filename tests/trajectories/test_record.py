"""The `ghost.trajectory.v1` record: round trips, forward compatibility, and rejection of bad records."""

from __future__ import annotations

from datetime import timezone

import orjson
import pytest

from ghost_agent.trajectories.record import (
    SCHEMA,
    UNKNOWN_KEY,
    Outcome,
    Source,
    Step,
    Trajectory,
    new_trajectory_id,
    parse_ts,
)
from tests.trajectories.trajhelp import make_traj


def test_round_trip_through_dict_and_json() -> None:
    traj = make_traj(
        outcome=Outcome.FAILED,
        failure_reason="tool error",
        router={"decision": "agent", "p": 0.8, "model": "m"},
        planning_output="1. ls",
        verifier={"verdict": "REFUTED", "confidence": 0.9, "note": "wrong"},
        cluster="files",
        usage={"prompt_tokens": 10},
        timing_ms={"total": 120.0},
        extra={"turn": 3},
    )
    traj.steps[1].prm_score = 0.25
    assert Trajectory.from_dict(traj.to_dict()) == traj
    assert Trajectory.from_json(traj.to_json()) == traj
    assert Trajectory.from_json(traj.to_json().decode()) == traj


def test_required_fields_and_schema_tag() -> None:
    data = make_traj().to_dict()
    assert data["schema"] == SCHEMA
    for key in ("id", "session_id", "ts", "source", "user_request", "steps", "final_response", "outcome",
                "failure_reason", "extra"):
        assert key in data
    assert data["outcome"] == "unknown" and data["source"] == "chat"
    assert set(data["steps"][0]) == {"i", "description", "tool_name", "tool_args", "ok", "error",
                                     "result_preview", "duration_ms"}


def test_optional_fields_are_omitted_when_unset() -> None:
    data = make_traj().to_dict()
    for key in ("router", "planning_output", "verifier", "cluster", "usage", "timing_ms"):
        assert key not in data
    assert "prm_score" not in data["steps"][0]


def test_unknown_fields_from_a_newer_writer_are_preserved() -> None:
    data = make_traj().to_dict()
    data["schema"] = "ghost.trajectory.v2"
    data["novelty"] = {"score": 0.7}
    data["steps"][0]["screenshot"] = "sha256:abc"
    traj = Trajectory.from_dict(data)
    assert traj.extra[UNKNOWN_KEY] == {"novelty": {"score": 0.7}}
    assert traj.steps[0].extra[UNKNOWN_KEY] == {"screenshot": "sha256:abc"}
    again = traj.to_dict()
    assert again["novelty"] == {"score": 0.7}
    assert again["steps"][0]["screenshot"] == "sha256:abc"
    assert UNKNOWN_KEY not in again["extra"]


def test_ids_are_uuid4_hex_and_unique() -> None:
    ids = {new_trajectory_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert Trajectory().id != Trajectory().id


@pytest.mark.parametrize(
    ("ts", "day"),
    [
        ("2026-04-26T23:30:00-02:00", "2026-04-27"),  # late evening west of UTC is tomorrow in UTC
        ("2026-04-27T01:00:00+05:00", "2026-04-26"),
        ("2026-04-26T10:00:00Z", "2026-04-26"),
        ("2026-04-26T10:00:00", "2026-04-26"),  # naive is taken as UTC
    ],
)
def test_day_is_the_utc_day(ts: str, day: str) -> None:
    assert make_traj(ts).day == day
    assert parse_ts(ts).tzinfo == timezone.utc


@pytest.mark.parametrize(
    "data",
    [
        {"schema": "ghost.prm.logreg.v1", "id": "a"},
        {"schema": 3, "id": "a"},
        {"schema": SCHEMA},
        {"schema": SCHEMA, "id": ""},
    ],
)
def test_bad_records_are_rejected(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Trajectory.from_dict(data)


@pytest.mark.parametrize("line", [b"[1, 2]", b'"text"', b"null"])
def test_a_line_that_is_not_an_object_is_rejected(line: bytes) -> None:
    with pytest.raises(ValueError):
        Trajectory.from_json(line)


def test_garbage_json_raises_a_value_error() -> None:
    with pytest.raises(ValueError):
        Trajectory.from_json(b'{"schema": "ghost.trajectory.v1", "id": "a"')
    assert issubclass(orjson.JSONDecodeError, ValueError)


def test_outcome_parse_is_lenient_and_source_values() -> None:
    assert Outcome.parse("FAILED") is Outcome.FAILED
    assert Outcome.parse(Outcome.PASSED) is Outcome.PASSED
    assert Outcome.parse("maybe") is Outcome.UNKNOWN
    assert Outcome.parse(None) is Outcome.UNKNOWN
    assert {s.value for s in Source} == {"chat", "self_play", "eval", "reflection", "self_consistency"}


def test_tool_args_that_are_not_an_object_are_wrapped() -> None:
    step = Step.from_dict({"i": 0, "tool_args": "ls"})
    assert step.tool_args == {"value": "ls"}
    assert Step.from_dict({"i": 1, "tool_args": None}).tool_args == {}
