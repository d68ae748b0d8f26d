"""A turn the client saw succeed is on disk before the reply's last byte leaves the daemon.

Driven at the ASGI level: the test's `send` looks for the trajectory at the very moment the final body message
(`more_body: False`) is handed to the server, i.e. before the client could have the whole reply. Recording after
delivery (a background task) would lose that turn to a kill -9 in between (bench/bench_crash_load.py measured
90 of 2,321 such turns lost at one kill under 200-stream load)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.server import build_app
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import make_settings


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_trajectory_is_written_before_the_last_byte(tmp_path: Path, stream: bool) -> None:
    settings = make_settings(tmp_path, router="always-fast")
    scripted = ScriptedBackend()
    scripted.enqueue(ScriptedReply(content="Paris is the capital of France."))
    app = build_app(settings, scripted, configure_logs=False)
    body = json.dumps({"model": "m", "stream": stream,
                       "messages": [{"role": "user", "content": "Capital of France?"}]}).encode()
    seen: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        if not seen.get("sent_body"):
            seen["sent_body"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await seen.setdefault("forever", asyncio.Event()).wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = {k.decode(): v.decode() for k, v in message["headers"]}
            seen["status"] = message["status"]
            seen["trajectory_id"] = headers.get("x-ghost-trajectory-id")
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
                seen["on_disk_at_last_byte"] = collector.get(seen["trajectory_id"]) is not None

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
        "root_path": "", "headers": [(b"content-type", b"application/json"), (b"host", b"localhost")],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    async with app.router.lifespan_context(app):
        scope["state"] = {}
        await app(scope, receive, send)
    assert seen["status"] == 200 and seen["trajectory_id"]
    assert seen["on_disk_at_last_byte"], "the turn was recorded only after the client had its reply"
