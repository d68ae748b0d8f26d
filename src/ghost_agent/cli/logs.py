"""`ghost-agent logs`: pretty-print, filter and follow $GHOST_HOME/system/logs/ghost.jsonl."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import orjson

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_FIRST_KEYS = ("ts", "level", "event")


def parse_duration(text: str) -> float:
    """'90', '30s', '15m', '2h', '1d', '1h30m' -> seconds; ValueError with the accepted forms otherwise."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"invalid duration {text!r}: use e.g. 30s, 15m, 2h, 1d or 1h30m")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def _parse_ts(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def format_event(event: dict[str, Any]) -> str:
    """`ts LEVEL event key=value ...` on one line, values JSON-encoded when not plain."""
    head = " ".join(str(event.get(k, "")) for k in _FIRST_KEYS)
    rest = []
    for key, value in event.items():
        if key in _FIRST_KEYS:
            continue
        text = value if isinstance(value, str) and " " not in value else orjson.dumps(value, default=str).decode()
        rest.append(f"{key}={text}")
    return head + ("  " + " ".join(rest) if rest else "")


def select(
    lines: Iterable[bytes], *, events: list[str] | None, since_ts: float | None, bad: list[int]
) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """Parsed events passing the filters; undecodable lines are counted in `bad` and skipped."""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            bad[0] += 1
            continue
        if not isinstance(event, dict):
            bad[0] += 1
            continue
        if events and event.get("event") not in events:
            continue
        if since_ts is not None:
            ts = _parse_ts(event.get("ts"))
            if ts is None or ts < since_ts:
                continue
        yield line, event


def rotated_files(path: Path) -> list[Path]:
    """The rotated logs next to `path` (`ghost.jsonl.1` is the newest), oldest first."""
    found = []
    n = 1
    while (older := path.with_name(f"{path.name}.{n}")).is_file():
        found.append(older)
        n += 1
    return found[::-1]


def show_logs(
    path: Path,
    *,
    follow: bool = False,
    events: list[str] | None = None,
    since_s: float | None = None,
    raw: bool = False,
    out: IO[str] = sys.stdout,
    poll_s: float = 0.25,
    max_polls: int | None = None,
) -> int:
    """Print matching events, the rotated files (oldest first) then the current one; with `follow`, keep
    reading appended lines, across rotation (the rest of the moved file, then the new one) and truncation."""
    since_ts = datetime.now(timezone.utc).timestamp() - since_s if since_s is not None else None
    bad = [0]
    backups = rotated_files(path)
    if not path.exists() and not backups and not follow:
        print(f"no log yet at {path} (start the daemon with `ghost-agent serve`)", file=sys.stderr)
        return 1

    def emit(chunk: Iterable[bytes]) -> None:
        for line, event in select(chunk, events=events, since_ts=since_ts, bad=bad):
            out.write((line.decode() if raw else format_event(event)) + "\n")
        out.flush()

    partial = b""

    def feed(data: bytes) -> None:
        nonlocal partial
        lines = (partial + data).split(b"\n")
        partial = lines.pop()  # an unterminated last line may still be being written
        emit(lines)

    def flush_partial() -> None:
        nonlocal partial
        if partial:
            emit([partial])
        partial = b""

    fh: IO[bytes] | None = None
    fh_id: tuple[int, int] | None = None
    polls = 0
    try:
        for older in backups:
            with open(older, "rb") as old:
                while block := old.read(1 << 20):
                    feed(block)
            flush_partial()
        while True:
            if fh is None:
                try:
                    fh = open(path, "rb")  # noqa: SIM115 - closed below or in `finally`
                    st = os.fstat(fh.fileno())
                    fh_id = (st.st_dev, st.st_ino)
                except FileNotFoundError:
                    fh = None
            if fh is not None:
                feed(fh.read())
                try:
                    st = os.stat(path)
                    now_id: tuple[int, int] | None = (st.st_dev, st.st_ino)
                except FileNotFoundError:
                    now_id = None
                if now_id != fh_id:  # moved away (rotated): finish the old file, then follow the new one
                    feed(fh.read())
                    flush_partial()
                    fh.close()
                    fh = None
                    if now_id is not None and follow:
                        continue
                elif st.st_size < fh.tell():  # truncated in place (copytruncate): start over
                    fh.seek(0)
                    partial = b""
            if not follow:
                flush_partial()
                break
            polls += 1
            if max_polls is not None and polls >= max_polls:
                break
            time.sleep(poll_s)
    except KeyboardInterrupt:
        pass
    finally:
        if fh is not None:
            fh.close()
    if bad[0]:
        print(f"skipped {bad[0]} malformed line(s) in {path}", file=sys.stderr)
    return 0
