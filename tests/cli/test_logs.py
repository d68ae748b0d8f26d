"""`ghost-agent logs`: filtering, --since, malformed lines, following appended events."""

from __future__ import annotations

import io
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest

from ghost_agent.cli.logs import format_event, parse_duration, show_logs


def write_events(path: Path, events: list[dict[str, object]], extra: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        for e in events:
            fh.write(orjson.dumps(e) + b"\n")
        fh.write(extra)


def ts(delta_s: float) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=delta_s)).isoformat()


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400),
                                               ("1h30m", 5400)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "abc", "5x", "1h-3m"])
def test_parse_duration_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="30s, 15m"):
        parse_duration(bad)


def test_filters_by_event_and_since_and_skips_garbage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ghost.jsonl"
    write_events(
        log,
        [
            {"ts": ts(-7200), "level": "info", "event": "request", "status": 200, "path": "/old"},
            {"ts": ts(-10), "level": "info", "event": "request", "status": 404, "path": "/new"},
            {"ts": ts(-5), "level": "info", "event": "startup", "version": "x"},
        ],
        extra=b"not json\n[1,2]\n{\"ts\": \"torn",
    )
    out = io.StringIO()
    assert show_logs(log, events=["request"], since_s=3600, out=out) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "/new" in lines[0] and "status=404" in lines[0]
    assert "skipped 3 malformed" in capsys.readouterr().err


def test_raw_json_output(tmp_path: Path) -> None:
    log = tmp_path / "ghost.jsonl"
    write_events(log, [{"ts": ts(0), "level": "info", "event": "request", "n": 1}])
    out = io.StringIO()
    show_logs(log, raw=True, out=out)
    assert orjson.loads(out.getvalue())["n"] == 1


def test_follow_prints_appended_events(tmp_path: Path) -> None:
    log = tmp_path / "ghost.jsonl"
    write_events(log, [{"ts": ts(0), "level": "info", "event": "first"}])
    out = io.StringIO()
    follower = threading.Thread(
        target=show_logs, kwargs={"path": log, "follow": True, "out": out, "poll_s": 0.02, "max_polls": 100}
    )
    follower.start()
    time.sleep(0.1)
    with open(log, "ab") as fh:  # a line written in two pieces must print once, whole
        fh.write(b'{"ts": "' + ts(0).encode() + b'", "level": "info", "ev')
        fh.flush()
        time.sleep(0.1)
        fh.write(b'ent": "second"}\n')
    follower.join(timeout=10)
    text = out.getvalue()
    assert "first" in text and "second" in text
    assert text.count("second") == 1


def test_missing_log_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show_logs(tmp_path / "nope.jsonl") == 1
    assert "no log yet" in capsys.readouterr().err


def test_format_event_puts_ts_level_event_first() -> None:
    line = format_event({"path": "/x", "event": "request", "level": "info", "ts": "T", "usage": {"a": 1}})
    assert line.startswith("T info request")
    assert 'usage={"a":1}' in line


def test_logs_include_the_rotated_files_oldest_first(tmp_path: Path) -> None:
    log = tmp_path / "ghost.jsonl"
    write_events(log.with_name("ghost.jsonl.2"), [{"ts": ts(-30), "level": "info", "event": "oldest"}])
    write_events(log.with_name("ghost.jsonl.1"), [{"ts": ts(-20), "level": "info", "event": "older"}])
    write_events(log, [{"ts": ts(-10), "level": "info", "event": "newest"}])
    out = io.StringIO()
    assert show_logs(log, raw=True, out=out) == 0
    assert [orjson.loads(line)["event"] for line in out.getvalue().splitlines()] == ["oldest", "older", "newest"]
    log.unlink()  # just rotated, nothing written since: the rotated files still show
    out = io.StringIO()
    assert show_logs(log, raw=True, out=out) == 0
    assert "older" in out.getvalue()


def test_follow_survives_a_rotation(tmp_path: Path) -> None:
    """Lines written to the old file after the last poll, and a new file already larger than the old one, all
    print once (a follower that only compared sizes would skip them)."""
    log = tmp_path / "ghost.jsonl"
    write_events(log, [{"ts": ts(0), "level": "info", "event": "e0"}])
    out = io.StringIO()
    follower = threading.Thread(
        target=show_logs,
        kwargs={"path": log, "follow": True, "raw": True, "out": out, "poll_s": 0.3, "max_polls": 8},
    )
    follower.start()
    deadline = time.monotonic() + 10
    while "e0" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    late: list[dict[str, object]] = [{"ts": ts(0), "level": "info", "event": "late-old"}]
    fresh: list[dict[str, object]] = [
        {"ts": ts(0), "level": "info", "event": f"new{n}", "pad": "x" * 50} for n in range(20)
    ]
    write_events(log, late)  # written just before the rotation, after the follower's last read
    log.rename(log.with_name("ghost.jsonl.1"))
    write_events(log, fresh)  # the new file outgrows the old one before the next poll
    follower.join(timeout=20)
    got = [orjson.loads(line)["event"] for line in out.getvalue().splitlines()]
    assert got == ["e0", "late-old"] + [f"new{n}" for n in range(20)]
