"""SkillMemory on real SQLite files: schema, retrieval with its floor, dedup, retraction, durability, errors."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ghost_agent.memory import Lesson, ScoredLesson, SkillMemory, SkillMemoryError, lesson_tokens
from ghost_agent.memory.store import DEDUP_JACCARD

LOC = ("count lines of code in a project", "ran wc -l in the sandbox and answered with a number",
       "give the user the find | xargs wc -l command")
CSV = ("load a csv file with pandas", "read_csv failed on a semicolon separated file",
       "pass sep=';' to pandas.read_csv")
HTTP = ("download a web page over https", "urllib raised an ssl certificate error",
        "use httpx with verify pointing at the system certificate bundle")


def ticking_clock() -> Callable[[], str]:
    """Distinct, increasing ISO stamps so last_used changes are observable."""
    counter = itertools.count()
    return lambda: f"2026-01-01T00:00:{next(counter):02d}+00:00"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "skills" / "lessons.sqlite3"


@pytest.fixture
def memory(db: Path) -> Iterator[SkillMemory]:
    store = SkillMemory(db, clock=ticking_clock())
    yield store
    store.close()


def raw(db: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Read the file with a separate connection: what is really on disk, not what the store says."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def ids(hits: list[ScoredLesson]) -> list[str]:
    return [h.lesson.id for h in hits]


# ---- schema and record ---------------------------------------------------------------------------------


def test_schema_on_disk(memory: SkillMemory, db: Path) -> None:
    names = {row[0] for row in raw(db, "SELECT name FROM sqlite_master")}
    assert {"lessons", "lessons_fts", "lesson_sources", "lesson_demos"} <= names
    assert raw(db, "PRAGMA journal_mode")[0][0] == "wal"
    assert raw(db, "PRAGMA user_version")[0][0] == 3


def test_learn_roundtrip_and_record(memory: SkillMemory) -> None:
    result = memory.learn_lesson(*LOC, source_trajectory_id="traj-1")
    assert result.created and result.merged_into is None
    lesson = result.lesson
    assert (lesson.task, lesson.mistake, lesson.solution) == LOC
    assert lesson.source_trajectory_id == "traj-1" and lesson.uses == 0 and lesson.last_used is None
    assert lesson.created_at.startswith("2026-01-01")
    assert memory.get(lesson.id) == lesson
    assert Lesson.from_dict(lesson.to_dict()) == lesson
    assert memory.all() == [lesson] and memory.count() == 1


def test_from_dict_reads_legacy_and_rejects_missing_id() -> None:
    legacy = Lesson.from_dict({"id": "old", "task": "t", "solution": "s"})
    assert legacy.source_trajectory_id == "" and legacy.merged_sources == () and not legacy.pinned
    with pytest.raises(ValueError):
        Lesson.from_dict({"task": "t"})


def test_secrets_are_redacted_before_they_reach_disk(memory: SkillMemory, db: Path) -> None:
    key = "sk-" + "A1b2C3d4E5" * 2 + "T3BlbkFJ" + "f6G7h8I9j0" * 2
    lesson = memory.learn_lesson("call the openai api", f"hard-coded {key} in the script",
                                 "read OPENAI_API_KEY from the environment; mail ops@example.com").lesson
    assert key not in lesson.mistake and "ops@example.com" not in lesson.solution
    on_disk = b"".join(p.read_bytes() for p in db.parent.iterdir())  # the database, its WAL and shm
    assert key.encode() not in on_disk and b"ops@example.com" not in on_disk
    assert b"read OPENAI_API_KEY from the environment" in on_disk  # the rest of the text is kept


def test_blank_task_or_solution_is_rejected(memory: SkillMemory) -> None:
    with pytest.raises(ValueError):
        memory.learn_lesson("  ", "m", "s")
    with pytest.raises(ValueError):
        memory.learn_lesson("t", "m", "")
    assert memory.count() == 0


def test_lesson_tokens_normalization() -> None:
    assert lesson_tokens("How do I parse the Files in my_dir? Files!") == ["parse", "file", "my_dir"]
    assert lesson_tokens("What's O'Brien's status") == ["obrien", "status"]
    assert lesson_tokens(None) == [] and lesson_tokens("a b c") == []


# ---- retrieval -----------------------------------------------------------------------------------------


def test_search_finds_similar_request_not_unrelated(memory: SkillMemory) -> None:
    loc = memory.learn_lesson(*LOC).lesson
    csv = memory.learn_lesson(*CSV).lesson
    hits = memory.search("how many lines of code does my project have?")
    assert ids(hits) == [loc.id]
    assert hits[0].relevance > 0.5 and hits[0].score > 0
    assert ids(memory.search("read this csv file with pandas please")) == [csv.id]
    assert memory.search("bake a chocolate cake for my grandmother's birthday") == []
    assert memory.search("") == [] and memory.search("the a of") == [] and memory.search("code", k=0) == []


def test_relevance_floor_drops_weak_overlap(memory: SkillMemory) -> None:
    memory.learn_lesson(*LOC)
    # one shared token ("code") out of six content tokens: 1/6 < 0.2, so it is not shown by default
    query = "review code style naming conventions docstrings"
    assert len(lesson_tokens(query)) == 6
    assert memory.search(query) == []
    weak = memory.search(query, min_relevance=0.1)
    assert len(weak) == 1 and weak[0].relevance == pytest.approx(1 / 6)


def test_search_order_is_by_score_and_k_bounds(memory: SkillMemory) -> None:
    for i in range(6):
        memory.learn_lesson(f"plot chart number{i} with matplotlib", f"forgot savefig{i}", f"call plt.savefig{i}")
    strong = memory.learn_lesson("plot chart with matplotlib matplotlib chart plot", "", "use plt.show").lesson
    hits = memory.search("plot a matplotlib chart", k=3)
    assert len(hits) == 3 and hits[0].lesson.id == strong.id
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert ids(memory.search("plot a matplotlib chart", k=3)) == ids(hits)  # deterministic


@pytest.mark.parametrize("query", [
    '"); DROP TABLE lessons; --',
    "title:x AND NOT y*",
    'NEAR(lines code, 2) OR "unterminated',
    "task:count ^lines {code} (project",
    "* ** AND OR NOT",
    "lines-of-code + project's files ; \\ '",
    "\x00\ufeffcode\u200b lines",
])
def test_fts_syntax_in_queries_is_inert(memory: SkillMemory, db: Path, query: str) -> None:
    memory.learn_lesson(*LOC)
    memory.learn_lesson(*CSV)
    memory.search(query)  # must not raise
    assert memory.count() == 2 and raw(db, "SELECT COUNT(*) FROM lessons")[0][0] == 2


def test_operator_words_are_searchable_as_words(memory: SkillMemory) -> None:
    lesson = memory.learn_lesson("find words near each other", "used NOT and AND as operators", "quote them").lesson
    assert ids(memory.search("near NOT AND operators")) == [lesson.id]


def test_archived_lessons_are_not_searched(memory: SkillMemory) -> None:
    loc = memory.learn_lesson(*LOC).lesson
    assert memory.archive(loc.id)
    assert memory.search("lines of code in my project") == []
    assert memory.count() == 0 and memory.count(include_archived=True) == 1
    assert memory.all() == [] and memory.all(include_archived=True)[0].archived
    assert memory.archive(loc.id, archived=False)
    assert ids(memory.search("lines of code in my project")) == [loc.id]
    assert not memory.archive("no-such-id") and not memory.pin("no-such-id")


def test_mark_used(memory: SkillMemory) -> None:
    a = memory.learn_lesson(*LOC).lesson
    b = memory.learn_lesson(*CSV).lesson
    assert memory.mark_used([a.id, a.id, "unknown"]) == 1
    after = memory.get(a.id)
    assert after is not None and after.uses == 1 and after.last_used is not None
    assert after.last_used > a.created_at
    assert memory.get(b.id) == b
    assert memory.mark_used([]) == 0


# ---- write-time dedup ----------------------------------------------------------------------------------


def test_near_duplicate_strengthens_existing(memory: SkillMemory) -> None:
    first = memory.learn_lesson(*LOC, source_trajectory_id="t1").lesson
    near = ("count the lines of code in a project", LOC[1], LOC[2] + " please")
    result = memory.learn_lesson(*near, source_trajectory_id="t2", pinned=True)
    assert not result.created and result.merged_into == first.id
    assert memory.count() == 1
    merged = memory.get(first.id)
    assert merged is not None
    assert merged.uses == 1 and merged.last_used is not None and merged.pinned
    assert (merged.task, merged.solution, merged.source_trajectory_id) == (LOC[0], LOC[2], "t1")
    assert merged.merged_sources == ("t2",)
    memory.learn_lesson(*near, source_trajectory_id="t2")  # same source twice: one source row, two merges
    memory.learn_lesson(*near, source_trajectory_id="t1")  # its own source is not an extra one
    memory.learn_lesson(*near)  # no provenance: strengthens, records nothing
    final = memory.get(first.id)
    assert final is not None and final.uses == 4 and final.merged_sources == ("t2",)


def test_distinct_lessons_are_both_kept(memory: SkillMemory) -> None:
    a = memory.learn_lesson(*LOC)
    # same task, a different mistake and fix: related but not a duplicate
    b = memory.learn_lesson(LOC[0], "counted blank lines and comments too", "use cloc to count only code lines")
    assert a.created and b.created and memory.count() == 2


def test_dedup_threshold_is_the_documented_jaccard(memory: SkillMemory) -> None:
    memory.learn_lesson("alpha beta gamma delta epsilon", "zeta eta", "theta iota kappa")  # 10 tokens
    # 9 shared of 11 in the union → 0.82 ≥ 0.8: merges
    assert not memory.learn_lesson("alpha beta gamma delta epsilon", "zeta eta", "theta iota omicron").created
    # 8 shared of 11 → 0.73: a new lesson
    assert memory.learn_lesson("alpha beta gamma delta epsilon", "zeta", "theta iota omicron").created
    assert DEDUP_JACCARD == 0.8 and memory.count() == 2


def test_archived_lesson_is_not_a_dedup_target(memory: SkillMemory) -> None:
    old = memory.learn_lesson(*LOC).lesson
    memory.archive(old.id)
    assert memory.learn_lesson(*LOC).created


def test_lessons_without_content_tokens_dedup_on_exact_text(memory: SkillMemory) -> None:
    assert memory.learn_lesson("do it", "", "try again").created
    assert not memory.learn_lesson("Do it", "", "try AGAIN").created
    assert memory.count() == 1


# ---- retraction ----------------------------------------------------------------------------------------


def test_retraction_removes_exactly_that_trajectory(memory: SkillMemory, db: Path) -> None:
    poisoned = memory.learn_lesson(*LOC, source_trajectory_id="bad").lesson
    memory.learn_lesson("list python files in a project", "", "use glob", source_trajectory_id="bad")
    keep = memory.learn_lesson(*CSV, source_trajectory_id="good").lesson
    legacy = memory.learn_lesson(*HTTP).lesson
    assert memory.retract_lessons_from_trajectory("bad", reason="verifier") == 2
    assert memory.all() == [keep, legacy]
    # retracted, not deleted: kept for the record with why, never shown again
    retracted = memory.get(poisoned.id)
    assert retracted is not None and retracted.status == "retracted" and retracted.retract_reason == "verifier"
    assert retracted.retracted_at is not None and not retracted.pinned
    assert len(memory.all(include_retracted=True)) == 4 and memory.count(include_retracted=True) == 4
    assert memory.search("lines of code in my project") == []
    assert memory.search("lines of code in my project", session=None) == []
    assert ids(memory.search("pandas csv file")) == [keep.id]
    # the full-text index lost the rows too, not just the table
    assert raw(db, "SELECT COUNT(*) FROM lessons_fts")[0][0] == 2
    assert raw(db, "SELECT COUNT(*) FROM lessons_fts WHERE lessons_fts MATCH 'wc'")[0][0] == 0
    assert memory.retract_lessons_from_trajectory("bad") == 0  # idempotent
    assert memory.count() == 2


def test_retracting_a_merged_source_unlinks_it_without_deleting(memory: SkillMemory) -> None:
    lesson = memory.learn_lesson(*LOC, source_trajectory_id="t1").lesson
    memory.learn_lesson(*LOC, source_trajectory_id="t2")
    memory.learn_lesson(*LOC, source_trajectory_id="t2")
    memory.learn_lesson(*LOC, source_trajectory_id="t3")
    assert memory.retract_lessons_from_trajectory("t2") == 0
    after = memory.get(lesson.id)
    assert after is not None and after.merged_sources == ("t3",) and after.uses == 1
    assert memory.retract_lessons_from_trajectory("t1") == 1  # the original provenance takes it out
    assert memory.count() == 0 and memory.retract_lessons_from_trajectory("t3") == 0


def _file_state(db: Path) -> list[tuple[str, int, int]]:
    files = [p for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if p.exists()]
    return [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]


async def test_empty_id_sentinel_never_touches_the_database(db: Path) -> None:
    memory = SkillMemory(db, busy_timeout_s=0.05)
    legacy = memory.learn_lesson(*LOC).lesson  # source_trajectory_id=""
    assert legacy.source_trajectory_id == ""
    before = _file_state(db)
    time.sleep(0.01)  # a write now would move the mtime
    # Another connection holds the write lock: any write attempt from the store would fail with "locked".
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        for sentinel in ("", "   "):
            assert memory.retract_lessons_from_trajectory(sentinel) == 0
            assert await memory.aretract_lessons_from_trajectory(sentinel) == 0
        with pytest.raises(SkillMemoryError):
            memory.retract_lessons_from_trajectory("real-id")  # the contrast: a real id does write
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert _file_state(db) == before
    assert memory.all() == [legacy]
    memory.close()


# ---- durability, healing and errors --------------------------------------------------------------------


def test_close_and_reopen_keeps_everything(db: Path) -> None:
    with SkillMemory(db) as memory:
        a = memory.learn_lesson(*LOC, source_trajectory_id="t1").lesson
        memory.learn_lesson(*LOC, source_trajectory_id="t2")
        memory.learn_lesson(*CSV, pinned=True)
    with SkillMemory(db) as again:
        assert again.count() == 2
        reopened = again.get(a.id)
        assert reopened is not None and reopened.merged_sources == ("t2",) and reopened.uses == 1
        assert ids(again.search("lines of code")) == [a.id]
        assert any(lesson.pinned for lesson in again.all())


def test_killed_writer_leaves_a_consistent_store(db: Path) -> None:
    """SIGKILL a process mid-stream of writes: every lesson that made it is whole, and indexed."""
    script = textwrap.dedent(f"""
        import sys
        from ghost_agent.memory.store import SkillMemory
        m = SkillMemory({str(db)!r})
        for i in range(100000):
            m.learn_lesson(f"task word{{i}} extra{{i}}", f"mistake miss{{i}}", f"solution fix{{i}} more{{i}}",
                           source_trajectory_id=f"t{{i}}")
            if i == 20:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the store's log lines come first (structlog prints to stdout by default)
            if line.strip() == "ready":
                break
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with SkillMemory(db) as memory:
        n = memory.count()
        assert n > 20
        assert raw(db, "SELECT COUNT(*) FROM lessons_fts")[0][0] == n
        for lesson in memory.all()[-3:]:
            assert lesson.id in ids(memory.search(lesson.task))


def test_out_of_sync_index_is_rebuilt_at_open(db: Path) -> None:
    with SkillMemory(db) as memory:
        a = memory.learn_lesson(*LOC).lesson
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM lessons_fts")
    conn.commit()
    conn.close()
    with SkillMemory(db) as memory:
        assert ids(memory.search("lines of code")) == [a.id]


def test_corrupt_file_is_a_clear_error(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a sqlite database" * 200)
    with pytest.raises(SkillMemoryError, match="lessons.sqlite3"):
        SkillMemory(db)


def test_damaged_pages_are_a_clear_error(db: Path) -> None:
    with SkillMemory(db) as memory:
        for i in range(200):
            memory.learn_lesson(f"task word{i}", "mistake", f"solution fix{i} " + "x" * 200)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[3 * page:6 * page] = os.urandom(3 * page)  # scribble over interior pages, keep the header
    db.write_bytes(bytes(data))
    with pytest.raises(SkillMemoryError):
        SkillMemory(db)


def test_newer_schema_and_unopenable_paths_are_errors(tmp_path: Path, db: Path) -> None:
    with SkillMemory(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(SkillMemoryError, match="newer"):
        SkillMemory(db)
    (tmp_path / "a-dir.sqlite3").mkdir()
    with pytest.raises(SkillMemoryError):
        SkillMemory(tmp_path / "a-dir.sqlite3")


def test_closed_store_raises(db: Path) -> None:
    memory = SkillMemory(db)
    memory.close()
    memory.close()  # idempotent
    with pytest.raises(SkillMemoryError):
        memory.search("lines of code")
    with pytest.raises(SkillMemoryError):
        memory.learn_lesson(*LOC)
    assert memory.retract_lessons_from_trajectory("") == 0


async def test_async_wrappers(memory: SkillMemory) -> None:
    learned = await memory.alearn_lesson(*LOC, source_trajectory_id="t1")
    hits = await memory.asearch("lines of code in my project", 2)
    assert ids(hits) == [learned.lesson.id]
    assert await memory.amark_used(ids(hits)) == 1
    assert await memory.aretract_lessons_from_trajectory("t1") == 1
    assert await memory.asearch("lines of code") == []
