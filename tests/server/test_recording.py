"""A turn the client saw succeed whose recording failed is never silent: counted in /metrics and logged."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson

from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import app_client, make_settings

CHAT = {"messages": [{"role": "user", "content": "hi"}]}


def counter(metrics: str, finisher: str) -> float:
    found = re.search(rf'^ghost_finisher_failures_total\{{finisher="{finisher}"\}} (\S+)$', metrics, re.M)
    assert found is not None, "the counter is exported from the start, at 0"
    return float(found.group(1))


async def test_a_failed_recording_is_counted_and_logged(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path)
    trajectories = settings.home / "system" / "trajectories"
    async with app_client(settings, scripted) as client:
        assert counter((await client.get("/metrics")).text, "record") == 0
        # A real failure: a file sits where today's day directory must go (today and tomorrow, for midnight).
        now = datetime.now(timezone.utc)
        for day in (now, now + timedelta(days=1)):
            (trajectories / day.strftime("%Y-%m-%d")).write_text("not a directory")
        response = await client.post("/v1/chat/completions", json=CHAT)
        assert response.status_code == 200  # the client is served either way
        trajectory_id = response.headers["x-ghost-trajectory-id"]

        failures = 0.0
        for _ in range(500):  # the finisher runs after the reply was sent
            failures = counter((await client.get("/metrics")).text, "record")
            if failures:
                break
            await asyncio.sleep(0.01)
        assert failures == 1
        assert counter((await client.get("/metrics")).text, "learn") == 0
    log_lines = settings.home.joinpath("system/logs/ghost.jsonl").read_bytes().splitlines()
    events = [orjson.loads(line) for line in log_lines]
    failed = [e for e in events if e.get("event") == "finisher_failed"]
    assert [(e["finisher"], e["trajectory_id"]) for e in failed] == [("record", trajectory_id)]
    assert "error" in failed[0]
