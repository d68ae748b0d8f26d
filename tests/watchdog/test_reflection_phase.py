"""Phase 2.5, the reflection backstop, in the real app: it reflects in its window, shares the "already
reflected" set with the correction hook (each failure is critiqued once, whichever path comes first), gives
the model up to a user request mid-critique, and says why it skips with reflection off."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.reflection import STATUS_SKIPPED
from ghost_agent.trajectories.record import Trajectory
from ghost_agent.watchdog import PhaseResult
from ghost_agent.watchdog.phases.reflection import ReflectionPhase
from tests.reflection.helpers import THREE_WORDS, THREE_WORDS_FIX, critique, failed
from tests.watchdog.conftest import CHAT, MESSAGES, SCALE, Daemon, wait_until, watchdog_app

PRIOR_REPLY = "Sure! kangaroo trampoline lighthouse"


def record(daemon: Daemon, traj: Trajectory) -> Trajectory:
    daemon.ctx.collector.append(traj)
    daemon.ctx.collector.flush()
    return traj


async def reflect(daemon: Daemon) -> PhaseResult:
    """One run of the reflection row under the watchdog's anchor discipline."""
    return await daemon.watchdog.run_phase(daemon.watchdog.phase("reflection"), daemon.watchdog.states["reflection"])


async def test_the_backstop_reflects_in_its_window_and_stores_the_lesson(tmp_path: Path) -> None:
    llm = ScriptedBackend(model="scripted-model")
    async with watchdog_app(tmp_path, backend=llm) as daemon:
        assert isinstance(daemon.watchdog.phase("reflection"), ReflectionPhase)
        traj = record(daemon, failed())
        llm.enqueue(critique())
        daemon.idle_for(899 * SCALE)
        assert "reflection" not in await daemon.watchdog.tick()
        daemon.idle_for(1000 * SCALE)
        result = (await daemon.watchdog.tick())["reflection"]
        assert result == PhaseResult.ok(reflected=1, lessons=1, status_ok=1)
        memory = daemon.ctx.agent_services.memory
        assert memory is not None
        [lesson] = [x for x in memory.all() if x.source == "reflection"]
        assert lesson.source_trajectory_id == traj.id
        critiques = [r for r in llm.requests if THREE_WORDS in str(r.get("messages"))]
        assert len(critiques) == 1
        # The next pass finds nothing new: the trajectory is reflected (in memory and on disk).
        assert await reflect(daemon) == PhaseResult.ok(reflected=0, lessons=0)


async def test_a_correction_reflected_by_the_hook_is_not_reflected_again_by_the_phase(tmp_path: Path) -> None:
    llm = ScriptedBackend(model="scripted-model", default="error")
    llm.enqueue(ScriptedReply(content=PRIOR_REPLY), ScriptedReply(content="kangaroo trampoline metronome"), critique())
    async with watchdog_app(tmp_path, backend=llm) as daemon:
        scheduler = daemon.ctx.reflection
        assert scheduler is not None
        first = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": THREE_WORDS}]})
        corrected = first.headers["x-ghost-trajectory-id"]
        await wait_until(lambda: len(daemon.ctx.agent_services.recent) == 1)
        second = await daemon.client.post(CHAT, json={"messages": [
            {"role": "user", "content": THREE_WORDS}, {"role": "assistant", "content": PRIOR_REPLY},
            {"role": "user", "content": THREE_WORDS_FIX}]})
        assert second.status_code == 200
        await scheduler.drain(5.0)
        assert corrected in scheduler.reflector.reflected and len(llm.requests) == 3

        assert await reflect(daemon) == PhaseResult.ok(reflected=0, lessons=0)
        assert len(llm.requests) == 3  # no second critique of the same failure


async def test_a_failure_the_phase_reflected_is_skipped_by_the_real_time_path(tmp_path: Path) -> None:
    llm = ScriptedBackend(model="scripted-model", default="error")
    async with watchdog_app(tmp_path, backend=llm) as daemon:
        scheduler = daemon.ctx.reflection
        assert scheduler is not None
        traj = record(daemon, failed())
        llm.enqueue(critique())
        assert (await reflect(daemon)).data["reflected"] == 1
        again = await scheduler.reflector.reflect_one(traj, correction=THREE_WORDS_FIX)
        assert again.status == STATUS_SKIPPED and again.reason == "already reflected"
        assert len(llm.requests) == 1


async def test_a_user_request_mid_critique_is_served_and_the_phase_yields(tmp_path: Path) -> None:
    llm = ScriptedBackend(model="scripted-model")  # echo: answers the user's chat request
    async with watchdog_app(tmp_path, backend=llm) as daemon:
        scheduler = daemon.ctx.reflection
        assert scheduler is not None
        traj = record(daemon, failed())
        llm.enqueue(critique(delay_s=30.0))  # a slow critique the user must not wait behind
        task = asyncio.ensure_future(reflect(daemon))
        # The critique is with the model (the gate counts a call as busy a step before it reaches the backend).
        await wait_until(lambda: daemon.ctx.model_gate.background_busy and len(llm.requests) == 1)
        response = await daemon.client.post(CHAT, json={"messages": MESSAGES})
        assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == "hello there"
        result = await asyncio.wait_for(task, 5.0)
        assert result.status == "yielded"
        assert traj.id not in scheduler.reflector.reflected  # left for the next pass
        assert daemon.ctx.model_gate.preemptions == 1

        llm.enqueue(critique())
        assert (await reflect(daemon)).data == {"reflected": 1, "lessons": 1, "status_ok": 1}


async def test_with_reflection_off_the_phase_skips_and_says_why(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, reflection=False) as daemon:
        assert await reflect(daemon) == PhaseResult.skipped("reflection is off (--no-reflection)")
