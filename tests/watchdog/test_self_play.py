"""Phase 3, self-play, in the real daemon on a real home with the scripted backend: a pass runs the chat turn
on a generated task and records PASSED and FAILED trajectories with their cluster and the validator's
detail; the tracker counts them; the idle clock is untouched; a user request abandons the practice turn at
once (the pass ends as yielded, nothing is recorded for it, the user gets the model)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox import SandboxBackend
from ghost_agent.selfplay.frontier import FrontierTracker, choose
from ghost_agent.selfplay.task import generate
from ghost_agent.selfplay.templates import by_cluster, find
from ghost_agent.trajectories.record import Outcome, Source
from ghost_agent.watchdog.base import PhaseResult
from ghost_agent.watchdog.phases.self_play import SelfPlayPhase
from ghost_agent.watchdog.runner import PhaseState
from tests.conftest import sandbox  # noqa: F401 - the module-scoped fixture
from tests.watchdog.conftest import CHAT, MESSAGES, PLACEHOLDER, Daemon, wait_until, watchdog_app

SEED = 11


def first_task() -> object:
    """The task a fresh tracker's pick gives for `random.Random(SEED)` (the phase draws with the same rng)."""
    templates = {c: [t.name for t in ts] for c, ts in by_cluster().items()}
    pick = choose(FrontierTracker(), random.Random(SEED), templates, frontier=False)
    assert pick is not None
    return generate(find(pick["cluster"], pick["template"]), pick["seed"], pick["difficulty"])


async def run_self_play(daemon: Daemon) -> PhaseResult:
    watchdog = daemon.watchdog
    await wait_until(lambda: daemon.ctx.sandbox_backend is not None, timeout=30)
    return await watchdog.run_phase(watchdog.phase("self_play"), watchdog.states.setdefault("self_play", PhaseState()))


async def test_a_pass_records_passed_and_failed_practice(tmp_path: Path, sandbox: SandboxBackend) -> None:  # noqa: F811
    task = first_task()
    backend = ScriptedBackend(replies=[ScriptedReply(content=task.reference), ScriptedReply(content=task.bad[0])])
    phase = SelfPlayPhase(PLACEHOLDER, tasks=1, attempts=2, rng=random.Random(SEED))
    async with watchdog_app(tmp_path, backend=backend, phases=(phase,)) as daemon:
        daemon.idle_for(40)
        idle_before = daemon.ctx.activity.idle_s()
        result = await run_self_play(daemon)
        assert daemon.ctx.activity.idle_s() == idle_before  # practice is not user activity
        trajs = list(daemon.ctx.collector.iter_trajectories())
        tracker = FrontierTracker(daemon.ctx.home.frontier)
    assert result.status == "ok", result
    assert result.data["attempts"] == 2 and result.data["passed"] == 1
    assert [t.source for t in trajs] == [Source.SELF_PLAY.value] * 2
    by_attempt = {t.extra["selfplay"]["attempt"]: t for t in trajs}
    assert by_attempt[0].outcome is Outcome.PASSED and by_attempt[1].outcome is Outcome.FAILED
    for traj in trajs:
        assert traj.cluster == task.cluster and traj.user_request == task.prompt
        info = traj.extra["selfplay"]
        assert info["task"] == task.id and info["template"] == task.template and info["seed"] == task.seed
        assert info["difficulty"] == task.difficulty and info["reward"]["failure_class"] in ("keep", "discard")
        assert traj.extra["outcome_source"] == "self"
    assert by_attempt[1].extra["selfplay"]["detail"]  # why it failed, for reflection and the status page
    assert tracker.outcomes() == {task.cluster: (1, 2)}
    assert not any((daemon.ctx.home.workspace).glob("selfplay-*"))  # each attempt's workspace is removed


async def test_a_user_request_abandons_practice(tmp_path: Path, sandbox: SandboxBackend) -> None:  # noqa: F811
    task = first_task()
    backend = ScriptedBackend(replies=[ScriptedReply(content=task.reference, delay_s=5.0),
                                       ScriptedReply(content="the user's answer")])
    phase = SelfPlayPhase(PLACEHOLDER, tasks=1, attempts=1, rng=random.Random(SEED))
    async with watchdog_app(tmp_path, backend=backend, phases=(phase,)) as daemon:
        daemon.idle_for(40)
        practice = asyncio.ensure_future(run_self_play(daemon))
        await wait_until(lambda: daemon.ctx.model_gate.background_busy, timeout=30)
        await wait_until(lambda: len(backend.requests) == 1)  # the practice turn is in its model call
        reply = await daemon.client.post(CHAT, json={"messages": MESSAGES})
        result = await asyncio.wait_for(practice, timeout=10)
        trajs = list(daemon.ctx.collector.iter_trajectories())
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "the user's answer"
    assert result.status == "yielded"
    assert [t.source for t in trajs] == [Source.CHAT.value]  # the abandoned practice left no record
    assert FrontierTracker(daemon.ctx.home.frontier).outcomes() == {}


@pytest.mark.parametrize("tasks", [0])
async def test_nothing_to_do_is_a_skip(tmp_path: Path, tasks: int) -> None:
    phase = SelfPlayPhase(PLACEHOLDER, tasks=tasks)
    async with watchdog_app(tmp_path, phases=(phase,)) as daemon:
        result = await daemon.watchdog.run_phase(phase, PhaseState())
    assert result.status == "skipped"
