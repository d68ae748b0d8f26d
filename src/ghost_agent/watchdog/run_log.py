"""The watchdog's histories on disk, one JSON line per event, for the status page's timelines.

The runner keeps only the last run of each phase in memory (`Watchdog.status`); a person asking "what did it do
while I was away?" needs every run since. `PhaseRunLog`: each run — ok, skipped by the phase itself (nothing to
learn from), yielded to a user, failed, cancelled — is appended to `system/watchdog/runs.jsonl` with its
wall-clock start and end, status, reason and the scalar figures it returned. `History` is the same file shape for
any other record (the retrain phase's gate verdicts, `system/watchdog/retrains.jsonl`). Files are bounded: past
`max_bytes` one keeps its newer half. Appends go through `atomic.append_line` (one write; a torn last line
cannot swallow the next); a line that does not parse is skipped when read (counted in `corrupt`), never fatal.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.atomic import append_line, atomic_write_bytes
from ghost_agent.jsonsafe import JSON

MAX_BYTES = 1 << 20
DETAIL_CHARS = 300


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


@dataclass
class History:
    """An append-only JSON-lines file at `path` (created with its folder, 0700; the file 0600)."""

    path: Path
    max_bytes: int = MAX_BYTES
    corrupt: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, record: JSON) -> None:
        """Append one record. I/O errors are the caller's to log."""
        line = orjson.dumps(record, default=str) + b"\n"
        with self._lock:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if append_line(self.path, line) > self.max_bytes:
                data = self.path.read_bytes()
                keep = data[len(data) // 2:]
                atomic_write_bytes(self.path, keep[keep.find(b"\n") + 1:])

    def recent(self, limit: int = 200, where: Callable[[JSON], bool] | None = None) -> list[JSON]:
        """The newest `limit` records (those `where` accepts), oldest first."""
        out: deque[JSON] = deque(maxlen=max(1, limit))
        bad = 0
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            if not line.strip():
                continue
            try:
                record: Any = orjson.loads(line)
            except orjson.JSONDecodeError:
                bad += 1
                continue
            if not isinstance(record, dict):
                bad += 1
                continue
            if where is None or where(record):
                out.append(record)
        self.corrupt = bad
        return list(out)


class PhaseRunLog(History):
    """The phase runs (`runs.jsonl`)."""

    def append(self, *, phase: str, key: str, started: float, ended: float, status: str, detail: str,
               data: JSON) -> None:
        """One finished run (`started`/`ended`: epoch seconds)."""
        self.add({"phase": phase, "key": key, "start": iso(started), "end": iso(ended),
                  "duration_ms": round((ended - started) * 1000.0, 1), "status": status,
                  "detail": detail[:DETAIL_CHARS],
                  "data": {k: v for k, v in data.items() if isinstance(v, (int, float, str, bool)) and
                           not (isinstance(v, str) and len(v) > DETAIL_CHARS)}})

    def runs(self, limit: int = 200, *, phase: str | None = None) -> list[JSON]:
        """The newest `limit` runs (optionally of one phase), oldest first."""
        return self.recent(limit, lambda r: isinstance(r.get("phase"), str) and (phase is None or r["phase"] == phase))


__all__ = ["History", "PhaseRunLog", "iso"]
