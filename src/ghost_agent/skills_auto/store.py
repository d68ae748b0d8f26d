"""The skills store: one SQLite file in the home (`system/skills/skills.sqlite3`) with three tables.

* `scan_files` — the scan cursor: per trajectory file, its inode and the byte offset read so far.
* `observed` — the mining view (`mining.Observed`) of the most recent `window` tool-using trajectories, with
  their *recorded* outcome (corrections are overlaid when mining, so a later correction still counts).
* `candidates` — mined tool sequences with their support, supporting trajectory ids and sample requests, and
  the operator's decision: `candidate` (proposed), `promoted`, `rejected`. The phase only ever writes
  `candidate` rows; promoting and rejecting are the operator's acts (`ghost-agent skills`). A sequence keeps
  its id and its decision forever: a rejected one is never proposed again.

Every write is one `BEGIN IMMEDIATE … COMMIT` (the daemon's phase and the CLI may write at the same time);
WAL, `synchronous=FULL`. Errors surface as `SkillStoreError`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.jsonsafe import JSON
from ghost_agent.skills_auto.mining import Observed, Support, render
from ghost_agent.skills_auto.scan import Cursor
from ghost_agent.trajectories.record import utc_now_iso

SCHEMA_VERSION = 1
STATUSES = ("candidate", "promoted", "rejected")
DEFAULT_WINDOW = 5000  # tool-using trajectories kept for mining (the most recent)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scan_files (
    path TEXT PRIMARY KEY,
    inode INTEGER NOT NULL,
    offset INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observed (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    ts TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome TEXT NOT NULL,
    request TEXT NOT NULL,
    tokens TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    steps TEXT NOT NULL,
    length INTEGER NOT NULL,
    support INTEGER NOT NULL,
    trajectory_ids TEXT NOT NULL,
    samples TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'candidate',
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    decided_at TEXT,
    lesson_id TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS candidates_by_status ON candidates(status)
"""
_COLUMNS = ("id, key, steps, length, support, trajectory_ids, samples, status, first_seen, last_seen, decided_at,"
            " lesson_id, reason")


class SkillStoreError(RuntimeError):
    """The skills store cannot be opened or used."""


@dataclass(frozen=True)
class Candidate:
    """A mined tool sequence: `steps` (normalised tokens), `support` (passing trajectories containing it),
    `trajectory_ids` (the most recent of them), `samples` (sample requests), and the operator's decision."""

    id: str
    steps: tuple[str, ...]
    support: int
    trajectory_ids: tuple[str, ...] = ()
    samples: tuple[str, ...] = ()
    status: str = "candidate"
    first_seen: str = ""
    last_seen: str = ""
    decided_at: str | None = None
    lesson_id: str = ""
    reason: str = ""

    @property
    def length(self) -> int:
        return len(self.steps)

    @property
    def text(self) -> str:
        """The sequence as one readable line."""
        return render(self.steps)

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {
            "id": self.id, "status": self.status, "support": self.support, "length": self.length,
            "steps": list(self.steps), "sequence": self.text, "trajectory_ids": list(self.trajectory_ids),
            "samples": list(self.samples), "first_seen": self.first_seen, "last_seen": self.last_seen,
            "decided_at": self.decided_at, "lesson_id": self.lesson_id, "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> Candidate:
        """Parse `to_dict` output (`id` and `steps` required)."""
        return cls(
            id=str(data["id"]), steps=tuple(str(s) for s in data["steps"]), support=int(data.get("support") or 0),
            trajectory_ids=tuple(str(t) for t in data.get("trajectory_ids") or ()),
            samples=tuple(str(s) for s in data.get("samples") or ()), status=str(data.get("status") or "candidate"),
            first_seen=str(data.get("first_seen") or ""), last_seen=str(data.get("last_seen") or ""),
            decided_at=data.get("decided_at"), lesson_id=str(data.get("lesson_id") or ""),
            reason=str(data.get("reason") or ""),
        )


@dataclass(frozen=True)
class SyncResult:
    """What one mining pass changed: the newly proposed candidates, how many are proposed now, how many
    proposals disappeared (their support fell, or a longer sequence now says the same)."""

    new: tuple[Candidate, ...]
    proposed: int
    dropped: int


class SkillStore:
    """The skills store at `path` (created when missing). Thread-safe: one connection, one lock."""

    def __init__(self, path: Path | str, *, clock: Callable[[], str] = utc_now_iso, busy_timeout_s: float = 5.0):
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise SkillStoreError(f"skills store {self.path} cannot be opened: {exc}") from exc
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise SkillStoreError(f"skills store {self.path} has schema {version}, newer than {SCHEMA_VERSION}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("BEGIN IMMEDIATE")
            for statement in (s.strip() for s in _SCHEMA.split(";\n") if s.strip()):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            raise SkillStoreError(f"skills store {self.path} is unusable: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SkillStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _tx(self, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise SkillStoreError("the skills store is closed")
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise SkillStoreError(f"skills store {'write' if write else 'read'} failed: {exc}") from exc

    # ---- the scan ----------------------------------------------------------------------------------------

    def cursors(self) -> dict[str, Cursor]:
        """Per trajectory file (relative path): (inode, offset read so far)."""
        with self._tx(False) as conn:
            return {str(p): (int(i), int(o)) for p, i, o in conn.execute("SELECT path, inode, offset FROM scan_files")}

    def record_scan(self, observed: Sequence[Observed], cursors: Mapping[str, Cursor],
                    window: int = DEFAULT_WINDOW) -> int:
        """Store a chunk's trajectories and advance the cursors in one transaction, then keep only the `window`
        most recent trajectories. A trajectory seen again (re-appended) replaces its earlier view. Returns how
        many trajectories are kept."""
        with self._tx(True) as conn:
            conn.executemany(
                "INSERT INTO observed (id, ts, source, outcome, request, tokens) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET ts = excluded.ts, source = excluded.source,"
                " outcome = excluded.outcome, request = excluded.request, tokens = excluded.tokens",
                [(o.id, o.ts, o.source, o.outcome, o.request, orjson.dumps(list(o.tokens)).decode())
                 for o in observed],
            )
            conn.executemany(
                "INSERT INTO scan_files (path, inode, offset) VALUES (?, ?, ?)"
                " ON CONFLICT (path) DO UPDATE SET inode = excluded.inode, offset = excluded.offset",
                [(path, inode, offset) for path, (inode, offset) in cursors.items()],
            )
            conn.execute("DELETE FROM observed WHERE seq <= (SELECT MAX(seq) FROM observed) - ?", (max(window, 1),))
            return int(conn.execute("SELECT COUNT(*) FROM observed").fetchone()[0])

    def observed(self) -> list[Observed]:
        """The kept trajectories, oldest first."""
        with self._tx(False) as conn:
            rows = conn.execute("SELECT id, ts, source, outcome, request, tokens FROM observed ORDER BY seq").fetchall()
        return [Observed(str(i), str(ts), str(src), str(out), str(req), tuple(orjson.loads(tok)))
                for i, ts, src, out, req, tok in rows]

    # ---- candidates --------------------------------------------------------------------------------------

    def sync(self, proposals: Sequence[Support], support_by_key: Mapping[str, Support]) -> SyncResult:
        """Apply one mining pass (one transaction): insert new proposals, refresh known ones, drop undecided
        rows no longer proposed, refresh the support of promoted and rejected rows (0 when gone). Never changes
        a decision."""
        now = self._clock()
        proposed_keys = {p.key for p in proposals}
        new: list[Candidate] = []
        with self._tx(True) as conn:
            existing = {str(k): str(s) for k, s in conn.execute("SELECT key, status FROM candidates")}
            for entry in proposals:
                ids = _dumps(entry.recent_ids())
                samples = _dumps(entry.samples())
                status = existing.get(entry.key)
                if status is None:
                    conn.execute(
                        "INSERT INTO candidates (id, key, steps, length, support, trajectory_ids, samples, status,"
                        " first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, 'candidate', ?, ?)",
                        (entry.id, entry.key, _dumps(list(entry.steps)), len(entry.steps), entry.count, ids,
                         samples, now, now),
                    )
                    new.append(_load(conn, "WHERE key = ?", (entry.key,))[0])
                else:
                    conn.execute("UPDATE candidates SET support = ?, trajectory_ids = ?, samples = ?, last_seen = ?"
                                 " WHERE key = ?", (entry.count, ids, samples, now, entry.key))
            dropped = [k for k, s in existing.items() if s == "candidate" and k not in proposed_keys]
            conn.executemany("DELETE FROM candidates WHERE key = ?", [(k,) for k in dropped])
            for key, status in existing.items():
                if status == "candidate" or key in proposed_keys:
                    continue
                found = support_by_key.get(key)
                conn.execute(
                    "UPDATE candidates SET support = ?, trajectory_ids = CASE WHEN ? THEN ? ELSE trajectory_ids END"
                    " WHERE key = ?",
                    (found.count if found else 0, found is not None, _dumps(found.recent_ids()) if found else "[]",
                     key),
                )
            proposed = int(conn.execute("SELECT COUNT(*) FROM candidates WHERE status = 'candidate'").fetchone()[0])
        return SyncResult(tuple(new), proposed, len(dropped))

    def candidates(self, statuses: Iterable[str] | None = None) -> list[Candidate]:
        """Candidates with these statuses (all when None), by support (desc), length (desc), id."""
        wanted = tuple(statuses) if statuses is not None else STATUSES
        with self._tx(False) as conn:
            found = _load(conn, f"WHERE status IN ({', '.join('?' * len(wanted))})", wanted)
        return sorted(found, key=lambda c: (-c.support, -c.length, c.id))

    def get(self, candidate_id: str) -> Candidate | None:
        """The candidate with this id, or None."""
        with self._tx(False) as conn:
            found = _load(conn, "WHERE id = ?", (candidate_id,))
        return found[0] if found else None

    def find(self, prefix: str) -> list[Candidate]:
        """Candidates whose id starts with `prefix` (lowercased)."""
        prefix = prefix.strip().lower()
        with self._tx(False) as conn:
            return _load(conn, "WHERE substr(id, 1, ?) = ?", (len(prefix), prefix))

    def decide(
        self, candidate_id: str, status: str, *, lesson_id: str | None = None, reason: str = ""
    ) -> Candidate | None:
        """Record the operator's decision (`promoted` / `rejected` / back to `candidate`); `lesson_id` None keeps
        the stored one. Returns the updated candidate, None when there is none."""
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        with self._tx(True) as conn:
            conn.execute(
                "UPDATE candidates SET status = ?, decided_at = ?, lesson_id = COALESCE(?, lesson_id), reason = ?"
                " WHERE id = ?", (status, self._clock(), lesson_id, reason, candidate_id),
            )
            found = _load(conn, "WHERE id = ?", (candidate_id,))
        return found[0] if found else None

    def status_counts(self) -> dict[str, int]:
        """How many candidates are proposed / promoted / rejected."""
        with self._tx(False) as conn:
            return {str(s): int(n) for s, n in conn.execute("SELECT status, COUNT(*) FROM candidates GROUP BY status")}

    def observed_count(self) -> int:
        """How many trajectories are kept for mining."""
        with self._tx(False) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM observed").fetchone()[0])


def candidate_counts(path: Path) -> JSON:
    """Candidates by status for the status surface, read-only (a store that does not exist yet has none)."""
    if not path.exists():
        return {"available": True, "total": 0, "by_status": {}}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    try:
        try:
            rows = conn.execute("SELECT status, COUNT(*) FROM candidates GROUP BY status").fetchall()
        except sqlite3.OperationalError:  # created but not yet initialised
            rows = []
    finally:
        conn.close()
    by_status = {str(s): int(n) for s, n in rows}
    return {"available": True, "total": sum(by_status.values()), "by_status": dict(sorted(by_status.items()))}


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _load(conn: sqlite3.Connection, where: str, params: Sequence[object] = ()) -> list[Candidate]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM candidates {where}", tuple(params)).fetchall()
    out: list[Candidate] = []
    for (cid, _key, steps, _length, support, ids, samples, status, first_seen, last_seen, decided_at, lesson_id,
         reason) in rows:
        out.append(Candidate(
            id=str(cid), steps=tuple(orjson.loads(steps)), support=int(support),
            trajectory_ids=tuple(orjson.loads(ids)), samples=tuple(orjson.loads(samples)), status=str(status),
            first_seen=str(first_seen), last_seen=str(last_seen),
            decided_at=str(decided_at) if decided_at is not None else None, lesson_id=str(lesson_id),
            reason=str(reason),
        ))
    return out


__all__ = ["STATUSES", "Candidate", "SkillStore", "SkillStoreError", "SyncResult", "candidate_counts"]
