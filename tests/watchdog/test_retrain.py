"""Phase 2.7, retrain, in the real app: a hot swap the very next score uses, the swap gate (a worse model is
set aside on disk, never loaded), bails keep the live model, where checkpoints go, the status, the child
process."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ghost_agent.agent.stages.respond import AgentConfig, AgentTurn
from ghost_agent.agent.turn import Turn
from ghost_agent.cli.status import render
from ghost_agent.learned.holdout import PRIMARY
from ghost_agent.prm.model import StepValueModel
from ghost_agent.router.model import RouterModel
from ghost_agent.trajectories.record import Trajectory
from ghost_agent.watchdog import PhaseResult
from ghost_agent.watchdog.phases.retrain import RetrainPhase
from tests.learned.retrainhelp import PROBE_ACTION, PROBE_STATE, fast_turns, inverted_model, normal_model, world
from tests.watchdog.conftest import PLACEHOLDER, SCALE, Daemon, wait_until, watchdog_app


def thread_retrain() -> RetrainPhase:
    """The phase with the fit in a worker thread: the same code path minus the ~1 s process spawn."""
    return RetrainPhase(PLACEHOLDER, isolation="thread")


def record(daemon: Daemon, trajectories: Sequence[Trajectory]) -> None:
    for traj in trajectories:
        daemon.ctx.collector.append(traj)
    daemon.ctx.collector.flush()


async def retrain(daemon: Daemon) -> PhaseResult:
    """One run of the retrain row under the watchdog's anchor discipline."""
    phase = daemon.watchdog.phase("retrain")
    return await daemon.watchdog.run_phase(phase, daemon.watchdog.states["retrain"])


def events(daemon: Daemon, name: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in daemon.log_events(name) if e.get("kind") == kind]


async def test_retrain_hot_swaps_and_the_next_score_uses_the_new_weights(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, phases=(thread_retrain(),), reflection=False, router="auto") as daemon:
        record(daemon, world(20) + fast_turns(20, start=1))
        scorer, router = daemon.ctx.prm_scorer, daemon.ctx.router
        turn = Turn(body={})
        services = daemon.ctx.agent_services
        agent = AgentTurn(services, turn, AgentConfig.from_settings(services.settings.agent, services.settings.sandbox))
        assert scorer.score(PROBE_STATE, PROBE_ACTION) == 0.5 and agent._mcts(turn) is None

        result = await retrain(daemon)

        assert result.status == "ok" and result.data["prm"] == "swapped" and result.data["router"] == "swapped"
        home = daemon.ctx.home
        saved = StepValueModel.load(home.prm_checkpoint)  # no --prm-model: the home's default path
        assert scorer.model_id == saved.model_id == result.data["prm_model"] and scorer.source == "retrain"
        assert scorer.score(PROBE_STATE, PROBE_ACTION) == saved.predict_step(PROBE_STATE, PROBE_ACTION) < 0.2
        assert router.model_id == RouterModel.load(home.router_checkpoint).model_id
        assert router.dispatch("hi there, how are you today 77?").reason == "confident_fast"
        # MCTS had no PRM (simulation is off by default): the next agent turn searches with the new one.
        mcts = agent._mcts(turn)
        assert mcts is not None and mcts.prm_scorer is scorer and scorer.has_model

        status = (await daemon.client.get("/v1/ghost/status")).json()
        prm = status["models"]["prm"]
        assert prm["model_id"] == saved.model_id and prm["source"] == "retrain" and prm["swaps"] == 1
        assert prm["n_samples"] == 40 and prm["metrics"]["auc"] == 1.0
        assert prm["gate"]["accepted"] is True and prm["gate"]["live_id"] == "neutral"
        assert status["models"]["router"]["model_id"] == router.model_id
        text = io.StringIO()
        render(status, text)  # `ghost-agent status`
        assert f"prm: {saved.model_id} from retrain" in text.getvalue()
        assert "swap gate: held-out log loss" in text.getvalue() and "(neutral)" in text.getvalue()
        row = next(p for p in status["phases"] if p["name"] == "retrain")
        assert row["built"] is True and row["last_result"]["data"]["prm"] == "swapped"
        selfhood = daemon.ctx.agent_services.selfhood
        assert selfhood is not None
        swaps = {e.facts["model"]: e.facts for e in selfhood.diary.read() if e.kind == "model_swap"}
        assert swaps["prm"]["model_id"] == saved.model_id and swaps["prm"]["source"] == "retrain"
        assert swaps["router"]["model_id"] == router.model_id

    [swap] = events(daemon, "hot_swap", "prm")
    assert swap["previous"] is None and swap["model_id"] == saved.model_id and swap["mcts_bridged"] is True
    assert swap["checkpoint"] == str(home.prm_checkpoint)
    [event] = events(daemon, "retrain", "prm")
    assert event["result"] == "swapped" and event["gate"]["primary"] == PRIMARY
    assert event["gate"]["candidate"][PRIMARY] < event["gate"]["live"][PRIMARY]  # both figures are logged


async def test_a_worse_model_is_not_swapped_and_is_kept_on_disk(tmp_path: Path) -> None:
    live = normal_model()
    async with watchdog_app(tmp_path, phases=(thread_retrain(),), reflection=False) as daemon:
        daemon.ctx.prm_scorer.set_model(live, source="test")
        before = daemon.ctx.prm_scorer.score(PROBE_STATE, PROBE_ACTION)
        record(daemon, world(16, inverted=True) + world(8, start=100))  # the newest turns: the normal world

        result = await retrain(daemon)

        assert result.data["prm"] == "rejected"
        scorer = daemon.ctx.prm_scorer
        assert scorer.model is live and scorer.swaps == 1 and scorer.score(PROBE_STATE, PROBE_ACTION) == before
        home = daemon.ctx.home
        assert not home.prm_checkpoint.exists()
        [kept] = list((home.prm_checkpoint.parent / "rejected").glob("*.json"))
        rejected = StepValueModel.load(kept)  # a loadable checkpoint, for inspection
        gate = rejected.metadata["gate"]
        assert kept.name == f"{rejected.model_id}.json" and gate["accepted"] is False
        assert gate["live_id"] == live.model_id and gate["candidate"][PRIMARY] > gate["live"][PRIMARY]

    [event] = events(daemon, "retrain", "prm")
    assert event["result"] == "rejected" and event["rejected_path"] == str(kept)
    assert event["live_model_id"] == live.model_id and "worse than the live model" in event["reason"]
    assert not events(daemon, "hot_swap", "prm")


async def test_a_bailing_retrain_keeps_the_live_model_and_says_why(tmp_path: Path) -> None:
    live = normal_model()
    async with watchdog_app(tmp_path, phases=(thread_retrain(),), reflection=False) as daemon:
        daemon.ctx.prm_scorer.set_model(live, source="test")
        record(daemon, world(3))
        result = await retrain(daemon)
        assert result.data["prm"] == "bail" and result.data["router"] == "bail"
        assert daemon.ctx.prm_scorer.model is live and not daemon.ctx.home.prm_checkpoint.exists()
        assert not (daemon.ctx.home.prm_checkpoint.parent / "rejected").exists()
        # Nothing changed since: the next pass is skipped without fitting anything.
        again = await retrain(daemon)
        assert again == PhaseResult.skipped("no new trajectories or corrections since the last retrain")
    [event] = events(daemon, "retrain", "prm")
    assert event["result"] == "bail" and "usable trajectories" in event["reason"]
    assert event["live_model_id"] == live.model_id


async def test_an_empty_store_is_skipped(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, phases=(thread_retrain(),), reflection=False) as daemon:
        assert await retrain(daemon) == PhaseResult.skipped("no trajectories yet")


async def test_a_configured_prm_model_is_swapped_in_memory_and_its_file_never_overwritten(tmp_path: Path) -> None:
    pinned = tmp_path / "operator" / "prm.json"
    inverted_model().save(pinned)  # the operator's model: confidently wrong on today's data
    original = pinned.read_bytes()
    async with watchdog_app(tmp_path, phases=(thread_retrain(),), reflection=False, prm_model=pinned) as daemon:
        assert daemon.ctx.prm_scorer.source == str(pinned)
        record(daemon, world(20))
        result = await retrain(daemon)
        assert result.data["prm"] == "swapped" and daemon.ctx.prm_scorer.source == "retrain"
        assert pinned.read_bytes() == original and not daemon.ctx.home.prm_checkpoint.exists()
    [event] = events(daemon, "retrain", "prm")
    assert event["checkpoint"] is None and "--prm-model is set" in event["checkpoint_note"]


async def test_the_table_row_fits_in_a_child_process_inside_its_window(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, reflection=False) as daemon:
        assert isinstance(daemon.watchdog.phase("retrain"), RetrainPhase)
        record(daemon, world(20))
        daemon.idle_for(899 * SCALE)
        assert "retrain" not in await daemon.watchdog.tick()  # before its window
        daemon.idle_for(1000 * SCALE)
        ran = await daemon.watchdog.tick()
        assert ran["retrain"].data["prm"] == "swapped", ran["retrain"]
        assert daemon.ctx.prm_scorer.model_id == StepValueModel.load(daemon.ctx.home.prm_checkpoint).model_id
    # The trainer's own events come from the child, into the daemon's log file.
    [fit] = [e for e in daemon.log_events("prm_train_fit")]
    assert fit["model_id"] == daemon.ctx.prm_scorer.model_id and fit["gate"].startswith("held-out")


def worker_children() -> list[int]:
    """Our child processes running a job worker (what a retrain spawns)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"ghost_agent.watchdog.job_worker" in cmdline:
            found.append(int(entry.name))
    return found


async def test_shutdown_mid_retrain_kills_the_child_and_records_the_cancel(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, reflection=False, loop=True) as daemon:
        record(daemon, world(20))
        daemon.clock.advance(1000 * SCALE)
        await wait_until(lambda: daemon.watchdog.current == "retrain" and bool(worker_children()), timeout=30)
    state = daemon.watchdog.states["retrain"]
    assert state.last_result is not None and state.last_result.status == "cancelled"
    assert worker_children() == [] and daemon.ctx.prm_scorer.model_id is None
