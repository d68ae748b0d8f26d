"""The corrections sidecar (seed 001 §3): overlay on read, last write wins, malformed lines, orphans,
disabled collector, and the original line staying byte-identical."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs

from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.corrections import CORRECTION_SOURCES, parse_correction
from ghost_agent.trajectories.record import Outcome
from tests.trajectories.trajhelp import all_files, file_of, make_traj, raw_records


def outcomes(c: TrajectoryCollector) -> dict[str, Outcome]:
    return {t.id: t.outcome for t in c.iter_trajectories()}


def test_update_outcome_appends_one_line_to_the_root_sidecar(collector: TrajectoryCollector, root: Path) -> None:
    traj = make_traj()
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.FAILED, "user said no", source="user_correction")
    assert collector.corrections_path == root / "corrections.jsonl"
    (line,) = raw_records(root / "corrections.jsonl")
    assert set(line) == {"trajectory_id", "outcome", "reason", "source", "ts"}
    assert line["trajectory_id"] == traj.id and line["outcome"] == "failed" and line["source"] == "user_correction"
    assert line["reason"] == "user said no"


def test_the_sidecar_is_one_file_not_day_partitioned(collector: TrajectoryCollector, root: Path) -> None:
    trajs = [make_traj(f"2026-04-2{d}T10:00:00Z") for d in range(3)]
    for t in trajs:
        collector.append(t)
        collector.update_outcome(t.id, "failed", "r", source="heuristic")
    assert len(raw_records(root / "corrections.jsonl")) == 3
    assert not [p for p in all_files(root) if p.name == "corrections.jsonl" and p.parent != root]


def test_overlay_applies_on_iteration_and_get(collector: TrajectoryCollector) -> None:
    traj, other = make_traj(), make_traj()
    collector.append(traj)
    collector.append(other)
    collector.update_outcome(traj.id, "failed", "repeated tool error", source="heuristic")
    got = {t.id: t for t in collector.iter_trajectories()}
    assert got[traj.id].outcome is Outcome.FAILED and got[traj.id].failure_reason == "repeated tool error"
    assert got[traj.id].extra["correction"]["source"] == "heuristic"
    assert got[other.id].outcome is Outcome.UNKNOWN and "correction" not in got[other.id].extra
    fetched = collector.get(traj.id)
    assert fetched is not None and fetched.outcome is Outcome.FAILED


def test_last_write_wins(collector: TrajectoryCollector) -> None:
    traj = make_traj()
    collector.append(traj)
    collector.update_outcome(traj.id, "failed", "first verdict", source="heuristic")
    collector.update_outcome(traj.id, "passed", "verifier confirmed", source="verifier")
    got = collector.get(traj.id)
    assert got is not None and got.outcome is Outcome.PASSED
    assert got.failure_reason is None  # a reason only describes a failure
    assert got.extra["correction"] == {"source": "verifier", "reason": "verifier confirmed",
                                       "ts": got.extra["correction"]["ts"]}
    collector.update_outcome(traj.id, "failed", "user said no", source="user_correction")
    assert outcomes(collector)[traj.id] is Outcome.FAILED


def test_the_outcome_filter_applies_after_the_overlay(collector: TrajectoryCollector) -> None:
    a, b = make_traj(outcome=Outcome.PASSED), make_traj()
    collector.append(a)
    collector.append(b)
    collector.update_outcome(a.id, "failed", "refuted", source="verifier")
    assert [t.id for t in collector.iter_trajectories(outcome="failed")] == [a.id]
    assert [t.id for t in collector.iter_trajectories(outcome="passed")] == []
    assert [t.id for t in collector.iter_trajectories(outcome="unknown")] == [b.id]


def test_malformed_sidecar_lines_are_skipped_without_poisoning(collector: TrajectoryCollector, root: Path) -> None:
    a, b = make_traj(), make_traj()
    collector.append(a)
    collector.append(b)
    collector.update_outcome(a.id, "failed", "first", source="heuristic")
    with open(collector.corrections_path, "ab") as fh:
        fh.write(b"garbage\n")
        fh.write(b"[\"a list\"]\n")
        fh.write(orjson.dumps({"outcome": "passed", "reason": "no id"}) + b"\n")
        fh.write(orjson.dumps({"trajectory_id": a.id, "outcome": "exploded"}) + b"\n")  # bad outcome
        fh.write(orjson.dumps({"trajectory_id": a.id, "outcome": 3}) + b"\n")
    collector.update_outcome(b.id, "passed", "validator", source="self_play")
    with open(collector.corrections_path, "ab") as fh:
        fh.write(b'{"trajectory_id": "' + a.id.encode() + b'", "outcome": "pas')  # torn last line
    with capture_logs() as logs:
        assert outcomes(collector) == {a.id: Outcome.FAILED, b.id: Outcome.PASSED}
        assert outcomes(collector) == {a.id: Outcome.FAILED, b.id: Outcome.PASSED}
    stats = collector.stats()["corrections"]
    assert stats["malformed"] == 6 and stats["lines"] == 8 and stats["applied"] == 2
    assert [e["count"] for e in logs if e["event"] == "corrections_malformed_line"] == [6]  # logged once


def test_orphan_corrections_are_ignored(collector: TrajectoryCollector) -> None:
    traj = make_traj()
    collector.append(traj)
    collector.update_outcome("f" * 32, "failed", "no such turn", source="user_correction")
    assert [t.id for t in collector.iter_trajectories()] == [traj.id]
    assert outcomes(collector) == {traj.id: Outcome.UNKNOWN}
    assert collector.get("f" * 32) is None
    assert collector.stats()["corrections"] == {"lines": 1, "ids": 1, "applied": 0, "orphans": 1, "malformed": 0}


def test_disabled_collector_does_not_write_corrections(root: Path) -> None:
    writer = TrajectoryCollector(root)
    traj = make_traj()
    writer.append(traj)
    disabled = TrajectoryCollector(root, enabled=False)
    disabled.update_outcome(traj.id, "failed", "ignored", source="user_correction")
    assert not (root / "corrections.jsonl").exists()
    assert outcomes(disabled) == {traj.id: Outcome.UNKNOWN}  # reading still works
    writer.close()


def test_original_line_stays_byte_identical(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.UNKNOWN)
    collector.append(traj)
    path = file_of(collector, traj)
    before = path.read_bytes()
    for verdict in ("failed", "passed", "failed"):
        collector.update_outcome(traj.id, verdict, "r", source="eval")
    collector.close()
    assert path.read_bytes() == before
    assert orjson.loads(before)["outcome"] == "unknown"


def test_corrections_from_another_writer_are_seen(root: Path) -> None:
    reader = TrajectoryCollector(root)
    traj = make_traj()
    reader.append(traj)
    assert outcomes(reader) == {traj.id: Outcome.UNKNOWN}  # overlay cached now
    other = TrajectoryCollector(root)  # e.g. another process sharing the home
    other.update_outcome(traj.id, "failed", "late verdict", source="verifier")
    assert outcomes(reader) == {traj.id: Outcome.FAILED}
    (root / "corrections.jsonl").unlink()
    assert outcomes(reader) == {traj.id: Outcome.UNKNOWN}
    reader.close()
    other.close()


@pytest.mark.parametrize(
    ("outcome", "source"), [("meh", "heuristic"), ("failed", "gut_feeling"), ("failed", "")]
)
def test_bad_outcome_or_source_is_refused(
    collector: TrajectoryCollector, root: Path, outcome: str, source: str
) -> None:
    with pytest.raises(ValueError):
        collector.update_outcome("a" * 32, outcome, "r", source=source)
    with pytest.raises(ValueError):
        collector.update_outcome("", "failed", "r", source="heuristic")
    assert not (root / "corrections.jsonl").exists()


def test_every_documented_source_is_accepted(collector: TrajectoryCollector) -> None:
    assert CORRECTION_SOURCES == {"user_correction", "verifier", "heuristic", "self_play", "eval"}
    traj = make_traj()
    collector.append(traj)
    for source in sorted(CORRECTION_SOURCES):
        collector.update_outcome(traj.id, Outcome.FAILED, source, source=source)
    got = collector.get(traj.id)
    assert got is not None and got.failure_reason == "verifier"  # sorted: the last written


def test_correction_reasons_are_redacted(collector: TrajectoryCollector) -> None:
    traj = make_traj()
    collector.append(traj)
    collector.update_outcome(traj.id, "failed", "user carol@example.org said no", source="user_correction")
    data = collector.corrections_path.read_bytes()
    assert b"carol@example.org" not in data
    assert orjson.loads(data)["trajectory_id"] == traj.id


@pytest.mark.parametrize(
    "line",
    [b"", b"null", b"{}", b'{"trajectory_id": 5, "outcome": "failed"}', b'{"trajectory_id": "x", "outcome": null}'],
)
def test_parse_correction_rejects_malformed(line: bytes) -> None:
    assert parse_correction(line) is None


def test_parse_correction_normalizes() -> None:
    got = parse_correction(b'{"trajectory_id": "x", "outcome": " FAILED ", "reason": 3}')
    assert got is not None and got["outcome"] == "failed" and got["reason"] == "3"
