"""The watchdog's run history file: appended, read back newest-bounded, bounded in size, corrupt lines skipped."""

from __future__ import annotations

from pathlib import Path

from ghost_agent.watchdog.run_log import PhaseRunLog


def test_runs_are_read_back_in_order_and_by_phase(tmp_path: Path) -> None:
    log = PhaseRunLog(tmp_path / "watchdog" / "runs.jsonl")
    for k in range(5):
        log.append(phase="a" if k % 2 else "b", key="x", started=1000.0 + k, ended=1000.5 + k, status="ok",
                   detail="d" * 1000, data={"n": k, "nested": {"no": 1}, "text": "t"})
    runs = log.runs()
    assert [r["data"]["n"] for r in runs] == [0, 1, 2, 3, 4]
    assert runs[0]["duration_ms"] == 500.0 and len(runs[0]["detail"]) == 300 and "nested" not in runs[0]["data"]
    assert [r["data"]["n"] for r in log.runs(2)] == [3, 4]
    assert [r["data"]["n"] for r in log.runs(phase="a")] == [1, 3]
    assert (tmp_path / "watchdog").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "watchdog" / "runs.jsonl").stat().st_mode & 0o777 == 0o600


def test_the_file_stays_bounded_and_keeps_its_newest_runs(tmp_path: Path) -> None:
    log = PhaseRunLog(tmp_path / "runs.jsonl", max_bytes=4000)
    for k in range(200):
        log.append(phase="p", key="p", started=k, ended=k + 1, status="ok", detail="", data={"n": k})
    assert log.path.stat().st_size <= 4000
    runs = log.runs(1000)
    assert runs[-1]["data"]["n"] == 199 and runs == sorted(runs, key=lambda r: r["data"]["n"])


def test_a_corrupt_line_is_skipped_and_counted(tmp_path: Path) -> None:
    log = PhaseRunLog(tmp_path / "runs.jsonl")
    log.append(phase="p", key="p", started=1, ended=2, status="ok", detail="", data={})
    with log.path.open("ab") as fh:
        fh.write(b"{not json\n[1, 2]\n")
    log.append(phase="q", key="q", started=3, ended=4, status="failed", detail="x", data={})
    assert [r["phase"] for r in log.runs()] == ["p", "q"] and log.corrupt == 2
    assert PhaseRunLog(tmp_path / "absent.jsonl").runs() == []


def test_a_torn_last_line_does_not_swallow_the_next_run(tmp_path: Path) -> None:
    log = PhaseRunLog(tmp_path / "runs.jsonl")
    log.append(phase="p", key="p", started=1, ended=2, status="ok", detail="", data={})
    with log.path.open("ab") as fh:
        fh.write(b'{"phase": "torn", "st')  # a crash mid-append
    log.append(phase="q", key="q", started=3, ended=4, status="ok", detail="", data={})
    assert [r["phase"] for r in log.runs()] == ["p", "q"] and log.corrupt == 1
