"""The watchdog inside the real app: a user request is served at once while a phase holds the model, shutdown
mid-phase is clean, and `GET /v1/ghost/status` (shape, auth, counts, metrics)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.watchdog import ModelPreempted, PhaseContext, PhaseResult
from tests.server.test_health_metrics import samples, value
from tests.watchdog.conftest import CHAT, MESSAGES, SCALE, Recorder, wait_until, watchdog_app

JSON = dict[str, Any]


@dataclass
class OneSlotBackend(ScriptedBackend):
    """The scripted backend with the embedded model's constraint: one generation at a time."""

    slot: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def complete(self, body: JSON) -> JSON:
        async with self.slot:
            return await super().complete(body)

    async def stream(self, body: JSON) -> AsyncIterator[JSON]:
        async with self.slot:
            async for chunk in super().stream(body):
                yield chunk


async def test_a_user_request_is_not_delayed_by_a_phase_holding_the_model(tmp_path: Path) -> None:
    backend = OneSlotBackend(model="scripted-model")
    backend.enqueue(ScriptedReply(content="a long critique", delay_s=30.0))  # the phase's model call
    steps: list[str] = []

    async def reflect(ctx: PhaseContext) -> PhaseResult:
        steps.append("calling")
        try:
            await ctx.complete({"messages": [{"role": "user", "content": "critique this"}]})
        except ModelPreempted:
            steps.append("preempted")
            raise
        return PhaseResult.ok()

    phase = Recorder(name="reflection", action=reflect)
    async with watchdog_app(tmp_path, backend=backend, phases=(phase,), loop=True) as daemon:
        daemon.clock.advance(1000 * SCALE)
        await wait_until(lambda: daemon.ctx.model_gate.background_busy and backend.slot.locked())
        t0 = time.perf_counter()
        response = await daemon.client.post(CHAT, json={"messages": MESSAGES})
        elapsed = time.perf_counter() - t0
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == "hello there"
        assert elapsed < 2.0, f"the user waited {elapsed:.2f}s behind a background model call"
        assert steps == ["calling", "preempted"] and backend.cancelled == 1
        state = daemon.watchdog.states["reflection"]
        await wait_until(lambda: state.last_result is not None)
        assert state.last_result is not None and state.last_result.status == "yielded"
        assert daemon.ctx.model_gate.preemptions == 1
        # The phase does not hammer the model again: idle restarted with the request, and the anchor is set.
        await asyncio.sleep(0.05)
        assert len(phase.runs) == 1


async def test_a_phase_checks_for_users_between_steps(tmp_path: Path) -> None:
    done: list[int] = []

    async def chunked(ctx: PhaseContext) -> PhaseResult:
        for step in range(1000):
            ctx.check_yield()
            await ctx.offload(time.sleep, 0.002)  # CPU-ish work off the loop, one short step at a time
            done.append(step)
        return PhaseResult.ok()

    phase = Recorder(name="rem_dream", action=chunked)
    async with watchdog_app(tmp_path, phases=(phase,), loop=True) as daemon:
        daemon.clock.advance(700 * SCALE)
        await wait_until(lambda: len(done) >= 3)
        t0 = time.perf_counter()
        response = await daemon.client.post(CHAT, json={"messages": MESSAGES})
        assert response.status_code == 200 and time.perf_counter() - t0 < 1.0
        state = daemon.watchdog.states["rem_dream"]
        await wait_until(lambda: state.last_result is not None)
        assert state.last_result is not None and state.last_result.status == "yielded"
        assert len(done) < 1000


async def test_shutdown_mid_phase_is_clean(tmp_path: Path) -> None:
    events: list[str] = []

    async def hang(ctx: PhaseContext) -> PhaseResult:
        events.append("started")
        try:
            await ctx.offload(time.sleep, 0.05)  # a thread step in progress is waited for, not abandoned
            events.append("thread step done")
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return PhaseResult.ok()

    phase = Recorder(name="selfhood", action=hang)
    async with watchdog_app(tmp_path, phases=(phase,), loop=True) as daemon:
        daemon.clock.advance(1000 * SCALE)
        await wait_until(lambda: daemon.watchdog.current == "selfhood")
        ctx = daemon.ctx
        t0 = time.perf_counter()
    assert time.perf_counter() - t0 < 1.5  # cancelled at once, not after the background grace period
    assert events[0] == "started" and events[-1] == "cancelled"
    assert not ctx.tasks and not ctx.services
    state = ctx.watchdog.states["selfhood"]  # type: ignore[union-attr]
    assert state.last_result is not None and state.last_result.status == "cancelled"
    assert state.anchor == state.last_end  # the finally ran
    assert not ctx.watchdog.running  # type: ignore[union-attr]
    names = [e["event"] for e in daemon.log_events("watchdog_stopped")]
    assert names == ["watchdog_stopped"]


async def test_status_requires_the_api_key_like_every_v1_path(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, api_key="secret-key") as daemon:
        refused = await daemon.client.get("/v1/ghost/status")
        wrong = await daemon.client.get("/v1/ghost/status", headers={"authorization": "Bearer nope"})
        ok = await daemon.client.get("/v1/ghost/status", headers={"authorization": "Bearer secret-key"})
    assert refused.status_code == wrong.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"
    assert ok.status_code == 200


async def test_status_document(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path) as daemon:
        for _ in range(2):
            assert (await daemon.client.post(CHAT, json={"messages": MESSAGES})).status_code == 200
        memory = daemon.ctx.agent_services.memory
        assert memory is not None
        kept = memory.learn_lesson("parse the log", "file missing", "list files first", session_id="s1")
        memory.learn_lesson("convert csv to json", "wrong delimiter", "sniff the dialect", session_id="s1")
        memory.pin(kept.lesson.id)
        await wait_until(lambda: daemon.ctx.collector.stats()["trajectories"] == 2)
        daemon.idle_for(1000 * SCALE)
        await daemon.watchdog.tick()
        response = await daemon.client.get("/v1/ghost/status", params={"refresh": "true"})
        metrics = samples((await daemon.client.get("/metrics")).text)
    assert response.status_code == 200
    doc = response.json()
    assert set(doc) == {"watchdog", "phases", "models", "counts"}
    wd = doc["watchdog"]
    assert wd["enabled"] is True and wd["running"] is True and wd["idle_time_scale"] == SCALE
    assert wd["ticks"] == 1 and wd["idle_s"] == 10.0 and wd["user_requests_in_flight"] == 0
    rows = {p["name"]: p for p in doc["phases"]}
    assert [p["key"] for p in doc["phases"]] == ["1", "2", "2.5", "2.6", "2.7", "2.8", "3"]
    assert list(rows) == ["journal_drain", "rem_dream", "reflection", "skills_auto", "retrain", "selfhood",
                          "self_play"]
    drain = rows["journal_drain"]
    assert drain["built"] is True and drain["runs"] == 1 and drain["last_result"]["status"] == "ok"
    assert drain["window"] == {"min_idle_s": 1.2, "max_idle_s": None} and drain["cooldown_s"] == 0
    assert drain["last_start"] and drain["last_end"] and drain["next_eligible_in_s"] == 0
    assert rows["rem_dream"]["last_result"]["status"] == "ok"
    assert rows["rem_dream"]["next_eligible_in_s"] == 18.0  # its 30 min cooldown, scaled
    # Two UNKNOWN chat turns: nothing failed to reflect on, and too little data for either model.
    assert rows["reflection"]["built"] is True
    assert rows["reflection"]["last_result"]["data"] == {"reflected": 0, "lessons": 0}
    assert rows["retrain"]["built"] is True
    assert rows["retrain"]["last_result"]["data"] == {"prm": "bail", "prm_model": None, "router": "bail",
                                                      "router_model": None}
    assert rows["skills_auto"]["built"] is True and rows["skills_auto"]["last_result"]["status"] == "ok"
    assert rows["skills_auto"]["last_result"]["data"]["candidates"] == 0  # two plain chat turns: no tools
    # Two UNKNOWN turns and no event yet: nothing to write a narrative about, so no model call.
    assert rows["selfhood"]["built"] is True
    assert rows["selfhood"]["last_result"]["data"]["narrative"] == "nothing to tell yet"
    play = rows["self_play"]
    assert play["built"] is True
    assert play["runs"] == 0 and play["skip_reason"].startswith("idle 10s < window start 36s")
    assert play["next_eligible_in_s"] == 26.0
    assert rows["retrain"]["cooldown_s"] == 108.0  # --prm-train-cooldown 3 h, scaled
    assert doc["models"]["prm"] == {"loaded": False, "model_id": None, "source": None, "swaps": 0,
                                    "trained_at": None, "n_samples": None, "metrics": {}, "gate": {}}
    assert doc["models"]["router"]["loaded"] is False
    counts = doc["counts"]
    assert counts["trajectories"]["total"] == 2
    assert counts["trajectories"]["by_source"] == {"chat": 2}
    assert sum(counts["trajectories"]["by_outcome"].values()) == 2
    assert counts["lessons"] == {"available": True, "total": 2, "by_status": {"active": 1, "pinned": 1}}
    assert counts["candidates"] == {"available": True, "total": 0, "by_status": {}}
    assert value(metrics, "ghost_phase_runs_total", phase="journal_drain", status="ok") == 1
    assert value(metrics, "ghost_phase_runs_total", phase="reflection", status="ok") == 1
    assert value(metrics, "ghost_phase_duration_seconds_count", phase="rem_dream") == 1


async def test_a_real_phase_plugs_into_a_not_built_row(tmp_path: Path) -> None:
    async def learn(ctx: PhaseContext) -> PhaseResult:
        return PhaseResult.ok(reflected=3)

    async with watchdog_app(tmp_path) as daemon:
        daemon.watchdog.install(Recorder(name="reflection", action=learn))
        row = daemon.watchdog.phase("reflection")
        assert row.built and row.key == "2.5" and row.window == (9.0, 36.0) and row.cooldown_s == 24.0
        daemon.idle_for(1000 * SCALE)
        assert (await daemon.watchdog.tick())["reflection"] == PhaseResult.ok(reflected=3)
