"""Phase 3, self-play (idle > 1 h, every hour): the agent sets itself tasks it can check, solves them with its
own chat turn, and keeps the verified results (DESIGN §8, `selfplay/`).

A pass picks up to `selfplay_tasks_per_pass` tasks (the frontier when a trained PRM and the trajectory store
engage it, else the brittle pool; `frontier_uniform_sample_prob` of picks uniform anyway), runs each
`selfplay_attempts` times through `PhaseHost.practice_turn` (low priority: a user request cancels the turn,
and the pass ends as yielded), and counts every graded attempt in the frontier tracker. Each attempt is a
trajectory with source `self_play`, a cluster and a PASSED/FAILED outcome: labelled experience for the
retrain phase that needs no user. Every passing reply becomes a worked example in the experience bank.
"""

from __future__ import annotations

import random

from ghost_agent.logging import get_logger
from ghost_agent.selfplay.frontier import FrontierTracker
from ghost_agent.selfplay.practice import practise
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing

log = get_logger("watchdog")


class SelfPlayPhase(Phase):
    """Practice while idle (see the module doc)."""

    name = "self_play"
    title = "self-play"

    def __init__(
        self, timing: Timing, *, key: str = "", tasks: int = 3, attempts: int = 2, frontier: bool = True,
        uniform_prob: float = 0.2, rng: random.Random | None = None,
    ) -> None:
        super().__init__(timing, key=key)
        self.tasks = tasks
        self.attempts = attempts
        self.frontier = frontier
        self.uniform_prob = uniform_prob
        self.rng = rng or random.Random()

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        if self.tasks <= 0:
            return PhaseResult.skipped("selfplay_tasks_per_pass is 0")
        sandbox = ctx.app.sandbox_backend
        if sandbox is None:
            return PhaseResult.skipped("no sandbox: self-play grades code by running it")
        tracker = await ctx.offload(FrontierTracker, ctx.app.home.frontier)
        report = await practise(
            ctx.app, tracker, sandbox, self.rng, tasks=self.tasks, attempts=self.attempts,
            scorer=ctx.app.prm_scorer, collector=ctx.app.collector, frontier=self.frontier,
            uniform_prob=self.uniform_prob, check_yield=ctx.check_yield, bank=ctx.app.experience,
        )
        if not report.picks:
            return PhaseResult.skipped("every cluster is saturated", saturated=tracker.list_saturated_clusters())
        return PhaseResult.ok(f"{report.passed}/{len(report.attempts)} attempts passed", **report.to_dict())


__all__ = ["SelfPlayPhase"]
