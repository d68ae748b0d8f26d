"""The store never loses a record to its content, bounds its files per day, and rejects records with odd ids."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ghost_agent.agent.stages.record import RecordTrajectory
from ghost_agent.agent.turn import Turn
from ghost_agent.trajectories.collector import OVERFLOW_FILE, TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory
from tests.trajectories.trajhelp import make_traj

TS = "2026-04-26T10:00:00+00:00"
DAY = "2026-04-26"


def day_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / DAY).iterdir())


# ---------------------------------------------------------------- unwritable content is repaired, not dropped


def test_a_record_with_lone_surrogates_is_written_sanitized(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path)
    traj = make_traj(TS, session="\udc00evil", request="hi \ud800", extra={"n": 2**70, "deep": [[[[]]]]})
    collector.append(traj)  # used to raise UnicodeEncodeError: the record was lost
    (back,) = list(collector.iter_trajectories())
    assert back.id == traj.id
    assert back.user_request == "hi \ufffd"
    assert back.session_id == "\ufffdevil"
    assert back.extra["n"] == str(2**70)
    assert back.extra["sanitized"] is True
    assert collector.corrupt_lines == 0


def test_a_clean_record_is_written_as_it_is(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path)
    collector.append(make_traj(TS, request="héllo \N{GRINNING FACE}"))
    (back,) = list(collector.iter_trajectories())
    assert back.user_request == "héllo \N{GRINNING FACE}"
    assert "sanitized" not in back.extra


def test_a_redactor_that_still_fails_writes_nothing(tmp_path: Path) -> None:
    def broken(record: dict[str, object]) -> dict[str, object]:
        raise ValueError("redactor bug")

    collector = TrajectoryCollector(tmp_path, redactor=broken)
    with pytest.raises(ValueError, match="redactor bug"):
        collector.append(make_traj(TS))
    assert not (tmp_path / DAY).exists()  # never an unredacted line


def test_a_correction_reason_with_a_lone_surrogate_is_kept(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path)
    traj = make_traj(TS)
    collector.append(traj)
    collector.update_outcome(traj.id, "failed", "wrong \ud800", source="user_correction")
    (back,) = list(collector.iter_trajectories())
    assert back.outcome.value == "failed"
    assert back.failure_reason == "wrong \ufffd"


async def test_the_record_finisher_keeps_a_turn_whose_user_had_a_lone_surrogate(tmp_path: Path) -> None:
    """The reported loss: `user` = a lone surrogate became the session id, and the finisher raised."""
    collector = TrajectoryCollector(tmp_path)
    turn = Turn(body={"messages": [{"role": "user", "content": "hi \udfff"}]}, session_id="\ud800")
    turn.trajectory_id = "a" * 32
    turn.response = {"choices": [{"message": {"role": "assistant", "content": "hello \ud800"}}]}
    await RecordTrajectory(collector).finish(turn, None)
    (back,) = list(collector.iter_trajectories())
    assert (back.id, back.session_id, back.user_request, back.final_response) == (
        "a" * 32, "\ufffd", "hi \ufffd", "hello \ufffd"
    )


# ---------------------------------------------------------------- bounded session files per day


def test_sessions_beyond_the_cap_share_the_overflow_file(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path, max_session_files=2)
    sessions = ["a", "b", "c", "d", "a", "c"]
    for s in sessions:
        collector.append(make_traj(TS, session=s))
    assert day_files(tmp_path) == sorted(["session-a.jsonl", "session-b.jsonl", OVERFLOW_FILE])
    # Nothing is lost and every record keeps its own session id.
    assert sorted(t.session_id for t in collector.iter_trajectories()) == sorted(sessions)
    overflow = [orjson.loads(x)["session_id"] for x in (tmp_path / DAY / OVERFLOW_FILE).read_bytes().splitlines()]
    assert overflow == ["c", "d", "c"]


def test_the_cap_counts_the_files_already_on_disk(tmp_path: Path) -> None:
    first = TrajectoryCollector(tmp_path, max_session_files=2)
    first.append(make_traj(TS, session="a"))
    first.append(make_traj(TS, session="b"))
    first.close()
    again = TrajectoryCollector(tmp_path, max_session_files=2)  # a restarted daemon
    again.append(make_traj(TS, session="c"))
    again.append(make_traj(TS, session="a"))
    assert day_files(tmp_path) == sorted(["session-a.jsonl", "session-b.jsonl", OVERFLOW_FILE])
    assert len(list(again.iter_trajectories())) == 4


def test_the_cap_is_per_day(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path, max_session_files=1)
    collector.append(make_traj("2026-04-26T10:00:00+00:00", session="a"))
    collector.append(make_traj("2026-04-27T10:00:00+00:00", session="b"))
    assert (tmp_path / "2026-04-27" / "session-b.jsonl").exists()
    assert not (tmp_path / "2026-04-27" / OVERFLOW_FILE).exists()


# ---------------------------------------------------------------- the reader


@pytest.mark.parametrize("bad_id", [123, ["x"], {"a": 1}, True, 1.5])
def test_a_record_whose_id_is_not_a_string_is_skipped_as_corrupt(tmp_path: Path, bad_id: object) -> None:
    collector = TrajectoryCollector(tmp_path)
    good = make_traj(TS)
    collector.append(good)
    forged = {**good.to_dict(), "id": bad_id}
    with (tmp_path / DAY / "session-s1.jsonl").open("ab") as fh:
        fh.write(orjson.dumps(forged) + b"\n")
    assert [t.id for t in collector.iter_trajectories()] == [good.id]
    assert collector.corrupt_lines == 1
    assert collector.get(str(bad_id)) is None
    with pytest.raises(ValueError, match="must be a string"):
        Trajectory.from_dict(forged)
