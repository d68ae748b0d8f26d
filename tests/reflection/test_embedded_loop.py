"""The learning loop of seed 001 on the embedded Qwen2.5-Coder-1.5B (slow: loads the model).

Over HTTP against the real daemon: a turn, the user's correction stating a preference → the corrected turn is
FAILED in the sidecar and the preference is stored as a lesson with its provenance at once; a similar request
is shown it (and the agent applies it); an unrelated one is not. A correction that only rephrases goes to the
model's critique, which ends in a recorded reflection (a lesson, or no lesson with its reason) in bounded time.
Whether the 1.5B then follows the convention is measured by `ghost-agent eval transfer`, not asserted here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ghost_agent.home import GhostHome
from ghost_agent.memory.lessons import Lesson
from ghost_agent.memory.store import SkillMemory
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.conftest import daemon_on_port, make_settings
from tests.server.test_embedded_daemon import MODEL_CACHE, wait_ready

pytestmark = pytest.mark.slow

SESSION = "embedded-loop"
DATES = "When is Christmas Day in 2025? Just give me the date."
DATES_FIX = "No, I write dates as DD/MM/YYYY. What's the date of Christmas Day 2025?"
COLORS = "Name the three primary colors."
COLORS_FIX = "No, name the three primary colors of light."


def chat(url: str, *messages: tuple[str, str]) -> httpx.Response:
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "qwen2.5-coder-1.5b", "temperature": 0, "max_tokens": 256,
              "messages": [{"role": role, "content": content} for role, content in messages]},
        headers={"x-ghost-session-id": SESSION}, timeout=600,
    )
    assert response.status_code == 200, response.text
    return response


def reply(response: httpx.Response) -> str:
    return str(response.json()["choices"][0]["message"]["content"])


def trajectory(home: GhostHome, response: httpx.Response) -> Trajectory:
    with TrajectoryCollector(home.trajectories) as collector:
        collector.flush()
        found = collector.get(response.headers["x-ghost-trajectory-id"])
    assert found is not None
    return found


def wait_for(predicate: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout}s")


def lessons_from(home: GhostHome, trajectory_id: str) -> list[Lesson]:
    if not home.lessons_db.exists():
        return []
    with SkillMemory(home.lessons_db) as memory:
        return [x for x in memory.all() if x.source_trajectory_id == trajectory_id]


def reflection_of(home: GhostHome, trajectory_id: str) -> Trajectory | None:
    with TrajectoryCollector(home.trajectories) as collector:
        collector.flush()
        return next((t for t in collector.iter_trajectories(source="reflection")
                     if t.extra.get("reflected_from") == trajectory_id), None)


def test_a_correction_teaches_the_embedded_daemon_and_only_similar_requests_see_it(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, model_cache_dir=MODEL_CACHE, n_ctx=4096, router="auto",
                             agent_max_tokens=512, watchdog=True)
    home = GhostHome(settings.home)
    with daemon_on_port(settings) as url:
        assert wait_ready(url)["status"] == "ok"
        first = chat(url, ("user", DATES))
        first_id = first.headers["x-ghost-trajectory-id"]
        sent = time.monotonic()
        chat(url, ("user", DATES), ("assistant", reply(first)), ("user", DATES_FIX))
        [lesson] = wait_for(lambda: lessons_from(home, first_id), 60)
        stored_after = time.monotonic() - sent
        assert lesson.source == "preference" and lesson.session_id == SESSION
        assert lesson.solution == 'As the user put it: "I write dates as DD/MM/YYYY."', lesson
        assert stored_after < 120  # the correcting turn's own reply included; the lesson itself takes ms

        similar = chat(url, ("user", "What date is Halloween in 2026?"))
        unrelated = chat(url, ("user", "Write a haiku about the sea."))

        colors = chat(url, ("user", COLORS))
        colors_id = colors.headers["x-ghost-trajectory-id"]
        chat(url, ("user", COLORS), ("assistant", reply(colors)), ("user", COLORS_FIX))
        record = wait_for(lambda: reflection_of(home, colors_id), 240)

    sidecar = [orjson.loads(line) for line in (home.trajectories / "corrections.jsonl").read_bytes().splitlines()]
    assert {r["trajectory_id"] for r in sidecar} >= {first_id, colors_id}
    with TrajectoryCollector(home.trajectories) as collector:
        corrected = collector.get(first_id)
    assert corrected is not None and corrected.outcome is Outcome.FAILED

    shown = trajectory(home, similar)
    assert [r["id"] for r in shown.extra["lessons_shown"]] == [lesson.id]
    assert shown.extra["agent"]["preferences"]["count"] == 1  # the agent tried to apply it
    assert "lessons_shown" not in trajectory(home, unrelated).extra

    # the rephrase-only correction went to the model's critique: a lesson, or no lesson and why
    assert record.extra["lesson"] is not None or record.extra.get("no_lesson"), record.extra
    assert record.extra.get("correcting_message") == COLORS_FIX
