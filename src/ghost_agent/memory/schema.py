"""The lesson store's SQLite schema, its migration and the index repair (used by `SkillMemory` at open).

Version 1: `lessons`, `lessons_fts` (FTS5 over the normalized text, sharing the rowid), `lesson_sources`.
Version 2 (issue 12, item 3) adds to `lessons`: `session_id` (the writing session as shown, redacted),
`session_key` (a hash of the full session id: what visibility compares), `source` (how the lesson was
learned), `retracted_at` and `retract_reason` (retraction keeps the row, marked; the FTS row goes). A
version-1 file is migrated in place at open; its lessons become `source = 'legacy'` with no session, which
the visibility rule shows to no session until the operator pins one. Version 3 (issue 22) adds `lesson_demos`:
a preference lesson's demonstrations (`memory/demonstrations.py`); older files gain the empty table at open.

The FTS index holds exactly the non-retracted lessons; `heal_index` rebuilds it when it does not.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ghost_agent.logging import get_logger
from ghost_agent.memory import demonstrations
from ghost_agent.memory.lessons import lesson_tokens

SCHEMA_VERSION = 3

_SCHEMA_V1 = """
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
_V2_COLUMNS = (
    ("session_id", "TEXT NOT NULL DEFAULT ''"),
    ("session_key", "TEXT NOT NULL DEFAULT ''"),
    ("source", "TEXT NOT NULL DEFAULT ''"),
    ("retracted_at", "TEXT"),
    ("retract_reason", "TEXT NOT NULL DEFAULT ''"),
)
_V2_INDEX = "CREATE INDEX IF NOT EXISTS lessons_by_session ON lessons(session_key)"


class SchemaError(Exception):
    """The file cannot be used as a lesson store (the caller wraps it with the path)."""


def connect(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    """Open (creating or migrating) the store at `path`; raises SchemaError or sqlite3/OS errors.

    Checks before touching anything: schema version not newer than ours, `quick_check` ok. Then WAL,
    `synchronous=FULL` (a committed lesson survives a power cut), foreign keys, and in one write transaction:
    the tables, the migration to the current version, the index repair.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    try:
        version = _version(conn)
        if version > SCHEMA_VERSION:
            raise SchemaError(f"has schema {version}, newer than {SCHEMA_VERSION}")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise SchemaError(f"is corrupt: {check}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            migrate(conn, _version(conn))  # re-read under the write lock: another process may have migrated
            heal_index(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a store at `version` (0 = new file) to `SCHEMA_VERSION`, inside the caller's transaction."""
    for statement in _statements(_SCHEMA_V1):  # not executescript: it would COMMIT our transaction
        conn.execute(statement)
    if version < 2:
        present = {row[1] for row in conn.execute("PRAGMA table_info(lessons)")}
        for name, decl in _V2_COLUMNS:
            if name not in present:
                conn.execute(f"ALTER TABLE lessons ADD COLUMN {name} {decl}")
        if version == 1:  # lessons written before provenance of sessions: no session, shown only when pinned
            conn.execute("UPDATE lessons SET source = 'legacy' WHERE source = ''")
    conn.execute(_V2_INDEX)
    conn.execute(demonstrations.SCHEMA)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def heal_index(conn: sqlite3.Connection) -> bool:
    """Rebuild the FTS index from the live (non-retracted) lessons if the two disagree (a store edited by
    hand, or by old code); returns True when it rebuilt."""
    live = conn.execute("SELECT COUNT(*) FROM lessons WHERE retracted_at IS NULL").fetchone()[0]
    indexed = conn.execute("SELECT COUNT(*) FROM lessons_fts").fetchone()[0]
    orphans = conn.execute(
        "SELECT COUNT(*) FROM lessons l LEFT JOIN lessons_fts f ON f.rowid = l.pk"
        " WHERE l.retracted_at IS NULL AND f.rowid IS NULL"
    ).fetchone()[0]
    if live == indexed and not orphans:
        return False
    conn.execute("DELETE FROM lessons_fts")
    rows = conn.execute("SELECT pk, task, mistake, solution FROM lessons WHERE retracted_at IS NULL").fetchall()
    conn.executemany(
        "INSERT INTO lessons_fts (rowid, task, mistake, solution) VALUES (?, ?, ?, ?)",
        [(pk, *(" ".join(lesson_tokens(part)) for part in parts)) for pk, *parts in rows],
    )
    get_logger("memory").warning("lesson_index_rebuilt", lessons=live, indexed_before=indexed)
    return True


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";\n") if s.strip()]


__all__ = ["SCHEMA_VERSION", "SchemaError", "connect", "heal_index", "migrate"]
