"""Phase 2, REM dream (idle 600–3600 s, every 30 min): consolidate the lessons.

* **Merge near-duplicates** the write-time dedup let through (it merges at Jaccard ≥ 0.8; consolidation looks
  wider, `--dream-merge-jaccard`, default 0.7): within one session's lessons, the duplicate is archived (never
  deleted) and its provenance and uses move to the survivor, so retracting either source trajectory still
  reaches the survivor. The survivor is the most used, then the oldest.
* **Archive stale lessons**: an active lesson neither shown nor strengthened for `--dream-archive-days` (by
  `last_used`, else `created_at`) is archived — hidden from search, kept, restorable.
* **Pinned lessons are never touched** (neither merged, absorbed nor archived); archived and retracted ones
  are left alone too. Each check is repeated inside the store's write transaction, so a lesson pinned or
  changed between the plan and the write is skipped.

Planning is pure (`plan_merges`, `stale_lessons`) and runs in a worker thread; each write is one short store
transaction in a thread, with a check between steps so a user request gets the machine at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ghost_agent.logging import get_logger
from ghost_agent.memory.lessons import Lesson, lesson_tokens
from ghost_agent.trajectories.record import parse_ts
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing

log = get_logger("watchdog")

DEFAULT_MERGE_JACCARD = 0.7
DEFAULT_ARCHIVE_DAYS = 30.0


@dataclass(frozen=True)
class Merge:
    """Fold `duplicate` into `survivor` (their token-set Jaccard is `score`)."""

    survivor: str
    duplicate: str
    score: float


def _survivor_order(lesson: Lesson) -> tuple[int, str, str]:
    return (-lesson.uses, lesson.created_at, lesson.id)


def plan_merges(lessons: Sequence[Lesson], threshold: float = DEFAULT_MERGE_JACCARD) -> list[Merge]:
    """Which active lessons to fold into which, greedily: most used (then oldest) lessons become survivors
    first; each other lesson merges into its most similar survivor of the same session if Jaccard ≥ threshold.

    Only `active` lessons take part (never pinned, archived or retracted ones). Deterministic for a given input.
    """
    survivors: list[tuple[Lesson, frozenset[str]]] = []
    index: dict[str, list[int]] = {}  # token -> survivors holding it: only overlapping pairs are compared
    merges: list[Merge] = []
    for lesson in sorted((x for x in lessons if x.status == "active"), key=_survivor_order):
        tokens = frozenset(lesson_tokens(lesson.text))
        session = lesson.session_id
        best: tuple[float, int] | None = None
        seen: set[int] = set()
        for token in tokens:
            for i in index.get(token, ()):
                if i in seen:
                    continue
                seen.add(i)
                other, other_tokens = survivors[i]
                if other.session_id != session:
                    continue  # a merge must not move a lesson into a session that could not see it
                score = len(tokens & other_tokens) / len(tokens | other_tokens)
                if score >= threshold and (best is None or score > best[0] or (score == best[0] and i < best[1])):
                    best = (score, i)
        if best is not None:
            merges.append(Merge(survivors[best[1]][0].id, lesson.id, round(best[0], 4)))
            continue
        if not tokens:
            continue  # nothing to compare by meaning (write-time dedup handles identical texts)
        survivors.append((lesson, tokens))
        for token in tokens:
            index.setdefault(token, []).append(len(survivors) - 1)
    return merges


def stale_lessons(lessons: Sequence[Lesson], now: datetime, days: float) -> list[str]:
    """Ids of active lessons not used (else not created) within `days` of `now`; unparseable stamps are kept."""
    cutoff = now - timedelta(days=days)
    out: list[str] = []
    for lesson in lessons:
        if lesson.status != "active":
            continue
        stamp = lesson.last_used or lesson.created_at
        try:
            when = parse_ts(stamp)
        except (TypeError, ValueError):
            continue
        if when < cutoff:
            out.append(lesson.id)
    return out


class RemDreamPhase(Phase):
    """Merge near-duplicate lessons and archive stale ones; pinned lessons are never touched."""

    name = "rem_dream"
    title = "REM dream"

    def __init__(
        self,
        timing: Timing,
        *,
        key: str = "",
        archive_after_days: float = DEFAULT_ARCHIVE_DAYS,
        merge_jaccard: float = DEFAULT_MERGE_JACCARD,
    ) -> None:
        super().__init__(timing, key=key)
        self.archive_after_days = archive_after_days
        self.merge_jaccard = merge_jaccard

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """Plan off the loop, then apply one transaction at a time, yielding to user requests between them."""
        memory = ctx.app.memory
        if memory is None:
            return PhaseResult.skipped("no lesson store")
        lessons: list[Lesson] = await ctx.offload(memory.all, True)
        merges = await ctx.offload(plan_merges, lessons, self.merge_jaccard)
        now = datetime.fromtimestamp(ctx.now(), timezone.utc)
        done: dict[str, Any] = {"lessons": len(lessons), "merged": 0, "archived": 0}
        merged_away: set[str] = set()
        for merge in merges:
            if ctx.user_active():
                return PhaseResult.yielded(**done)
            if await ctx.offload(memory.merge_lessons, merge.survivor, merge.duplicate):
                done["merged"] += 1
                merged_away.add(merge.duplicate)
                log.info("lesson_consolidated", survivor=merge.survivor, duplicate=merge.duplicate,
                         jaccard=merge.score)
        # Survivors' uses changed: re-read before judging staleness (cheap, and the plan stays pure).
        if self.archive_after_days > 0:
            if merges:
                lessons = await ctx.offload(memory.all, True)
            for lesson_id in stale_lessons(lessons, now, self.archive_after_days):
                if ctx.user_active():
                    return PhaseResult.yielded(**done)
                cutoff = (now - timedelta(days=self.archive_after_days)).isoformat()
                if lesson_id not in merged_away and await ctx.offload(memory.archive_if_unused, lesson_id, cutoff):
                    done["archived"] += 1
                    log.info("lesson_archived", lesson_id=lesson_id, reason="unused",
                             days=self.archive_after_days)
        if (done["merged"] or done["archived"]) and ctx.counts is not None:
            ctx.counts.put(await ctx.offload(ctx.counts.compute))
        return PhaseResult.ok(**done)


__all__ = ["Merge", "RemDreamPhase", "plan_merges", "stale_lessons"]
