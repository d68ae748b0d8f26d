"""The trajectory store: append-only JSON lines, one file per session per UTC day, plus a corrections sidecar.

Layout (DESIGN §2)::

    <root>/YYYY-MM-DD/session-<session_id>.jsonl   one `ghost.trajectory.v1` record per line
    <root>/corrections.jsonl                       outcome overlay, append-only, last write wins

Writing: `append` redacts the whole record (`privacy.redact.redact_trajectory`) before anything touches disk,
then hands one complete line to `LineAppender` (one `os.write` per line on an `O_APPEND` descriptor, per-file
lock + `flock`, cached descriptors, torn-tail repair). Durability (`durability=`, see `trajectories.appender`):
``"fsync"`` per append, ``"batch"`` (default: write-through, so a process crash loses nothing; fsync in
`flush()`), or ``"none"``.

Nothing a turn produced is lost to its own content: a record orjson cannot write (a lone surrogate, an
integer past 64 bits, nesting past its limit) is repaired by `jsonsafe.sanitize` and written, with
`extra.sanitized` set and a `trajectory_sanitized` warning.

Bounded files: one day holds at most `max_session_files` session files; records of further sessions that day
go to the day's shared `session-+overflow.jsonl` (their `session_id` intact), so clients inventing session
ids cannot exhaust inodes or the directory, and no record is dropped. (The count is this process's view of
the directory: files another process creates meanwhile are not counted until the next rescan.)

Reading (`iter_trajectories`, `get`, `stats`) streams line by line, overlays the latest correction per id,
and skips (counts, logs once per file) torn or corrupt lines. It never raises for bad data.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

import orjson

from ghost_agent.jsonsafe import JSON, sanitize
from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import redact_trajectory
from ghost_agent.trajectories.appender import DURABILITY_POLICIES, MAX_OPEN_FILES, LineAppender
from ghost_agent.trajectories.corrections import CORRECTIONS_FILE, CorrectionsSidecar, make_correction
from ghost_agent.trajectories.record import SCHEMA, Outcome, Source, Trajectory, parse_ts

log = get_logger("distill.collector")

_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_NAME = 80
_PATH_MEMO = 4096
_NL = orjson.OPT_APPEND_NEWLINE
# Fields we generate ourselves (never user content): restored after redaction so a redaction rule can never
# break the store's own keys (filing day, overlay join).
_STRUCTURAL = ("schema", "id", "ts")
# `+` is outside the charset `session_file_name` produces: no session id can name this file.
OVERFLOW_FILE = "session-+overflow.jsonl"
_DAYS_TRACKED = 3  # days whose session-file names are held in memory for the cap

Redactor = Callable[[JSON], JSON]
TimeBound = datetime | date | str | None


def session_file_name(session_id: Any) -> str:
    """`session-<id>.jsonl` with a filesystem-safe id; ids that had to be changed get a short hash suffix."""
    raw = str(session_id) if session_id not in (None, "") else "default"
    safe = _UNSAFE.sub("_", raw).lstrip(".")[:_MAX_NAME]
    if safe != raw:  # keep distinct ids in distinct files after sanitizing
        safe = f"{safe or 'session'}-{hashlib.sha1(raw.encode()).hexdigest()[:10]}"
    return f"session-{safe}.jsonl"


@dataclass(frozen=True)
class _Bounds:
    """Resolved since/until: `since <= ts`, `ts <= until` (or `<` when `until_exclusive`), by day name too."""

    since: datetime | None
    until: datetime | None
    until_exclusive: bool

    @property
    def first_day(self) -> str | None:
        return self.since.strftime("%Y-%m-%d") if self.since else None

    @property
    def last_day(self) -> str | None:
        if self.until is None:
            return None
        last = self.until - timedelta(microseconds=1) if self.until_exclusive else self.until
        return last.strftime("%Y-%m-%d")

    def admits(self, ts: datetime) -> bool:
        if self.since is not None and ts < self.since:
            return False
        if self.until is not None:
            return ts < self.until if self.until_exclusive else ts <= self.until
        return True


def _as_bound(value: TimeBound, *, end: bool) -> tuple[datetime | None, bool]:
    """A since/until value as an aware UTC datetime; a bare date covers its whole UTC day."""
    if value is None:
        return None, False
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        return aware, False
    if isinstance(value, str) and _DAY_RE.fullmatch(value.strip()):
        value = date.fromisoformat(value.strip())
    if isinstance(value, date):
        start = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
        return (start + timedelta(days=1), True) if end else (start, False)
    if isinstance(value, str):
        return parse_ts(value.strip()), False
    raise TypeError(f"expected datetime, date or ISO string, got {type(value).__name__}")


def _choice(value: Any, enum_type: type[Outcome] | type[Source], what: str) -> str | None:
    if value is None:
        return None
    try:
        member = enum_type(value.value if isinstance(value, enum_type) else str(value).strip().lower())
    except ValueError:
        valid = ", ".join(m.value for m in enum_type)
        raise ValueError(f"unknown {what} {value!r} (valid: {valid})") from None
    return str(member.value)


def _parse_line(line: bytes) -> Trajectory | None:
    """A trajectory, or None for a line that is not one whole, well-formed `ghost.trajectory.*` record."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("schema"), str):
        return None  # our writer always tags records; an untagged object is not ours
    try:
        return Trajectory.from_dict(data)
    except (ValueError, TypeError, AttributeError):  # wrong schema, no id, fields of the wrong type
        return None


class TrajectoryCollector:
    """Append-only trajectory store rooted at `root` (usually `GhostHome.trajectories`). Thread-safe.

    `enabled=False` turns `append` and `update_outcome` into no-ops (nothing is created); reading still
    works. `redactor` runs over the whole record inside `append`; if it raises, nothing is written.
    """

    def __init__(
        self,
        root: Path,
        *,
        enabled: bool = True,
        durability: str = "batch",
        redactor: Redactor = redact_trajectory,
        max_open_files: int = MAX_OPEN_FILES,
        process_lock: bool = True,
        max_session_files: int | None = None,
    ) -> None:
        self.root = Path(root)
        self.enabled = enabled
        self.max_session_files = max_session_files
        self._day_names: dict[str, set[str]] = {}
        self._names_lock = threading.Lock()
        self.durability = durability
        self._redactor = redactor
        self._appender = LineAppender(
            self.root, durability=durability, max_open_files=max_open_files, process_lock=process_lock
        )
        self._corrupt_by_file: dict[str, int] = {}
        self._paths: dict[tuple[str, str], Path] = {}
        self._sidecar = CorrectionsSidecar(self.root / CORRECTIONS_FILE)

    # ------------------------------------------------------------------ writing

    @property
    def corrections_path(self) -> Path:
        """The single corrections sidecar at the tree root."""
        return self._sidecar.path

    def append(self, traj: Trajectory) -> None:
        """Redact and write `traj` as one line of its day's session file. Raises ValueError for a bad ts."""
        if not self.enabled:
            return
        day = parse_ts(traj.ts).date().isoformat()  # = traj.day; ValueError on a bad ts, before any write
        record = traj.to_dict()
        try:
            path, line = self._encode(day, record)
        except (TypeError, ValueError) as exc:  # orjson.JSONEncodeError is a TypeError; UnicodeError a ValueError
            # Sanitize the record, not the redacted one: the redactor then runs over what is written, and if it
            # still fails nothing is written.
            record = sanitize(record)
            record.setdefault("extra", {})["sanitized"] = True
            path, line = self._encode(day, record)
            log.warning("trajectory_sanitized", trajectory_id=str(record.get("id")), error=repr(exc)[:300])
        self._appender.write_line(path, line)

    def _encode(self, day: str, record: JSON) -> tuple[Path, bytes]:
        keep = {k: record[k] for k in _STRUCTURAL}
        clean = self._redactor(record)
        clean.update(keep)
        # The file name comes from the REDACTED session id: a secret in it must not land in a path either.
        return self._path(day, clean.get("session_id")), orjson.dumps(clean, option=_NL)

    def _path(self, day: str, session_id: Any) -> Path:
        key = (day, session_id if isinstance(session_id, str) else repr(session_id))
        path = self._paths.get(key)
        if path is None:  # pathlib joins cost more than the write itself: memoize per (day, session)
            if len(self._paths) >= _PATH_MEMO:
                self._paths.clear()
            path = self._paths[key] = self._admit(day, self.root / day / session_file_name(session_id))
        return path

    def _admit(self, day: str, path: Path) -> Path:
        """`path`, or the day's overflow file when the day already holds `max_session_files` session files."""
        if self.max_session_files is None:
            return path
        with self._names_lock:
            names = self._day_names.get(day)
            if names is None:
                names = self._day_names[day] = {p.name for p in self.day_files(day) if p.name != OVERFLOW_FILE}
                for old in sorted(self._day_names)[:-_DAYS_TRACKED]:
                    del self._day_names[old]
            if path.name in names:
                return path
            if len(names) >= self.max_session_files:
                return path.parent / OVERFLOW_FILE
            names.add(path.name)
            return path

    async def aappend(self, traj: Trajectory) -> None:
        """`append` off the event loop (an fsync policy may block for milliseconds)."""
        await asyncio.to_thread(self.append, traj)

    def update_outcome(
        self, trajectory_id: str, outcome: Outcome | str, reason: str | None, *, source: str
    ) -> None:
        """Append `{trajectory_id, outcome, reason, source, ts}` to the sidecar; the original line is untouched.

        `source` is one of `CORRECTION_SOURCES`; a bad source or outcome raises ValueError.
        """
        if not self.enabled:
            return
        record = make_correction(trajectory_id, outcome, reason, source=source)
        try:
            line = self._encode_correction(record)
        except (TypeError, ValueError):
            line = self._encode_correction(sanitize(record))
        self._appender.write_line(self.corrections_path, line)

    def _encode_correction(self, record: JSON) -> bytes:
        keep = {k: record[k] for k in ("trajectory_id", "outcome", "source", "ts")}
        clean = self._redactor(record)
        clean.update(keep)
        return orjson.dumps(clean, option=_NL)

    def flush(self) -> None:
        """fsync everything written since the last flush (no-op for durability "none")."""
        self._appender.flush()

    @property
    def unsynced(self) -> int:
        """Files and directories written but not yet fsynced (the batch policy's exposure to power loss)."""
        return self._appender.unsynced

    def close(self) -> None:
        """Flush and close cached descriptors. Idempotent; a later append simply reopens its file."""
        self._appender.close()

    def __enter__(self) -> TrajectoryCollector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def open_files(self) -> int:
        """How many descriptors are cached right now (bounded by `max_open_files`)."""
        return self._appender.open_files

    # ------------------------------------------------------------------ reading

    def _open_for_read(self, path: Path) -> IO[bytes]:
        """Every read of a trajectory file goes through here (a seam for tests that count opens)."""
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's `with`

    def iter_days(self, since: TimeBound = None, until: TimeBound = None) -> list[str]:
        """Day directory names (ascending) that may hold records in [since, until]; no file is opened."""
        bounds = self._bounds(since, until)
        return self._days(bounds)

    def _bounds(self, since: TimeBound, until: TimeBound) -> _Bounds:
        lo, _ = _as_bound(since, end=False)
        hi, exclusive = _as_bound(until, end=True)
        return _Bounds(lo, hi, exclusive)

    def _days(self, bounds: _Bounds) -> list[str]:
        try:
            with os.scandir(self.root) as it:
                entries = list(it)
        except OSError:
            return []
        first, last = bounds.first_day, bounds.last_day
        days = [
            e.name
            for e in entries
            if _DAY_RE.fullmatch(e.name)
            and (first is None or e.name >= first)
            and (last is None or e.name <= last)
            and e.is_dir()
        ]
        return sorted(days)

    def corrections_overlay(self) -> dict[str, JSON]:
        """The latest correction of each corrected trajectory, by id (the sidecar, reloaded when it changed)."""
        return self._sidecar.overlay()

    def read_from(self, path: Path, offset: int) -> tuple[list[Trajectory], int]:
        """The valid records of `path` from byte `offset` up to its last complete line, and the offset after it
        (for a reader that follows a growing file); bad lines are skipped. Missing file: ([], offset)."""
        try:
            with self._open_for_read(path) as fh:
                fh.seek(offset)
                data = fh.read()
        except OSError:
            return [], offset
        end = data.rfind(b"\n") + 1
        records = [t for line in data[:end].splitlines() if line.strip() and (t := _parse_line(line)) is not None]
        return records, offset + end

    def day_files(self, day: str) -> list[Path]:
        """The session files of one day directory, by name."""
        directory = self.root / day
        try:
            with os.scandir(directory) as it:
                names = [e.name for e in it if e.name.startswith("session-") and e.name.endswith(".jsonl")
                         and e.is_file()]
        except OSError:
            return []
        return [directory / n for n in sorted(names)]

    def _scan_file(self, path: Path) -> Iterator[Trajectory]:
        """Valid records of one file, streamed; bad lines are counted and logged once per file."""
        bad = 0
        complete = False
        try:
            with self._open_for_read(path) as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    traj = _parse_line(line)
                    if traj is None:
                        bad += 1
                        continue
                    yield traj
            complete = True
        except OSError as exc:
            log.warning("trajectory_file_unreadable", file=str(path), error=str(exc))
        finally:
            self._note_corrupt(path, bad, complete)

    def _note_corrupt(self, path: Path, bad: int, complete: bool) -> None:
        key = str(path)
        previous = self._corrupt_by_file.get(key, 0)
        if not complete:  # an abandoned scan saw only part of the file
            if bad > previous:
                self._corrupt_by_file[key] = bad
            return
        if bad:
            self._corrupt_by_file[key] = bad
            if bad != previous:
                log.warning("trajectory_corrupt_line", file=key, count=bad)
        else:
            self._corrupt_by_file.pop(key, None)

    def iter_trajectories(
        self,
        *,
        since: TimeBound = None,
        until: TimeBound = None,
        source: Source | str | None = None,
        outcome: Outcome | str | None = None,
    ) -> Iterator[Trajectory]:
        """Stream trajectories with the latest correction overlaid, oldest day first.

        Order: day directories ascending, then session files by name, then line order within a file (so
        records are not globally sorted by ts inside one day). `since` is inclusive; `until` is inclusive for
        a timestamp and covers the whole UTC day for a bare `YYYY-MM-DD` (or `date`). Day directories outside
        the range are never opened; records in the boundary days are filtered by their own ts. `outcome`
        filters AFTER the overlay. Naive datetimes are taken as UTC. Bad filter values raise ValueError up
        front; bad data never raises. Blocking file I/O: async callers run it in a thread.
        """
        bounds = self._bounds(since, until)
        want_source = _choice(source, Source, "source")
        want_outcome = _choice(outcome, Outcome, "outcome")
        overlay = self._sidecar.overlay()
        return self._iter(bounds, want_source, want_outcome, overlay)

    def _iter(
        self, bounds: _Bounds, want_source: str | None, want_outcome: str | None, overlay: dict[str, JSON]
    ) -> Iterator[Trajectory]:
        edges = {bounds.first_day, bounds.last_day}
        for day in self._days(bounds):
            check_ts = day in edges
            for path in self.day_files(day):
                for traj in self._scan_file(path):
                    if want_source is not None and traj.source != want_source:
                        continue
                    if check_ts and not self._in_bounds(traj, bounds):
                        continue
                    correction = overlay.get(traj.id)
                    if correction is not None:
                        _apply(traj, correction)
                    if want_outcome is not None and traj.outcome.value != want_outcome:
                        continue
                    yield traj

    @staticmethod
    def _in_bounds(traj: Trajectory, bounds: _Bounds) -> bool:
        try:
            return bounds.admits(parse_ts(traj.ts))
        except ValueError:
            return False

    def get(self, trajectory_id: str) -> Trajectory | None:
        """The record with this id (correction overlaid), or None.

        Cost: a scan, newest day first, stopping at the first day that holds the id; lines are matched as
        bytes before being parsed, so a miss costs about one read of the store (no JSON decoding).
        """
        needle = orjson.dumps(trajectory_id)
        found: Trajectory | None = None
        for day in reversed(self._days(_Bounds(None, None, False))):
            for path in self.day_files(day):
                try:
                    with self._open_for_read(path) as fh:
                        for line in fh:
                            if needle in line:
                                traj = _parse_line(line)
                                if traj is not None and traj.id == trajectory_id:
                                    found = traj  # the last occurrence wins
                except OSError as exc:
                    log.warning("trajectory_file_unreadable", file=str(path), error=str(exc))
            if found is not None:
                break
        if found is not None:
            correction = self._sidecar.overlay().get(trajectory_id)
            if correction is not None:
                _apply(found, correction)
        return found

    @property
    def corrupt_lines(self) -> int:
        """Corrupt/torn lines skipped, per file as of its latest full scan (repeated scans do not add up)."""
        return sum(self._corrupt_by_file.values())

    def stats(self) -> dict[str, Any]:
        """A full scan: counts per day / source / outcome (after the overlay), corrections, corrupt lines."""
        days: dict[str, int] = {}
        sources: dict[str, int] = {}
        outcomes: dict[str, int] = {}
        overlay = self._sidecar.overlay()
        applied: set[str] = set()
        total = 0
        for traj in self._iter(_Bounds(None, None, False), None, None, overlay):
            total += 1
            days[traj.day] = days.get(traj.day, 0) + 1
            sources[traj.source] = sources.get(traj.source, 0) + 1
            outcomes[traj.outcome.value] = outcomes.get(traj.outcome.value, 0) + 1
            if traj.id in overlay:
                applied.add(traj.id)
        side = self._sidecar.stats()
        return {
            "root": str(self.root),
            "trajectories": total,
            "days": days,
            "sources": dict(sorted(sources.items())),
            "outcomes": dict(sorted(outcomes.items())),
            "corrections": {
                "lines": side["lines"],
                "ids": len(overlay),
                "applied": len(applied),
                "orphans": len(overlay) - len(applied),
                "malformed": side["malformed"],
            },
            "corrupt_lines": self.corrupt_lines,
        }


def _apply(traj: Trajectory, correction: JSON) -> None:
    """Overlay a correction: outcome, failure reason (kept only for FAILED), and its provenance in `extra`."""
    traj.outcome = Outcome.parse(correction["outcome"])
    traj.failure_reason = correction.get("reason") if traj.outcome is Outcome.FAILED else None
    traj.extra["correction"] = {k: correction.get(k) for k in ("source", "reason", "ts")}


__all__ = ["DURABILITY_POLICIES", "SCHEMA", "TrajectoryCollector", "session_file_name"]
