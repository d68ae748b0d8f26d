"""Seed 001's live verification, automated: the daemon on a loopback port in front of the scripted fake
upstream (also on a loopback port), driven over real HTTP like a client would.

turn 1 -> UNKNOWN; turn 2 "no, ..." + rephrase -> corrections sidecar line, overlay FAILED, the turn's lessons
retracted, a reflection lesson stored with the right provenance within seconds (and the critique reached the
model only after the correcting turn's reply); turn 3, a similar request -> the lesson is in the prompt the
upstream received; an unrelated request -> it is not. Then neither path reflects the same turn again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import structlog

from ghost_agent.home import GhostHome
from ghost_agent.llm.fake_server import serve_in_thread
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.lessons import Lesson
from ghost_agent.memory.store import SkillMemory
from ghost_agent.reflection import Reflector
from ghost_agent.server import build_app
from ghost_agent.server.state import AppContext
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.conftest import make_settings
from tests.reflection.helpers import THREE_WORDS, THREE_WORDS_FIX, critique

FIRST_REPLY = "Sure! Here you go: kangaroo trampoline lighthouse"
SOLUTION = "Reply with exactly the requested words and nothing else."
LESSON_DEADLINE_S = 5.0


@contextlib.contextmanager
def daemon(settings: Settings) -> Iterator[tuple[httpx.Client, AppContext]]:
    """The daemon under a real uvicorn on a loopback port; a client for it and its context (to inspect)."""
    app = build_app(settings)
    try:
        with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
            yield client, app.state.ctx
    finally:
        structlog.reset_defaults()


def chat(client: httpx.Client, *messages: tuple[str, str]) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": role, "content": text} for role, text in messages]}
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response


def stored(home: GhostHome, trajectory_id: str) -> Trajectory:
    """The trajectory as on disk (correction overlaid); recording runs after the reply, so poll briefly."""
    deadline = time.perf_counter() + LESSON_DEADLINE_S
    while True:
        with TrajectoryCollector(home.trajectories) as collector:
            found = collector.get(trajectory_id)
        if found is not None:
            return found
        assert time.perf_counter() < deadline, f"trajectory {trajectory_id} not recorded"
        time.sleep(0.01)


def lessons(home: GhostHome) -> list[Lesson]:
    with SkillMemory(home.lessons_db) as memory:
        return memory.all(include_retracted=True)


def wait_for_lesson(home: GhostHome, source_trajectory_id: str) -> tuple[Lesson, float]:
    start = time.perf_counter()
    while True:
        found = [x for x in lessons(home)
                 if x.source == "reflection" and x.source_trajectory_id == source_trajectory_id]
        if found:
            return found[0], time.perf_counter() - start
        if time.perf_counter() - start > LESSON_DEADLINE_S:
            raise AssertionError(f"no reflection lesson within {LESSON_DEADLINE_S}s")
        time.sleep(0.01)


def prompt_of(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages"))


def test_a_correction_becomes_a_lesson_that_the_next_similar_turn_sees(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    settings = make_settings(tmp_path, upstream_url=url, router="always-fast", watchdog=False)
    home = GhostHome(settings.home)
    with daemon(settings) as (client, ctx):
        # turn 1: answered, recorded UNKNOWN, and it taught a (bad) lesson
        llm.enqueue(ScriptedReply(content=FIRST_REPLY))
        first_id = chat(client, ("user", THREE_WORDS)).headers["x-ghost-trajectory-id"]
        assert stored(home, first_id).outcome is Outcome.UNKNOWN
        with SkillMemory(home.lessons_db) as memory:
            memory.learn_lesson("three word replies", "none", "add a friendly preamble", source_trajectory_id=first_id,
                                session_id="default")

        # turn 2: the user corrects it; the reply does not wait for the reflection
        llm.enqueue(ScriptedReply(content="kangaroo trampoline metronome"), critique(solution=SOLUTION))
        second = chat(client, ("user", THREE_WORDS), ("assistant", FIRST_REPLY), ("user", THREE_WORDS_FIX))
        assert second.json()["choices"][0]["message"]["content"] == "kangaroo trampoline metronome"
        lesson, seconds = wait_for_lesson(home, first_id)

        sidecar = [orjson.loads(line) for line in (home.trajectories / "corrections.jsonl").read_bytes().splitlines()]
        assert [(c["trajectory_id"], c["outcome"], c["source"]) for c in sidecar] == [
            (first_id, "failed", "user_correction")
        ]
        assert stored(home, first_id).outcome is Outcome.FAILED
        [retracted] = [x for x in lessons(home) if x.source != "reflection"]
        assert retracted.status == "retracted"
        assert (lesson.source_trajectory_id, lesson.session_id, lesson.status) == (first_id, "default", "active")
        assert lesson.solution == SOLUTION and seconds < LESSON_DEADLINE_S
        # chat went first: the critique reached the model after the correcting turn, and saw the correction
        assert len(llm.requests) == 3
        critique_prompt = prompt_of(llm.requests[2])
        assert "kangaroo trampoline metronome" in critique_prompt and FIRST_REPLY in critique_prompt
        with TrajectoryCollector(home.trajectories) as collector:
            [reflection] = list(collector.iter_trajectories(source="reflection"))
        assert reflection.extra["reflected_from"] == first_id and reflection.extra["lesson_id"] == lesson.id

        # turn 3: a similar request is shown the lesson; an unrelated one is not
        llm.enqueue(ScriptedReply(content="apple banana cherry"), ScriptedReply(content="Paris."))
        similar = chat(client, ("user", "Reply with three words exactly: apple banana cherry"))
        assert "exactly the requested words" in prompt_of(llm.requests[3])
        shown = stored(home, similar.headers["x-ghost-trajectory-id"]).extra["lessons_shown"]
        assert [ref["id"] for ref in shown] == [lesson.id]
        chat(client, ("user", "What is the capital of France?"))
        assert "exactly the requested words" not in prompt_of(llm.requests[4])

        # neither path reflects turn 1 again: this daemon's backstop has nothing to do ...
        assert ctx.reflection is not None
        reflector = ctx.reflection.reflector
        assert first_id in reflector.reflected
        assert reflector.scan(10, exclude=frozenset(reflector.reflected)) == ([], {first_id})
    # ... and neither has a restarted daemon's (the reflection record is on disk)
    with TrajectoryCollector(home.trajectories) as collector:
        fresh = Reflector(ScriptedBackend(default="error"), collector=collector)
        assert asyncio.run(fresh.run()) == []
    assert len(llm.requests) == 5


def test_with_reflection_off_a_correction_schedules_nothing(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    settings = make_settings(tmp_path, upstream_url=url, router="always-fast", watchdog=False, reflection=False)
    with daemon(settings) as (client, ctx):
        llm.enqueue(ScriptedReply(content=FIRST_REPLY), ScriptedReply(content="kangaroo trampoline metronome"))
        chat(client, ("user", THREE_WORDS))
        chat(client, ("user", THREE_WORDS), ("assistant", FIRST_REPLY), ("user", THREE_WORDS_FIX))
        assert ctx.reflection is None
    assert len(llm.requests) == 2
