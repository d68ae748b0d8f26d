"""The real-time path: the correction hook and finisher schedule `reflect_one` as a held task whose
done-callback logs the outcome; in the app, a correction is reflected once, whichever path comes first."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import structlog
from structlog.testing import capture_logs

from ghost_agent.agent.stages.correction import CorrectionEvent
from ghost_agent.agent.stages.reflection_scheduler import ReflectionScheduler
from ghost_agent.agent.turn import Turn
from ghost_agent.feedback.correction.detector import CorrectionVerdict
from ghost_agent.home import GhostHome
from ghost_agent.llm.gate import ModelGate
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.store import SkillMemory
from ghost_agent.reflection import ReflectionRecord, Reflector
from ghost_agent.server import build_app
from ghost_agent.server.state import AppContext
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome
from tests.conftest import make_settings, wait_until
from tests.reflection.helpers import THREE_WORDS, THREE_WORDS_FIX, critique, failed

PRIOR_REPLY = "Sure! kangaroo trampoline lighthouse"


@contextlib.asynccontextmanager
async def in_process(
    settings: Settings, backend: ScriptedBackend
) -> AsyncIterator[tuple[httpx.AsyncClient, AppContext]]:
    """The daemon in-process (lifespan run for real, httpx.ASGITransport) and its context."""
    app = build_app(settings, backend)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
                yield client, app.state.ctx
    finally:
        structlog.reset_defaults()


def event(turn: Turn, trajectory_id: str = "t-1") -> CorrectionEvent:
    return CorrectionEvent(
        trajectory_id=trajectory_id, session_id="s1", prior_request=THREE_WORDS, prior_reply=PRIOR_REPLY,
        correcting_message=THREE_WORDS_FIX, reason="user-correction signal", turn=turn,
        verdict=CorrectionVerdict(is_correction=True),
    )


async def test_without_a_gate_the_reflection_starts_once_the_reply_is_delivered() -> None:
    llm = ScriptedBackend(replies=[critique()], default="error")
    scheduler = ReflectionScheduler(Reflector(llm))
    turn = Turn(body={})
    await scheduler.on_correction(event(turn))
    assert scheduler.tasks == set() and len(turn.state.reflections_pending) == 1  # the turn is still running
    await scheduler.finish(turn, None)  # the pipeline's finishers run after delivery
    assert turn.state.reflections_pending == [] and len(scheduler.tasks) == 1
    [task] = scheduler.tasks
    result = await task
    assert result.status == "ok" and result.trajectory_id == "t-1" and scheduler.tasks == set()
    # not recorded (no collector): rebuilt from the event, FAILED by the user's verdict
    assert PRIOR_REPLY in llm.requests[0]["messages"][-1]["content"]


async def test_with_a_gate_the_hook_schedules_at_once_and_the_critique_waits_for_users() -> None:
    llm = ScriptedBackend(replies=[critique()], default="error")
    gate = ModelGate()
    scheduler = ReflectionScheduler(Reflector(llm, gate=gate))
    with gate.user():  # the correcting request itself is in flight
        await scheduler.on_correction(event(Turn(body={})))
        assert len(scheduler.tasks) == 1
        await asyncio.sleep(0.05)  # the task loads the turn, reaches the gate and waits there
        assert llm.requests == []
    await scheduler.drain(2.0)
    assert len(llm.requests) == 1 and scheduler.tasks == set()


async def test_the_done_callback_logs_ok_no_lesson_and_failed(tmp_path: Path) -> None:
    async def broken_sink(record: ReflectionRecord) -> str | None:
        raise RuntimeError("sink bug")

    llm = ScriptedBackend(replies=[critique(), ScriptedReply(content="no idea"), critique()], default="error")
    ok = ReflectionScheduler(Reflector(llm))
    failing = ReflectionScheduler(Reflector(llm, sink=broken_sink))
    with capture_logs() as logs:
        for n, scheduler in enumerate((ok, ok, failing)):
            task = scheduler.schedule(event(Turn(body={}), f"t-{n}"))
            await scheduler.drain(2.0)
            assert task.done()
    done = [(e["trajectory_id"], e["status"], e.get("reason") or e.get("error_type"))
            for e in logs if e["event"] == "post_turn_reflection" and e["status"] != "scheduled"]
    assert done == [("t-0", "ok", None), ("t-1", "no_lesson", "unparseable reflection response"),
                    ("t-2", "failed", "RuntimeError")]
    assert next(e for e in logs if e["event"] == "post_turn_reflection" and e["status"] == "ok")["lesson_id"] is None


async def test_load_uses_the_record_with_its_overlay(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path / "trajectories")
    traj = failed(reply="recorded reply")
    traj.outcome = Outcome.UNKNOWN
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.FAILED, "user-correction signal: phrase", source="user_correction")
    scheduler = ReflectionScheduler(Reflector(ScriptedBackend()), collector)
    loaded = await scheduler.load(event(Turn(body={}), traj.id))
    assert (loaded.final_response, loaded.outcome) == ("recorded reply", Outcome.FAILED)
    assert loaded.extra["correction"]["source"] == "user_correction"
    collector.close()


async def test_in_the_app_a_correction_is_reflected_once_whichever_path_comes_first(tmp_path: Path) -> None:
    llm = ScriptedBackend(model="scripted-model", default="error")
    llm.enqueue(ScriptedReply(content=PRIOR_REPLY), ScriptedReply(content="kangaroo trampoline metronome"), critique())
    settings = make_settings(tmp_path, watchdog=False)
    async with in_process(settings, llm) as (client, ctx):
        assert ctx.reflection is not None
        first = await client.post("/v1/chat/completions",
                                  json={"model": "m", "messages": [{"role": "user", "content": THREE_WORDS}]})
        first_id = first.headers["x-ghost-trajectory-id"]
        await wait_until(lambda: len(ctx.agent_services.recent) == 1)
        second = await client.post("/v1/chat/completions", json={"model": "m", "messages": [
            {"role": "user", "content": THREE_WORDS}, {"role": "assistant", "content": PRIOR_REPLY},
            {"role": "user", "content": THREE_WORDS_FIX}]})
        assert second.status_code == 200
        await ctx.reflection.drain(5.0)
        assert await ctx.reflection.reflector.run() == []  # the backstop finds it already reflected
        assert len(llm.requests) == 3
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        [lesson] = [x for x in memory.all() if x.source == "reflection"]
    assert lesson.source_trajectory_id == first_id
