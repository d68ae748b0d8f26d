"""Concurrent turns: threads (and a second connection) learning, searching and retracting at once."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from ghost_agent.memory import SkillMemory

THREADS = 8
PER_THREAD = 12
RETRACTED = 4  # per thread


def run_threads(target: Callable[[int], None], n: int = THREADS) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def wrapped(t: int) -> None:
        try:
            barrier.wait()
            target(t)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted on by the test
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    return errors


def unique_lesson(t: int, i: int) -> tuple[str, str, str]:
    """Every token is unique to (t, i), so no two of these ever dedup into each other."""
    return f"handle widget{t}x{i} gadget{t}x{i}", f"forgot flag{t}x{i}", f"pass option{t}x{i} value{t}x{i}"


def test_threads_learn_search_retract_with_consistent_counts(tmp_path: Path) -> None:
    db = tmp_path / "lessons.sqlite3"
    shared = SkillMemory(db)
    second = SkillMemory(db)  # another connection on the same file: locking must hold across connections
    seen: dict[int, int] = {}

    def work(t: int) -> None:
        store = shared if t % 2 == 0 else second
        for i in range(PER_THREAD):
            store.learn_lesson(*unique_lesson(t, i), source_trajectory_id=f"traj-{t}-{i}")
            store.search(f"widget{t}x{i} gadget{t}x{i}")
            store.search("handle widget option")  # everyone's lessons: reads across writers
        assert not store.learn_lesson(*unique_lesson(t, 0), source_trajectory_id=f"dup-{t}").created
        for i in range(RETRACTED):
            assert store.retract_lessons_from_trajectory(f"traj-{t}-{i}") == 1
            assert store.retract_lessons_from_trajectory(f"traj-{t}-{i}") == 0
        hits = store.search(f"widget{t}x{PER_THREAD - 1} gadget{t}x{PER_THREAD - 1}")
        seen[t] = len(hits)

    errors = run_threads(work)
    assert errors == []
    expected = THREADS * (PER_THREAD - RETRACTED)
    assert shared.count() == second.count() == expected
    assert seen == {t: 1 for t in range(THREADS)}
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT COUNT(*) FROM lessons_fts").fetchone()[0] == expected
        assert conn.execute("SELECT COUNT(*) FROM lesson_sources").fetchone()[0] == 0  # dup-t lessons retracted
    finally:
        conn.close()
    shared.close()
    second.close()


def test_racing_duplicates_collapse_into_one_lesson(tmp_path: Path) -> None:
    """The dedup check and the insert are one transaction: 8 simultaneous writes of one lesson → 1 row."""
    db = tmp_path / "lessons.sqlite3"
    stores = [SkillMemory(db), SkillMemory(db)]
    lesson = ("count lines of code in a project", "answered with a number", "give the wc -l command")

    def work(t: int) -> None:
        stores[t % 2].learn_lesson(*lesson, source_trajectory_id=f"traj-{t}")

    assert run_threads(work) == []
    [only] = stores[0].all()
    assert only.uses == THREADS - 1
    assert len(only.merged_sources) == THREADS - 1
    assert only.source_trajectory_id not in only.merged_sources
    for store in stores:
        store.close()


async def test_concurrent_async_turns(tmp_path: Path) -> None:
    memory = SkillMemory(tmp_path / "lessons.sqlite3")

    async def turn(t: int) -> None:
        await memory.alearn_lesson(*unique_lesson(t, 0), source_trajectory_id=f"turn-{t}")
        hits = await memory.asearch(f"widget{t}x0 gadget{t}x0")
        await memory.amark_used([h.lesson.id for h in hits])
        if t % 2:
            assert await memory.aretract_lessons_from_trajectory(f"turn-{t}") == 1

    await asyncio.gather(*(turn(t) for t in range(THREADS)))
    remaining = memory.all()
    assert len(remaining) == THREADS // 2
    assert all(lesson.uses == 1 for lesson in remaining)
    memory.close()
