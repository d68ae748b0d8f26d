"""Phase 2.8, selfhood (idle 900–3600 s, every hour): the diary, the self-state, and the narrative that
becomes the wake-up prefix of every turn.

A pass, every blocking step in a worker thread with a user check between steps:

1. **Observe** what happened since the last pass and write it to the diary (`selfhood/diary.py`), from
   what the stores show: user corrections (the corrections sidecar), lesson retractions (the lesson store),
   model swaps (the live PRM/router ids changed; a phase that swaps may also `Selfhood.note` it), self-play
   streaks (`streak` self-play trajectories in a row with the same outcome). Cursors in `observer.json`
   keep each event from being recorded twice.
2. **Self-state**: pass/fail per task kind, route and source over the last `lookback_days`, day by day
   (`selfhood/self_state.py`) → `self_state.json`.
3. **Narrative** (with `--selfhood-narrative`): when the facts changed since the last narrative, one model
   call at low priority (`PhaseContext.complete`: preempted by any user request, the pass then ends as
   yielded), its reply sanitised and capped (`selfhood/narrative.py`) → `narrative.json` and, from the next
   turn on, the wake-up prefix. A reply with nothing usable keeps the previous narrative.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.wire import reply_text
from ghost_agent.logging import get_logger
from ghost_agent.selfhood.narrative import (
    RECENT_EVENTS,
    Narrative,
    facts_hash,
    render_facts,
    sanitize_narrative,
)
from ghost_agent.selfhood.self_state import SelfStateBuilder
from ghost_agent.selfhood.service import Selfhood
from ghost_agent.text.prompts import messages
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.corrections import CorrectionsSidecar
from ghost_agent.trajectories.record import Outcome, Source
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing

log = get_logger("watchdog")

PROMPT = "selfhood_narrative"
DEFAULT_LOOKBACK_DAYS = 30.0
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_TOKENS = 200
DEFAULT_STREAK = 5
RETRACTION_REASONS = frozenset({"user_correction", "verifier", "operator", "retracted", "skill_rejected"})


class SelfhoodPhase(Phase):
    """Diary, self-state, narrative (see the module doc)."""

    name = "selfhood"
    title = "selfhood narrative"

    def __init__(
        self,
        timing: Timing,
        *,
        key: str = "",
        narrative: bool = True,
        lookback_days: float = DEFAULT_LOOKBACK_DAYS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        streak: int = DEFAULT_STREAK,
    ) -> None:
        super().__init__(timing, key=key)
        self.narrative = narrative
        self.lookback_days = lookback_days
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.streak = max(streak, 2)
        self._sidecars: dict[Path, CorrectionsSidecar] = {}

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        selfhood = ctx.app.selfhood
        if selfhood is None or not selfhood.enabled:
            return PhaseResult.skipped("disabled")
        now = datetime.fromtimestamp(ctx.now(), timezone.utc)
        since = now - timedelta(days=self.lookback_days)
        observer = await ctx.offload(selfhood.read_observer)
        collector = ctx.app.collector
        sidecar = self._sidecars.setdefault(collector.corrections_path, CorrectionsSidecar(collector.corrections_path))
        overlay = await ctx.offload(sidecar.overlay)
        # Events older than the look-back are history, not news (a first pass does not replay years of them).
        seen_corrections = max(str(observer.get("corrections_ts") or ""), since.isoformat())
        corrections = sorted(
            ((str(c.get("ts") or ""), tid) for tid, c in overlay.items()
             if c.get("source") == "user_correction" and str(c.get("ts") or "") > seen_corrections),
        )
        wanted = {tid for _, tid in corrections}

        # 2. The self-state, one day of the store per thread step.
        scan = _Scan(self_play_after=str(observer.get("self_play_ts") or ""), wanted=wanted)
        for day in await ctx.offload(collector.iter_days, since):
            ctx.check_yield()
            await ctx.offload(scan.day, collector, since, day)

        # 1. The diary.
        events = 0
        for ts, tid in corrections:
            await ctx.offload(lambda t=ts, i=tid: selfhood.diary.append(
                "correction", ts=t, trajectory_id=i, task_kind=scan.kinds.get(i)))
            events += 1
        if corrections:
            observer["corrections_ts"] = corrections[-1][0]
        events += await self._retractions(ctx, selfhood, observer, since.isoformat())
        events += await ctx.offload(self._swaps, ctx, selfhood)
        events += await ctx.offload(self._streaks, selfhood, observer, scan.plays)
        await ctx.offload(selfhood.diary.compact)

        memory = ctx.app.memory
        lessons = await ctx.offload(memory.status_counts) if memory is not None else {}
        models = {"prm": ctx.app.prm_scorer.model_id, "router": ctx.app.router.model_id}
        state = scan.builder.build(computed_at=now.isoformat(), window_days=self.lookback_days, lessons=lessons,
                                   models=models)
        await ctx.offload(selfhood.save_state, state)
        await ctx.offload(selfhood.save_observer, observer)  # before the model call: a preempted pass keeps them
        done: JSON = {"events": events, "trajectories": state["overall"]["total"]}
        if events:
            log.info("diary_updated", events=events)

        # 3. The narrative.
        if not self.narrative:
            return PhaseResult.ok(**done, narrative="off")
        recent = await ctx.offload(selfhood.diary.read, RECENT_EVENTS)
        if not (state["overall"]["passed"] or state["overall"]["failed"] or recent):
            return PhaseResult.ok(**done, narrative="nothing to tell yet")
        facts = render_facts(state, recent)
        digest = facts_hash(facts)
        if selfhood.narrative is not None and selfhood.narrative.facts_hash == digest:
            return PhaseResult.ok(**done, narrative="unchanged")
        ctx.check_yield()
        model = ctx.app.models.forward or ctx.app.models.advertised
        body: JSON = {"messages": messages(PROMPT, facts=facts), "max_tokens": self.max_tokens,
                      "temperature": 0.3, "stream": False, "model": model}
        reply = await asyncio.wait_for(ctx.complete(body), self.timeout_s)
        text = sanitize_narrative(reply_text(reply))
        if not text:
            log.warning("narrative_rejected", reason="nothing usable after sanitising", chars=len(reply_text(reply)))
            return PhaseResult.ok(**done, narrative="rejected")
        await ctx.offload(selfhood.set_narrative, Narrative(text, now.isoformat(), digest, model))
        log.info("narrative_updated", chars=len(text), facts_hash=digest)
        return PhaseResult.ok(**done, narrative="updated", chars=len(text))

    async def _retractions(self, ctx: PhaseContext, selfhood: Selfhood, observer: JSON, since: str) -> int:
        memory = ctx.app.memory
        if memory is None:
            return 0
        lessons = await ctx.offload(lambda: memory.all(True, include_retracted=True))
        seen = max(str(observer.get("retractions_ts") or ""), since)
        retracted = sorted((str(x.retracted_at), x) for x in lessons if x.retracted_at and str(x.retracted_at) > seen)
        for ts, lesson in retracted:
            reason = lesson.retract_reason if lesson.retract_reason in RETRACTION_REASONS else "other"
            await ctx.offload(lambda t=ts, x=lesson, r=reason: selfhood.diary.append(
                "retraction", ts=t, lesson_id=x.id, reason=r, source=x.source or "unknown"))
        if retracted:
            observer["retractions_ts"] = retracted[-1][0]
        return len(retracted)

    @staticmethod
    def _swaps(ctx: PhaseContext, selfhood: Selfhood) -> int:
        """A live model id that changed since the last look is a swap (the first look only remembers)."""
        recorded = 0
        for name, live in (("prm", ctx.app.prm_scorer), ("router", ctx.app.router)):
            current = live.model_id or ""
            before = selfhood.models_seen.get(name)
            selfhood.models_seen[name] = current
            if before is not None and current and current != before:
                selfhood.diary.append("model_swap", model=name, model_id=current, previous=before or None)
                recorded += 1
        return recorded

    def _streaks(self, selfhood: Selfhood, observer: JSON, plays: list[tuple[str, str]]) -> int:
        """Self-play runs of `streak` equal outcomes in a row (UNKNOWN ends a run), each recorded once."""
        stored = observer.get("streak")
        run: JSON = stored if isinstance(stored, dict) else {}
        outcome, length = str(run.get("outcome") or ""), int(run.get("length") or 0)
        recorded = 0
        for ts, result in sorted(plays):
            if result not in (Outcome.PASSED.value, Outcome.FAILED.value):
                outcome, length = "", 0
            elif result == outcome:
                length += 1
            else:
                outcome, length = result, 1
            if length == self.streak:
                selfhood.diary.append("self_play_streak", ts=ts, outcome=outcome, length=length)
                recorded += 1
            observer["self_play_ts"] = ts
        observer["streak"] = {"outcome": outcome, "length": length}
        return recorded


class _Scan:
    """What one pass collects from the store: the self-state, the kind of each corrected turn, self-play results."""

    def __init__(self, *, self_play_after: str, wanted: set[str]) -> None:
        self.builder = SelfStateBuilder()
        self.kinds: dict[str, str] = {}
        self.plays: list[tuple[str, str]] = []
        self.self_play_after = self_play_after
        self.wanted = wanted

    def day(self, collector: TrajectoryCollector, since: datetime, day: str) -> None:
        start = datetime.fromisoformat(day).replace(tzinfo=timezone.utc)
        for traj in collector.iter_trajectories(since=max(since, start), until=day):  # this one day's files only
            kind = self.builder.add(traj)
            if kind is not None and traj.id in self.wanted:
                self.kinds[traj.id] = kind
            if traj.source == Source.SELF_PLAY.value and traj.ts > self.self_play_after:
                self.plays.append((traj.ts, traj.outcome.value))


__all__ = ["SelfhoodPhase"]
