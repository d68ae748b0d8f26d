"""SkillMemory: lessons with provenance in one SQLite file, BM25 retrieval via FTS5, retraction by trajectory.

Tables (schema version 1, `PRAGMA user_version`):

* `lessons` — one row per lesson; `pk` is the integer key the full-text index shares as its rowid.
* `lessons_fts` — FTS5 over the *normalized* task/mistake/solution (`lesson_tokens`, space-joined), written in
  the same transaction as the row it indexes, so the index can never disagree with the table after a crash.
* `lesson_sources` — extra provenance: trajectories whose near-duplicate writes strengthened a lesson
  (`merges` = how many times), so retracting one of them is defined without deleting the lesson.

Concurrency: one connection (WAL, `synchronous=FULL`) guarded by one lock; every write is a single
`BEGIN IMMEDIATE … COMMIT`, which also excludes writers in other processes for the dedup check-then-insert.
Every sqlite error surfaces as `SkillMemoryError`. There is no in-memory cache: the file is the only tier.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ghost_agent.distill.redact_rules import redact_text
from ghost_agent.distill.trajectory import utc_now_iso
from ghost_agent.distill.user_correction import jaccard
from ghost_agent.logging import get_logger
from ghost_agent.memory.lessons import LearnResult, Lesson, ScoredLesson, lesson_tokens

log = get_logger("memory")

SCHEMA_VERSION = 1
DEDUP_JACCARD = 0.8  # token-set Jaccard over task+mistake+solution at or above which a write strengthens
DEDUP_CANDIDATES = 20  # top-BM25 lessons compared for dedup (a ≥ 0.8 duplicate always ranks among them)
MAX_QUERY_TOKENS = 64  # bounds the FTS query for long requests and long code solutions
TASK_WEIGHT = 2.0  # requests resemble a lesson's task more than its mistake or solution
MIN_POOL = 32  # BM25 candidates fetched before the relevance floor filters them

_SCHEMA = """
CREATE TABLE IF NOT EXISTS lessons (
    pk INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    task TEXT NOT NULL,
    mistake TEXT NOT NULL,
    solution TEXT NOT NULL,
    source_trajectory_id TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0,
    last_used TEXT,
    pinned INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS lessons_by_source ON lessons(source_trajectory_id);
CREATE TABLE IF NOT EXISTS lesson_sources (
    lesson_id TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    trajectory_id TEXT NOT NULL,
    merges INTEGER NOT NULL DEFAULT 1,
    added_at TEXT NOT NULL,
    PRIMARY KEY (lesson_id, trajectory_id)
);
CREATE INDEX IF NOT EXISTS lesson_sources_by_trajectory ON lesson_sources(trajectory_id);
CREATE VIRTUAL TABLE IF NOT EXISTS lessons_fts USING fts5(
    task, mistake, solution, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
"""
_COLUMNS = (
    "l.pk, l.id, l.task, l.mistake, l.solution, l.source_trajectory_id, l.created_at, l.uses, l.last_used,"
    " l.pinned, l.archived"
)


class SkillMemoryError(RuntimeError):
    """The lesson store cannot be opened or used (corrupt, unreadable, newer schema, closed)."""


class SkillMemory:
    """Lessons with provenance at `path` (created if missing). Thread-safe; the `a*` methods run in a thread.

    Opening checks the file (`quick_check`, schema version, FTS5 present) and raises `SkillMemoryError` when
    it is unusable, so the daemon can log and run without memory. `clock` returns the UTC ISO time stamps.
    """

    def __init__(self, path: Path | str, *, clock: Callable[[], str] = utc_now_iso, busy_timeout_s: float = 5.0):
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = self._open(busy_timeout_s)

    # ---- lifecycle -------------------------------------------------------------------------------------

    def _open(self, busy_timeout_s: float) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise SkillMemoryError(f"cannot open the lesson store {self.path}: {exc}") from exc
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise SkillMemoryError(f"lesson store {self.path} has schema {version}, newer than {SCHEMA_VERSION}")
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise SkillMemoryError(f"lesson store {self.path} is corrupt: {check}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # a committed lesson survives a power cut, not just a crash
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _statements(_SCHEMA):  # not executescript: it would COMMIT our transaction
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            _heal_index(conn)
            conn.execute("COMMIT")
        except SkillMemoryError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise SkillMemoryError(f"lesson store {self.path} is unusable: {exc}") from exc
        return conn

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise `SkillMemoryError`."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SkillMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise SkillMemoryError("the lesson store is closed")
            try:
                conn.execute("BEGIN")  # deferred: one consistent snapshot for the lesson rows and their sources
                try:
                    yield conn
                finally:
                    if conn.in_transaction:
                        conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise SkillMemoryError(f"lesson store read failed: {exc}") from exc

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: everything inside commits together or not at all."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise SkillMemoryError("the lesson store is closed")
            try:
                conn.execute("BEGIN IMMEDIATE")  # take the write lock before the reads a write depends on
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # also after a failed COMMIT: never leave the connection mid-write
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise SkillMemoryError(f"lesson store write failed: {exc}") from exc

    # ---- writes ----------------------------------------------------------------------------------------

    def learn_lesson(
        self, task: str, mistake: str, solution: str, *, source_trajectory_id: str = "", pinned: bool = False
    ) -> LearnResult:
        """Store a lesson, or strengthen a near-duplicate of a non-archived one (one transaction either way).

        Near-duplicate: token-set Jaccard ≥ `DEDUP_JACCARD` over task+mistake+solution with one of the
        `DEDUP_CANDIDATES` best BM25 matches (exact text match when the lesson has no content tokens). A
        strengthened lesson keeps its text and original provenance; uses += 1, last_used = now, pinned is
        OR-ed, and a different non-empty `source_trajectory_id` is added to its merged sources. The text is
        redacted (`distill.redact`) before anything else. Raises ValueError when `task` or `solution` is blank.
        """
        # Redacted like every other record (secrets and personal data never touch disk), and a lesson
        # carrying a key would otherwise paste it into every later prompt it is shown in.
        task, mistake, solution = (redact_text(_clean(part)) for part in (task, mistake, solution))
        if not task or not solution:
            raise ValueError("a lesson needs a task and a solution")
        source = source_trajectory_id.strip()
        columns = [" ".join(lesson_tokens(part)) for part in (task, mistake, solution)]
        tokens = frozenset(" ".join(columns).split())
        now = self._clock()
        with self._transaction() as conn:
            pk = _find_duplicate(conn, tokens, (task, mistake, solution))
            created = pk is None
            if pk is None:
                cur = conn.execute(
                    "INSERT INTO lessons (id, task, mistake, solution, source_trajectory_id, created_at, pinned)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (uuid.uuid4().hex, task, mistake, solution, source, now, int(pinned)),
                )
                pk = int(cur.lastrowid or 0)
                conn.execute("INSERT INTO lessons_fts (rowid, task, mistake, solution) VALUES (?, ?, ?, ?)",
                             (pk, *columns))
            else:
                conn.execute("UPDATE lessons SET uses = uses + 1, last_used = ?, pinned = MAX(pinned, ?)"
                             " WHERE pk = ?", (now, int(pinned), pk))
                conn.execute(
                    "INSERT INTO lesson_sources (lesson_id, trajectory_id, added_at)"
                    " SELECT id, ?, ? FROM lessons WHERE pk = ? AND ? != '' AND source_trajectory_id != ?"
                    " ON CONFLICT (lesson_id, trajectory_id) DO UPDATE SET merges = merges + 1",
                    (source, now, pk, source, source),
                )
            lesson = _load(conn, "WHERE l.pk = ?", (pk,))[0]
        log.info("lesson_learned", lesson_id=lesson.id, action="created" if created else "merged",
                 source_trajectory_id=source, uses=lesson.uses)
        return LearnResult(lesson=lesson, created=created, merged_into=None if created else lesson.id)

    def mark_used(self, ids: Iterable[str]) -> int:
        """uses += 1 and last_used = now for each distinct id; returns how many lessons were updated."""
        unique = sorted({i for i in ids if isinstance(i, str) and i})
        if not unique:
            return 0
        now = self._clock()
        with self._transaction() as conn:
            cur = conn.execute(f"UPDATE lessons SET uses = uses + 1, last_used = ? WHERE id IN ({_marks(unique)})",
                               (now, *unique))
            return cur.rowcount

    def archive(self, lesson_id: str, archived: bool = True) -> bool:
        """Hide (or with `archived=False` restore) a lesson from search and dedup; False if no such lesson."""
        return self._set_flag("archived", lesson_id, archived)

    def pin(self, lesson_id: str, pinned: bool = True) -> bool:
        """Pin (or unpin) a lesson so consolidation never demotes it; False if no such lesson."""
        return self._set_flag("pinned", lesson_id, pinned)

    def _set_flag(self, column: str, lesson_id: str, value: bool) -> bool:
        with self._transaction() as conn:
            cur = conn.execute(f"UPDATE lessons SET {column} = ? WHERE id = ?", (int(value), lesson_id))
            return cur.rowcount > 0

    def retract_lessons_from_trajectory(self, trajectory_id: str) -> int:
        """Remove every lesson whose `source_trajectory_id` is `trajectory_id` (table, index and merged
        sources together) and unlink it from the merged sources of the lessons it only strengthened (their
        uses drop by its merges). Returns the number of lessons removed; idempotent.

        The empty (or blank) id is the legacy sentinel: returns 0 without touching the database, so a buggy
        caller cannot scrub every provenance-less lesson at once.
        """
        if not isinstance(trajectory_id, str) or not trajectory_id.strip():
            return 0
        tid = trajectory_id.strip()
        with self._transaction() as conn:
            doomed = conn.execute("SELECT pk, id FROM lessons WHERE source_trajectory_id = ?", (tid,)).fetchall()
            if doomed:
                conn.executemany("DELETE FROM lessons_fts WHERE rowid = ?", [(pk,) for pk, _ in doomed])
                conn.executemany("DELETE FROM lesson_sources WHERE lesson_id = ?", [(i,) for _, i in doomed])
                conn.execute("DELETE FROM lessons WHERE source_trajectory_id = ?", (tid,))
            cur = conn.execute(
                "UPDATE lessons SET uses = MAX(0, uses - (SELECT merges FROM lesson_sources s"
                " WHERE s.lesson_id = lessons.id AND s.trajectory_id = ?))"
                " WHERE id IN (SELECT lesson_id FROM lesson_sources WHERE trajectory_id = ?)",
                (tid, tid),
            )
            unlinked = cur.rowcount
            conn.execute("DELETE FROM lesson_sources WHERE trajectory_id = ?", (tid,))
        log.info("lessons_retracted", trajectory_id=tid, count=len(doomed), unlinked=unlinked)
        return len(doomed)

    # ---- reads -----------------------------------------------------------------------------------------

    def search(self, query: str, k: int = 3, *, min_relevance: float = 0.2) -> list[ScoredLesson]:
        """The best `k` non-archived lessons for `query`, BM25 over the normalized text, best first.

        The FTS query is an OR of the query's content tokens, each quoted, so FTS syntax in the request is
        inert. A hit must share at least one token with the query and cover at least `min_relevance` of the
        query's (first `MAX_QUERY_TOKENS`) content tokens. Order: score descending, then id. Never writes.
        """
        terms = lesson_tokens(query)[:MAX_QUERY_TOKENS]
        if k <= 0 or not terms:
            return []
        wanted = frozenset(terms)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS}, f.task || ' ' || f.mistake || ' ' || f.solution,"
                f" bm25(lessons_fts, {TASK_WEIGHT}, 1.0, 1.0) AS rank"
                " FROM lessons_fts f JOIN lessons l ON l.pk = f.rowid"
                " WHERE lessons_fts MATCH ? AND l.archived = 0 ORDER BY rank LIMIT ?",
                (_fts_any(terms), max(4 * k, MIN_POOL)),
            ).fetchall()
            hits: list[ScoredLesson] = []
            for row in rows:
                overlap = len(wanted & frozenset(row[-2].split()))
                relevance = overlap / len(wanted)
                if overlap and relevance >= min_relevance:
                    hits.append(ScoredLesson(_row_lesson(row), score=-float(row[-1]), relevance=relevance))
            hits.sort(key=lambda h: (-h.score, h.lesson.id))
            hits = hits[:k]
            return _with_sources(conn, hits)

    def get(self, lesson_id: str) -> Lesson | None:
        """The lesson with this id (archived included), or None."""
        with self._read() as conn:
            found = _load(conn, "WHERE l.id = ?", (lesson_id,))
        return found[0] if found else None

    def all(self, include_archived: bool = False) -> list[Lesson]:
        """Every lesson, oldest first (archived ones only when asked)."""
        with self._read() as conn:
            return _load(conn, "" if include_archived else "WHERE l.archived = 0")

    def count(self, include_archived: bool = False) -> int:
        """How many lessons are stored (archived ones only when asked)."""
        where = "" if include_archived else " WHERE archived = 0"
        with self._read() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM lessons{where}").fetchone()[0])

    # ---- async wrappers for the daemon (sqlite work off the event loop) --------------------------------

    async def alearn_lesson(
        self, task: str, mistake: str, solution: str, *, source_trajectory_id: str = "", pinned: bool = False
    ) -> LearnResult:
        """`learn_lesson` in a worker thread."""
        return await asyncio.to_thread(
            self.learn_lesson, task, mistake, solution, source_trajectory_id=source_trajectory_id, pinned=pinned
        )

    async def asearch(self, query: str, k: int = 3, *, min_relevance: float = 0.2) -> list[ScoredLesson]:
        """`search` in a worker thread."""
        return await asyncio.to_thread(self.search, query, k, min_relevance=min_relevance)

    async def amark_used(self, ids: Iterable[str]) -> int:
        """`mark_used` in a worker thread."""
        return await asyncio.to_thread(self.mark_used, list(ids))

    async def aretract_lessons_from_trajectory(self, trajectory_id: str) -> int:
        """`retract_lessons_from_trajectory` in a worker thread (the empty-id sentinel never leaves the loop)."""
        if not isinstance(trajectory_id, str) or not trajectory_id.strip():
            return 0
        return await asyncio.to_thread(self.retract_lessons_from_trajectory, trajectory_id)


# ---- helpers (all run under the store's lock, inside its transaction where they write) ------------------


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";\n") if s.strip()]


def _heal_index(conn: sqlite3.Connection) -> None:
    """Rebuild the FTS index from the table if the two disagree (a store edited by hand, or by old code)."""
    lessons = conn.execute("SELECT COUNT(*) FROM lessons").fetchone()[0]
    indexed = conn.execute("SELECT COUNT(*) FROM lessons_fts").fetchone()[0]
    orphans = conn.execute("SELECT COUNT(*) FROM lessons l LEFT JOIN lessons_fts f ON f.rowid = l.pk"
                           " WHERE f.rowid IS NULL").fetchone()[0]
    if lessons == indexed and not orphans:
        return
    conn.execute("DELETE FROM lessons_fts")
    rows = conn.execute("SELECT pk, task, mistake, solution FROM lessons").fetchall()
    conn.executemany(
        "INSERT INTO lessons_fts (rowid, task, mistake, solution) VALUES (?, ?, ?, ?)",
        [(pk, *(" ".join(lesson_tokens(part)) for part in parts)) for pk, *parts in rows],
    )
    log.warning("lesson_index_rebuilt", lessons=lessons, indexed_before=indexed)


def _find_duplicate(conn: sqlite3.Connection, tokens: frozenset[str], texts: tuple[str, str, str]) -> int | None:
    """The pk of the non-archived lesson this one near-duplicates, or None."""
    if not tokens:  # nothing to compare by meaning: only an identical text counts
        row = conn.execute(
            "SELECT pk FROM lessons WHERE archived = 0 AND lower(task) = lower(?) AND lower(mistake) = lower(?)"
            " AND lower(solution) = lower(?) ORDER BY pk LIMIT 1", texts,
        ).fetchone()
        return int(row[0]) if row else None
    rows = conn.execute(
        "SELECT f.rowid, f.task || ' ' || f.mistake || ' ' || f.solution FROM lessons_fts f"
        " JOIN lessons l ON l.pk = f.rowid WHERE lessons_fts MATCH ? AND l.archived = 0"
        " ORDER BY bm25(lessons_fts) LIMIT ?",
        (_fts_any(sorted(tokens)[:MAX_QUERY_TOKENS]), DEDUP_CANDIDATES),
    ).fetchall()
    best: tuple[float, int] | None = None
    for pk, text in rows:
        score = jaccard(tokens, frozenset(text.split()))
        if score >= DEDUP_JACCARD and (best is None or score > best[0] or (score == best[0] and pk < best[1])):
            best = (score, int(pk))
    return best[1] if best else None


def _fts_any(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of `terms`: each one a quoted string, so operators and column filters in
    the user's text are plain words (`lesson_tokens` output has no quotes; doubling them is belt and braces)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def _load(conn: sqlite3.Connection, where: str, params: tuple[object, ...] = ()) -> list[Lesson]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM lessons l {where} ORDER BY l.pk", params).fetchall()
    sources = _sources(conn, [row[1] for row in rows])
    return [_row_lesson(row, sources.get(row[1], ())) for row in rows]


def _with_sources(conn: sqlite3.Connection, hits: list[ScoredLesson]) -> list[ScoredLesson]:
    sources = _sources(conn, [h.lesson.id for h in hits])
    if not sources:
        return hits
    return [ScoredLesson(replace(h.lesson, merged_sources=sources.get(h.lesson.id, ())), h.score, h.relevance)
            for h in hits]


def _sources(conn: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for chunk in (ids[i:i + 500] for i in range(0, len(ids), 500)):  # stay under SQLite's variable limit
        for lesson_id, trajectory_id in conn.execute(
            f"SELECT lesson_id, trajectory_id FROM lesson_sources WHERE lesson_id IN ({_marks(chunk)})"
            " ORDER BY added_at, trajectory_id", chunk,
        ):
            out.setdefault(lesson_id, []).append(trajectory_id)
    return {k: tuple(v) for k, v in out.items()}


def _row_lesson(row: Sequence[object], merged_sources: tuple[str, ...] = ()) -> Lesson:
    _pk, lesson_id, task, mistake, solution, source, created_at, uses, last_used, pinned, archived = row[:11]
    return Lesson(
        id=str(lesson_id), task=str(task), mistake=str(mistake), solution=str(solution),
        source_trajectory_id=str(source), created_at=str(created_at), uses=int(str(uses)),
        last_used=str(last_used) if last_used is not None else None,
        pinned=bool(pinned), archived=bool(archived), merged_sources=merged_sources,
    )


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _clean(text: object) -> str:
    return text.strip() if isinstance(text, str) else ""


__all__ = ["DEDUP_JACCARD", "SkillMemory", "SkillMemoryError"]
