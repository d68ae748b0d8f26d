"""SkillMemory: lessons with provenance in one SQLite file, BM25 retrieval via FTS5, retraction by trajectory.

Tables (`memory/schema.py`, schema version 3, `PRAGMA user_version`):

* `lessons` — one row per lesson; `pk` is the integer key the full-text index shares as its rowid.
* `lessons_fts` — FTS5 over the *normalized* task/mistake/solution (`lesson_tokens`, space-joined) of every
  non-retracted lesson, written in the same transaction as the row it indexes, so the index can never
  disagree with the table after a crash.
* `lesson_sources` — extra provenance: trajectories whose near-duplicate writes strengthened a lesson
  (`merges` = how many times), so retracting one of them is defined without retracting the lesson.
* `lesson_demos` — a preference lesson's demonstrations: a request and the reply the user accepted
  (`memory/demonstrations.py`), shown only with their lesson.

Lessons are data, not instructions (issue 12, item 3): every field is sanitised, redacted and cut to a hard
cap before it is stored (`memory/sanitize.py`), whoever the writer is.

Visibility: a lesson records the session that wrote it. A turn of session S is shown the live (not archived,
not retracted) lessons that S wrote plus the pinned ones; nothing else. Pinning is the operator's act
(`ghost-agent lessons pin ID`). Lessons without a session (legacy rows, writers that pass none) are shown
to no session until pinned. `search(..., session=None)` is the operator's view of every live lesson.

Concurrency: one connection (WAL, `synchronous=FULL`) guarded by one lock; every write is a single
`BEGIN IMMEDIATE … COMMIT`, which also excludes writers in other processes for the dedup check-then-insert.
Every sqlite error surfaces as `SkillMemoryError`. There is no in-memory cache: the file is the only tier.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ghost_agent.logging import get_logger
from ghost_agent.memory import demonstrations
from ghost_agent.memory.lessons import LearnResult, Lesson, ScoredLesson, lesson_tokens, relevance_tokens
from ghost_agent.memory.preference import LESSON_SOURCE as PREFERENCE_SOURCE
from ghost_agent.memory.preference import preference_text
from ghost_agent.memory.sanitize import (
    FIELD_CAPS,
    SESSION_CHARS,
    SOURCE_CHARS,
    clean_field,
    clean_label,
    visibility_key,
)
from ghost_agent.memory.schema import SCHEMA_VERSION, SchemaError, connect
from ghost_agent.text.words import jaccard
from ghost_agent.trajectories.record import parse_ts, utc_now_iso

log = get_logger("memory")

DEDUP_JACCARD = 0.8  # token-set Jaccard over task+mistake+solution at or above which a write strengthens
DEDUP_CANDIDATES = 20  # top-BM25 lessons compared for dedup (a ≥ 0.8 duplicate always ranks among them)
MAX_QUERY_TOKENS = 64  # bounds the FTS query for long requests and long code solutions
TASK_WEIGHT = 2.0  # requests resemble a lesson's task more than its mistake or solution
MIN_POOL = 32  # BM25 candidates fetched before the relevance floor filters them

_COLUMNS = (
    "l.pk, l.id, l.task, l.mistake, l.solution, l.source_trajectory_id, l.created_at, l.uses, l.last_used,"
    " l.pinned, l.archived, l.session_id, l.source, l.retracted_at, l.retract_reason"
)
_LIVE = "l.retracted_at IS NULL AND l.archived = 0"
# Who may see a lesson: the session that wrote it (by key: "" never matches) and everyone once it is pinned.
_VISIBLE = "(l.pinned = 1 OR (l.session_key != '' AND l.session_key = ?))"


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
            return connect(self.path, busy_timeout_s)
        except SchemaError as exc:
            raise SkillMemoryError(f"lesson store {self.path} {exc}") from exc
        except (OSError, sqlite3.Error) as exc:
            raise SkillMemoryError(f"lesson store {self.path} cannot be opened or is unusable: {exc}") from exc

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
        self,
        task: str,
        mistake: str,
        solution: str,
        *,
        source_trajectory_id: str = "",
        pinned: bool = False,
        session_id: str = "",
        source: str = "",
    ) -> LearnResult:
        """Store a lesson, or strengthen a near-duplicate the writer's session can see (one transaction).

        Every field is cleaned first (`sanitize.clean_field`: made inert, redacted, cut to its cap), whoever
        writes. `session_id` is the session the lesson comes from (it decides who sees it; "" = nobody until
        pinned) and `source` how it was learned (`recovery`, `reflection`, `operator` …).

        Near-duplicate: token-set Jaccard ≥ `DEDUP_JACCARD` over task+mistake+solution with one of the
        `DEDUP_CANDIDATES` best BM25 matches among the live lessons visible to the writer's session (the ones
        it wrote, the pinned ones); exact text match when the lesson has no content tokens. A strengthened
        lesson keeps its text, session and original provenance; uses += 1, last_used = now, pinned is OR-ed,
        and a different non-empty `source_trajectory_id` is added to its merged sources. Raises ValueError
        when `task` or `solution` is blank after cleaning.
        """
        task, mistake, solution = (
            clean_field(text, FIELD_CAPS[name])
            for name, text in (("task", task), ("mistake", mistake), ("solution", solution))
        )
        if not task or not solution:
            raise ValueError("a lesson needs a task and a solution")
        trajectory = source_trajectory_id.strip()
        key = visibility_key(session_id)
        shown_session, kind = clean_label(session_id, SESSION_CHARS), clean_label(source, SOURCE_CHARS)
        columns = [" ".join(lesson_tokens(part)) for part in (task, mistake, solution)]
        tokens = frozenset(" ".join(columns).split())
        now = self._clock()
        with self._transaction() as conn:
            pk = _find_duplicate(conn, tokens, (task, mistake, solution), key)
            created = pk is None
            if pk is None:
                cur = conn.execute(
                    "INSERT INTO lessons (id, task, mistake, solution, source_trajectory_id, created_at, pinned,"
                    " session_id, session_key, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (uuid.uuid4().hex, task, mistake, solution, trajectory, now, int(pinned), shown_session, key,
                     kind),
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
                    (trajectory, now, pk, trajectory, trajectory),
                )
            lesson = _load(conn, "WHERE l.pk = ?", (pk,))[0]
        log.info("lesson_learned", lesson_id=lesson.id, action="created" if created else "merged",
                 source_trajectory_id=trajectory, source=lesson.source, scoped=bool(key), uses=lesson.uses)
        return LearnResult(lesson=lesson, created=created, merged_into=None if created else lesson.id)

    def add_demonstration(self, source_trajectory_id: str, request: str, reply: str, *, trajectory_id: str
                          ) -> list[str]:
        """Attach the accepted (request, reply) of turn `trajectory_id` to the live preference lessons taught by
        the turn the user corrected (`demonstrations.attach`); the lesson ids it went to."""
        with self._transaction() as conn:
            ids = demonstrations.attach(conn, source_trajectory_id, request, reply, trajectory_id=trajectory_id,
                                        now=self._clock())
        if ids:
            log.info("demonstration_stored", lesson_ids=ids, trajectory_id=trajectory_id)
        return ids

    def demonstrations(self, lesson_ids: Sequence[str]) -> list[demonstrations.Demonstration]:
        """The demonstrations attached to these lessons (the caller passes only lessons the turn may see)."""
        with self._read() as conn:
            return demonstrations.load(conn, lesson_ids)

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
        """Hide (or with `archived=False` restore) a lesson from search and dedup, never deleting it; archiving
        unpins. False if there is no such lesson or it is retracted."""
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE lessons SET archived = ?, pinned = CASE WHEN ? THEN 0 ELSE pinned END"
                " WHERE id = ? AND retracted_at IS NULL", (int(archived), int(archived), lesson_id),
            )
            return cur.rowcount > 0

    def pin(self, lesson_id: str, pinned: bool = True) -> bool:
        """Pin (or unpin) a lesson: shown to every session, never consolidated away; pinning restores an
        archived lesson. False if there is no such lesson or it is retracted."""
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE lessons SET pinned = ?, archived = CASE WHEN ? THEN 0 ELSE archived END"
                " WHERE id = ? AND retracted_at IS NULL", (int(pinned), int(pinned), lesson_id),
            )
            return cur.rowcount > 0

    def retract(self, lesson_id: str, *, reason: str = "operator") -> bool:
        """Retract one lesson: never shown or merged into again, kept (marked, with `reason`) for the record.
        False if there is no such lesson or it already is retracted."""
        with self._transaction() as conn:
            row = conn.execute("SELECT pk FROM lessons WHERE id = ? AND retracted_at IS NULL",
                               (lesson_id,)).fetchone()
            if row is None:
                return False
            _mark_retracted(conn, [(int(row[0]), lesson_id)], self._clock(), reason)
            conn.execute("UPDATE lessons SET pinned = 0 WHERE pk = ?", (int(row[0]),))
        log.info("lesson_retracted", lesson_id=lesson_id, reason=reason)
        return True

    def retract_lessons_from_trajectory(self, trajectory_id: str, *, reason: str = "retracted") -> int:
        """Retract every unpinned live lesson whose `source_trajectory_id` is `trajectory_id` (marked with
        `reason`, out of the index, its merged sources dropped) and unlink the trajectory from the merged
        sources of the lessons it only strengthened (their uses drop by its merges). Returns the number of
        lessons retracted; idempotent.

        A pinned lesson is the operator's decision and stays (logged as `pinned_kept`). The empty (or blank)
        id is the legacy sentinel: returns 0 without touching the database, so a buggy caller cannot scrub
        every provenance-less lesson at once.
        """
        if not isinstance(trajectory_id, str) or not trajectory_id.strip():
            return 0
        tid = trajectory_id.strip()
        with self._transaction() as conn:
            doomed = conn.execute(
                "SELECT pk, id FROM lessons WHERE source_trajectory_id = ? AND retracted_at IS NULL AND pinned = 0",
                (tid,),
            ).fetchall()
            pinned_kept = conn.execute(
                "SELECT COUNT(*) FROM lessons WHERE source_trajectory_id = ? AND retracted_at IS NULL AND pinned = 1",
                (tid,),
            ).fetchone()[0]
            _mark_retracted(conn, [(int(pk), str(i)) for pk, i in doomed], self._clock(), reason)
            cur = conn.execute(
                "UPDATE lessons SET uses = MAX(0, uses - (SELECT merges FROM lesson_sources s"
                " WHERE s.lesson_id = lessons.id AND s.trajectory_id = ?))"
                " WHERE id IN (SELECT lesson_id FROM lesson_sources WHERE trajectory_id = ?)",
                (tid, tid),
            )
            unlinked = cur.rowcount
            conn.execute("DELETE FROM lesson_sources WHERE trajectory_id = ?", (tid,))
        log.info("lessons_retracted", trajectory_id=tid, count=len(doomed), unlinked=unlinked, reason=reason,
                 pinned_kept=pinned_kept)
        return len(doomed)

    # ---- consolidation (watchdog phase 2, REM dream: `watchdog/phases/rem_dream.py`) ---------------------

    def merge_lessons(self, survivor_id: str, duplicate_id: str) -> bool:
        """Fold a near-duplicate into a survivor: the duplicate is archived (never deleted); its provenance (its
        source trajectory and merged sources, with their merge counts) moves to the survivor, whose uses grow
        by the duplicate's uses + 1 and whose last_used becomes the later of the two. So retracting either
        source trajectory still reaches the survivor, exactly as for a write-time merge.

        Both lessons must be live (not archived, not retracted), unpinned and written by the same session —
        checked inside the transaction, so a lesson pinned meanwhile is never touched. False otherwise.
        """
        if survivor_id == duplicate_id:
            return False
        now = self._clock()
        with self._transaction() as conn:
            rows = {
                str(r[0]): r
                for r in conn.execute(
                    "SELECT id, session_key, source_trajectory_id, uses, last_used FROM lessons"
                    " WHERE id IN (?, ?) AND archived = 0 AND pinned = 0 AND retracted_at IS NULL",
                    (survivor_id, duplicate_id),
                )
            }
            if len(rows) != 2 or rows[survivor_id][1] != rows[duplicate_id][1]:
                return False
            _, _, survivor_source, _, survivor_used = rows[survivor_id]
            _, _, dup_source, dup_uses, dup_used = rows[duplicate_id]
            moved = [(str(t), int(m)) for t, m in conn.execute(
                "SELECT trajectory_id, merges FROM lesson_sources WHERE lesson_id = ?", (duplicate_id,))]
            if dup_source:
                moved.append((str(dup_source), 1))
            for trajectory, merges in moved:
                if trajectory != survivor_source:
                    conn.execute(
                        "INSERT INTO lesson_sources (lesson_id, trajectory_id, merges, added_at) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT (lesson_id, trajectory_id) DO UPDATE SET merges = merges + excluded.merges",
                        (survivor_id, trajectory, merges, now),
                    )
            conn.execute("DELETE FROM lesson_sources WHERE lesson_id = ?", (duplicate_id,))
            last_used = max((u for u in (survivor_used, dup_used) if u), default=None, key=_ts_key)
            conn.execute("UPDATE lessons SET uses = uses + ?, last_used = ? WHERE id = ?",
                         (int(dup_uses) + 1, last_used, survivor_id))
            conn.execute("UPDATE lessons SET archived = 1 WHERE id = ?", (duplicate_id,))
        return True

    def archive_if_unused(self, lesson_id: str, cutoff: str) -> bool:
        """Archive a live, unpinned lesson last used (else created) before the ISO time `cutoff`; the checks
        run inside the transaction. False when it does not qualify (pinned, used since, gone ...)."""
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT COALESCE(last_used, created_at) FROM lessons"
                " WHERE id = ? AND archived = 0 AND pinned = 0 AND retracted_at IS NULL", (lesson_id,),
            ).fetchone()
            if row is None or _ts_key(str(row[0])) >= _ts_key(cutoff):
                return False
            conn.execute("UPDATE lessons SET archived = 1 WHERE id = ?", (lesson_id,))
        return True

    def status_counts(self) -> dict[str, int]:
        """How many lessons are active / pinned / archived / retracted (one grouped query)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT CASE WHEN retracted_at IS NOT NULL THEN 'retracted' WHEN archived = 1 THEN 'archived'"
                " WHEN pinned = 1 THEN 'pinned' ELSE 'active' END AS status, COUNT(*) FROM lessons GROUP BY status"
            ).fetchall()
        return {str(status): int(n) for status, n in rows}

    # ---- reads -----------------------------------------------------------------------------------------

    def search(
        self, query: str, k: int = 3, *, min_relevance: float = 0.2, session: str | None = None
    ) -> list[ScoredLesson]:
        """The best `k` live lessons for `query` that `session` may see, BM25 over the normalized text, best
        first. `session=None` is the operator's view (every live lesson); a turn always passes its session.

        The FTS query is an OR of the query's content tokens, each quoted, so FTS syntax in the request is
        inert. A hit must share at least one token with the query and cover at least `min_relevance` of the
        query's (first `MAX_QUERY_TOKENS`) content tokens, counting only the ones that say what the request is
        about (`relevance_tokens`: "write" or "please" alone relate nothing). A stated preference (source
        "preference") may instead cover `min_relevance` of its own words: "I write dates as DD/MM/YYYY" is
        about dates wherever a long request mentions one. Order: score descending, then id. Never writes.
        """
        terms = lesson_tokens(query)[:MAX_QUERY_TOKENS]
        if k <= 0 or not terms:
            return []
        wanted = frozenset(relevance_tokens(terms))
        where, params = f"lessons_fts MATCH ? AND {_LIVE}", [_fts_any(terms)]
        if session is not None:
            where += f" AND {_VISIBLE}"
            params.append(visibility_key(session))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS}, f.task || ' ' || f.mistake || ' ' || f.solution,"
                f" bm25(lessons_fts, {TASK_WEIGHT}, 1.0, 1.0) AS rank"
                f" FROM lessons_fts f JOIN lessons l ON l.pk = f.rowid WHERE {where} ORDER BY rank LIMIT ?",
                (*params, max(4 * k, MIN_POOL)),
            ).fetchall()
            hits: list[ScoredLesson] = []
            for row in rows:
                lesson = _row_lesson(row)
                overlap = len(wanted & frozenset(row[-2].split()))
                relevance = overlap / len(wanted)
                keys = preference_keys(lesson)
                if keys:  # a stated preference also counts by how much of it the request touches
                    shared = len(keys & wanted)
                    overlap, relevance = max(overlap, shared), max(relevance, shared / len(keys))
                if overlap and relevance >= min_relevance:
                    hits.append(ScoredLesson(lesson, score=-float(row[-1]), relevance=relevance))
            hits.sort(key=lambda h: (-h.score, h.lesson.id))
            hits = hits[:k]
            return _with_sources(conn, hits)

    def get(self, lesson_id: str) -> Lesson | None:
        """The lesson with this id (archived and retracted included), or None."""
        with self._read() as conn:
            found = _load(conn, "WHERE l.id = ?", (lesson_id,))
        return found[0] if found else None

    def all(
        self, include_archived: bool = False, *, include_retracted: bool = False, written_by: str | None = None
    ) -> list[Lesson]:
        """Every lesson, oldest first: live ones, plus archived / retracted ones when asked; `written_by`
        keeps only the lessons that session wrote."""
        where, params = _filter(include_archived, include_retracted, written_by)
        with self._read() as conn:
            return _load(conn, where, params)

    def count(self, include_archived: bool = False, *, include_retracted: bool = False) -> int:
        """How many lessons are stored: live ones, plus archived / retracted ones when asked."""
        where, params = _filter(include_archived, include_retracted, None)
        with self._read() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM lessons l {where}", params).fetchone()[0])

    # ---- async wrappers for the daemon (sqlite work off the event loop) --------------------------------

    async def alearn_lesson(
        self,
        task: str,
        mistake: str,
        solution: str,
        *,
        source_trajectory_id: str = "",
        pinned: bool = False,
        session_id: str = "",
        source: str = "",
    ) -> LearnResult:
        """`learn_lesson` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(self.learn_lesson, task, mistake, solution, source_trajectory_id=source_trajectory_id,
                              pinned=pinned, session_id=session_id, source=source)
        )

    async def asearch(
        self, query: str, k: int = 3, *, min_relevance: float = 0.2, session: str | None = None
    ) -> list[ScoredLesson]:
        """`search` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(self.search, query, k, min_relevance=min_relevance, session=session)
        )

    async def amark_used(self, ids: Iterable[str]) -> int:
        """`mark_used` in a worker thread."""
        return await asyncio.to_thread(self.mark_used, list(ids))

    async def aretract_lessons_from_trajectory(self, trajectory_id: str, *, reason: str = "retracted") -> int:
        """`retract_lessons_from_trajectory` in a worker thread (the empty-id sentinel never leaves the loop)."""
        if not isinstance(trajectory_id, str) or not trajectory_id.strip():
            return 0
        return await asyncio.to_thread(
            functools.partial(self.retract_lessons_from_trajectory, trajectory_id, reason=reason)
        )


# ---- helpers (all run under the store's lock, inside its transaction where they write) ------------------


def _filter(include_archived: bool, include_retracted: bool, written_by: str | None) -> tuple[str, tuple[str, ...]]:
    clauses, params = [], []
    if not include_archived:
        clauses.append("l.archived = 0")
    if not include_retracted:
        clauses.append("l.retracted_at IS NULL")
    if written_by is not None:
        clauses.append("l.session_key = ?")
        params.append(visibility_key(written_by))
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _mark_retracted(conn: sqlite3.Connection, doomed: list[tuple[int, str]], now: str, reason: str) -> None:
    """Retract these (pk, id) lessons: marked, out of the index, their merged sources dropped (a merged
    corroboration does not save a lesson whose original turn was refuted)."""
    if not doomed:
        return
    conn.executemany("DELETE FROM lessons_fts WHERE rowid = ?", [(pk,) for pk, _ in doomed])
    conn.executemany("DELETE FROM lesson_sources WHERE lesson_id = ?", [(i,) for _, i in doomed])
    conn.executemany("UPDATE lessons SET retracted_at = ?, retract_reason = ? WHERE pk = ?",
                     [(now, clean_label(reason, SOURCE_CHARS), pk) for pk, _ in doomed])


def _find_duplicate(
    conn: sqlite3.Connection, tokens: frozenset[str], texts: tuple[str, str, str], key: str
) -> int | None:
    """The pk of the live lesson, visible to the writer's session (`key`), this one near-duplicates, or None.

    Only lessons the writer can see qualify: merging into another session's lesson would hide the write from
    the very session that made it.
    """
    scope = "l.archived = 0 AND l.retracted_at IS NULL AND (l.pinned = 1 OR l.session_key = ?)"
    if not tokens:  # nothing to compare by meaning: only an identical text counts
        row = conn.execute(
            f"SELECT pk FROM lessons l WHERE {scope} AND lower(task) = lower(?) AND lower(mistake) = lower(?)"
            " AND lower(solution) = lower(?) ORDER BY pk LIMIT 1", (key, *texts),
        ).fetchone()
        return int(row[0]) if row else None
    rows = conn.execute(
        "SELECT f.rowid, f.task || ' ' || f.mistake || ' ' || f.solution FROM lessons_fts f"
        f" JOIN lessons l ON l.pk = f.rowid WHERE lessons_fts MATCH ? AND {scope}"
        " ORDER BY bm25(lessons_fts) LIMIT ?",
        (_fts_any(sorted(tokens)[:MAX_QUERY_TOKENS]), key, DEDUP_CANDIDATES),
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


def preference_keys(lesson: Lesson) -> frozenset[str]:
    """The relevance tokens of a stated preference's words (empty for any other lesson)."""
    if lesson.source != PREFERENCE_SOURCE:
        return frozenset()
    return frozenset(relevance_tokens(lesson_tokens(preference_text(lesson.solution) or "")))


def _row_lesson(row: Sequence[object], merged_sources: tuple[str, ...] = ()) -> Lesson:
    (_pk, lesson_id, task, mistake, solution, source_trajectory, created_at, uses, last_used, pinned, archived,
     session, source, retracted_at, retract_reason) = row[:15]
    return Lesson(
        id=str(lesson_id), task=str(task), mistake=str(mistake), solution=str(solution),
        source_trajectory_id=str(source_trajectory), created_at=str(created_at), uses=int(str(uses)),
        last_used=str(last_used) if last_used is not None else None,
        pinned=bool(pinned), archived=bool(archived), merged_sources=merged_sources,
        session_id=str(session), source=str(source),
        retracted_at=str(retracted_at) if retracted_at is not None else None, retract_reason=str(retract_reason),
    )


def _ts_key(value: str) -> float:
    """An ISO time stamp as epoch seconds for comparison (an unparseable one sorts as the newest: kept)."""
    try:
        return parse_ts(value).timestamp()
    except (TypeError, ValueError):
        return float("inf")


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


__all__ = ["DEDUP_JACCARD", "SCHEMA_VERSION", "SkillMemory", "SkillMemoryError"]
