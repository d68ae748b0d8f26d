"""The diary: notable events in the agent's life, one JSON line each (`system/selfhood/diary.jsonl`).

An entry is `{"ts", "kind", "facts"}`: `kind` a short snake_case word (`correction`, `retraction`,
`model_swap`, `self_play_streak`, or whatever another phase records), `facts` flat scalars. Entries carry
facts, never conversation text: string values are cleaned to short one-line labels (`clean_label`: inert,
redacted, cut), so nothing a user typed can reach the narrative prompt through the diary.

Appends are one `write` of one whole line under a lock (crash-safe: a torn last line is skipped on read, and
the next append starts on a fresh line).
The file is bounded: `compact` keeps the newest `keep` entries (an atomic rewrite) once it holds more than
`max_entries`.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.atomic import append_line, atomic_write_bytes
from ghost_agent.jsonsafe import JSON
from ghost_agent.memory.sanitize import clean_label
from ghost_agent.trajectories.record import utc_now_iso

Scalar = str | int | float | bool | None

MAX_ENTRIES = 2000
KEEP_ENTRIES = 1000
LABEL_CHARS = 64
MAX_FACTS = 12
_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")
_FACT_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True)
class DiaryEntry:
    """One event: when (UTC ISO), what kind, and its facts (flat scalars)."""

    ts: str
    kind: str
    facts: dict[str, Scalar] = field(default_factory=dict)

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {"ts": self.ts, "kind": self.kind, "facts": dict(self.facts)}

    @classmethod
    def from_dict(cls, data: JSON) -> DiaryEntry:
        """Parse an entry (ValueError when it has no valid kind or time stamp); facts are re-cleaned."""
        kind, ts = data.get("kind"), data.get("ts")
        if not isinstance(kind, str) or not _KIND.fullmatch(kind) or not isinstance(ts, str) or not ts:
            raise ValueError("not a diary entry")
        facts = data.get("facts")
        return cls(ts=ts, kind=kind, facts=clean_facts(facts if isinstance(facts, dict) else {}))


def clean_facts(facts: dict[str, Any]) -> dict[str, Scalar]:
    """Facts as flat scalars: snake_case keys, numbers and booleans as they are, strings as short clean labels,
    anything else dropped; at most `MAX_FACTS`."""
    out: dict[str, Scalar] = {}
    for key, value in facts.items():
        if len(out) >= MAX_FACTS:
            break
        if not isinstance(key, str) or not _FACT_KEY.fullmatch(key):
            continue
        if value is None or isinstance(value, (bool, int, float)):
            out[key] = value
        elif isinstance(value, str):
            out[key] = clean_label(value, LABEL_CHARS)
    return out


class Diary:
    """Append-only diary at `path`; thread-safe within the process."""

    def __init__(self, path: Path, *, clock: Any = utc_now_iso, max_entries: int = MAX_ENTRIES,
                 keep: int = KEEP_ENTRIES) -> None:
        self.path = Path(path)
        self._clock = clock
        self.max_entries = max_entries
        self.keep = min(keep, max_entries)
        self._lock = threading.Lock()

    def append(self, kind: str, ts: str | None = None, **facts: Any) -> DiaryEntry:
        """Record one event (ValueError for a kind that is not a short snake_case word)."""
        if not isinstance(kind, str) or not _KIND.fullmatch(kind):
            raise ValueError(f"diary kind must be a short snake_case word, not {kind!r}")
        entry = DiaryEntry(ts=ts or self._clock(), kind=kind, facts=clean_facts(facts))
        line = orjson.dumps(entry.to_dict(), option=orjson.OPT_APPEND_NEWLINE)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_line(self.path, line)
        return entry

    def read(self, last: int | None = None) -> list[DiaryEntry]:
        """The entries, oldest first (only the `last` N when given); corrupt lines are skipped."""
        with self._lock:
            try:
                raw = self.path.read_bytes()
            except FileNotFoundError:
                return []
        entries: deque[DiaryEntry] = deque(maxlen=last if last else None)
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
                if isinstance(data, dict):
                    entries.append(DiaryEntry.from_dict(data))
            except ValueError:
                continue
        return list(entries)

    def compact(self) -> int:
        """Keep the newest `keep` entries once there are more than `max_entries` (atomic rewrite); returns how
        many were dropped."""
        with self._lock:
            try:
                lines = [line for line in self.path.read_bytes().splitlines() if line.strip()]
            except FileNotFoundError:
                return 0
            if len(lines) <= self.max_entries:
                return 0
            kept = lines[-self.keep:]
            atomic_write_bytes(self.path, b"\n".join(kept) + b"\n")
            return len(lines) - len(kept)


__all__ = ["Diary", "DiaryEntry", "clean_facts"]
