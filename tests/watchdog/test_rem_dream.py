"""Phase 2, REM dream: merges near-duplicate lessons (archiving, never deleting), archives stale ones, and
never touches pinned lessons — on the real app's lesson store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from ghost_agent.home import GhostHome
from ghost_agent.memory.lessons import Lesson, lesson_tokens
from ghost_agent.memory.store import DEDUP_JACCARD, SkillMemory
from ghost_agent.watchdog.phases.rem_dream import plan_merges, stale_lessons
from tests.watchdog.conftest import SCALE, watchdog_app

LOG_B = ("parse the access log file and count the error lines",
         "opened access.log without checking whether it exists",
         "list the workspace files first, then read the log by its real name")
LOG_C = ("parse access log file, count error lines per hour",
         "opened access.log without checking that it exists",
         "list workspace files first then open the log by its actual name")
LOG_PINNED = ("parse the access log file and count error lines per hour",
              "opened access.log without checking it exists",
              "list the workspace files, then read the log by name")


def jaccard(a: tuple[str, str, str], b: tuple[str, str, str]) -> float:
    x, y = set(lesson_tokens("\n".join(a))), set(lesson_tokens("\n".join(b)))
    return len(x & y) / len(x | y)


def iso(dt: datetime) -> str:
    return dt.isoformat()


def seed_store(path: Path) -> dict[str, str]:
    """The lessons a dream must sort out, written with chosen time stamps; returns their ids by role."""
    now = datetime.now(timezone.utc)
    stamp = [iso(now - timedelta(days=2))]
    ids: dict[str, str] = {}
    with SkillMemory(path, clock=lambda: stamp[0]) as memory:
        def learn(role: str, text: tuple[str, str, str], session: str = "s1", trajectory: str = "") -> None:
            ids[role] = memory.learn_lesson(*text, session_id=session, source_trajectory_id=trajectory).lesson.id

        learn("survivor", LOG_B, trajectory="t-b")
        stamp[0] = iso(now - timedelta(days=1))
        learn("duplicate", LOG_C, trajectory="t-c")
        learn("other_session", LOG_C, session="s2")
        learn("pinned_twin", LOG_PINNED)
        stamp[0] = iso(now - timedelta(days=60))
        learn("stale", ("convert the csv export to json", "split on commas inside quotes", "use the csv module"))
        learn("stale_pinned", ("resize the png thumbnails", "lost the aspect ratio", "scale by the longer side"))
        learn("old_but_used", ("sum the invoice totals", "added the tax twice", "sum net amounts, then tax"))
        stamp[0] = iso(now - timedelta(hours=1))
        memory.mark_used([ids["old_but_used"]])
        memory.pin(ids["pinned_twin"])
        memory.pin(ids["stale_pinned"])
        assert memory.count() == 7  # every write above made its own lesson
    return ids


async def test_rem_dream_merges_duplicates_archives_stale_and_skips_pinned(tmp_path: Path) -> None:
    assert 0.7 <= jaccard(LOG_B, LOG_C) < DEDUP_JACCARD  # a pair the write-time dedup let through
    assert 0.7 <= jaccard(LOG_PINNED, LOG_B) < DEDUP_JACCARD and 0.7 <= jaccard(LOG_PINNED, LOG_C) < DEDUP_JACCARD
    ids = seed_store(GhostHome(tmp_path / "home").lessons_db)
    async with watchdog_app(tmp_path) as daemon:
        memory = daemon.ctx.agent_services.memory
        assert memory is not None
        daemon.idle_for(700 * SCALE)
        result = (await daemon.watchdog.tick())["rem_dream"]
        assert result.status == "ok", result
        assert result.data == {"lessons": 7, "merged": 1, "archived": 1}

        lessons = {role: memory.get(lesson_id) for role, lesson_id in ids.items()}
        survivor, duplicate = lessons["survivor"], lessons["duplicate"]
        assert survivor is not None and duplicate is not None
        assert survivor.status == "active" and duplicate.status == "archived"  # archived, never deleted
        assert survivor.merged_sources == ("t-c",) and survivor.uses == 1
        assert memory.count(include_archived=True) == 7
        assert {role: lesson.status for role, lesson in lessons.items() if lesson is not None} == {
            "survivor": "active", "duplicate": "archived", "other_session": "active", "pinned_twin": "pinned",
            "stale": "archived", "stale_pinned": "pinned", "old_but_used": "active",
        }

        # A second dream after the cooldown finds nothing left to do.
        daemon.clock.advance(1800 * SCALE)
        again = (await daemon.watchdog.tick())["rem_dream"]
        assert again.data == {"lessons": 7, "merged": 0, "archived": 0}

        # Retracting the merged duplicate's turn still reaches the survivor, as for a write-time merge.
        memory.retract_lessons_from_trajectory("t-c")
        after = memory.get(ids["survivor"])
        assert after is not None and after.merged_sources == () and after.uses == 0
        status = (await daemon.client.get("/v1/ghost/status", params={"refresh": "true"})).json()
    assert status["counts"]["lessons"]["by_status"] == {"active": 3, "archived": 1, "pinned": 2, "retracted": 1}
    consolidated = daemon.log_events("lesson_consolidated")
    assert [(e["survivor"], e["duplicate"]) for e in consolidated] == [(ids["survivor"], ids["duplicate"])]


def lesson(id: str, text: tuple[str, str, str], *, uses: int = 0, created: str = "2026-01-01T00:00:00+00:00",
           last_used: str | None = None, pinned: bool = False, session: str = "s") -> Lesson:
    return Lesson(id=id, task=text[0], mistake=text[1], solution=text[2], uses=uses, created_at=created,
                  last_used=last_used, pinned=pinned, session_id=session)


def test_plan_merges_prefers_the_most_used_then_the_oldest_and_leaves_pinned_alone() -> None:
    a = lesson("a", LOG_B, created="2026-01-02T00:00:00+00:00")
    b = lesson("b", LOG_C, uses=3, created="2026-01-03T00:00:00+00:00")
    p = lesson("p", LOG_PINNED, pinned=True)
    assert [(m.survivor, m.duplicate) for m in plan_merges([a, b, p], 0.7)] == [("b", "a")]
    assert plan_merges([a, b, p], 0.9) == []
    c = lesson("c", LOG_C, session="other")
    assert [(m.survivor, m.duplicate) for m in plan_merges([a, c], 0.7)] == []  # never across sessions


def test_stale_lessons_go_by_last_use_else_creation() -> None:
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    old = "2026-01-01T00:00:00+00:00"
    found = stale_lessons(
        [
            lesson("unused", LOG_B, created=old),
            lesson("used", LOG_B, created=old, last_used="2026-05-30T00:00:00+00:00"),
            lesson("new", LOG_B, created="2026-05-20T00:00:00+00:00"),
            lesson("pinned", LOG_B, created=old, pinned=True),
            lesson("garbled", LOG_B, created="not a time"),
        ],
        now,
        30,
    )
    assert found == ["unused"]


def test_store_rechecks_every_rule_inside_its_transaction(tmp_path: Path) -> None:
    # The dream plans from a snapshot; the store must refuse a write the snapshot no longer justifies.
    with SkillMemory(tmp_path / "lessons.sqlite3") as memory:
        a = memory.learn_lesson(*LOG_B, session_id="s1").lesson.id
        b = memory.learn_lesson(*LOG_C, session_id="s1").lesson.id
        other = memory.learn_lesson(*LOG_C, session_id="s2").lesson.id
        assert not memory.merge_lessons(a, a)
        assert not memory.merge_lessons(a, other)  # another session's lesson
        memory.pin(b)
        assert not memory.merge_lessons(a, b) and not memory.merge_lessons(b, a)  # pinned meanwhile
        future = iso(datetime.now(timezone.utc) + timedelta(days=1))
        assert not memory.archive_if_unused(b, future)  # pinned: never archived
        assert not memory.archive_if_unused(a, iso(datetime.now(timezone.utc) - timedelta(days=1)))  # recent
        assert memory.archive_if_unused(a, future)
        assert not memory.merge_lessons(other, a)  # archived
        assert memory.status_counts() == {"active": 1, "archived": 1, "pinned": 1}
