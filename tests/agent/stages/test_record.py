"""Every chat turn is recorded as a trajectory: the id in a header, redacted on disk, heuristics applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import structlog

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from ghost_agent.server import build_app
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome
from tests.conftest import app_client, make_settings, wait_until

CHAT = "/v1/chat/completions"


def store(settings_home: Path) -> TrajectoryCollector:
    return TrajectoryCollector(settings_home / "system" / "trajectories")


async def test_non_streaming_turn_is_recorded_with_its_id(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    backend = ScriptedBackend([ScriptedReply(content="Paris.")])
    async with app_client(settings, backend) as client:
        response = await client.post(
            CHAT,
            json={"messages": [{"role": "user", "content": "Capital of France?"}]},
            headers={"x-ghost-session-id": "s1"},
        )
    trajectory_id = response.headers["x-ghost-trajectory-id"]
    traj = store(settings.home).get(trajectory_id)
    assert traj is not None
    assert traj.source == "chat" and traj.session_id == "s1"
    assert traj.user_request == "Capital of France?"
    assert traj.final_response == "Paris."
    assert traj.outcome is Outcome.UNKNOWN and traj.steps == []
    assert traj.router is not None and traj.router["decision"] == "fast"
    assert traj.usage is not None and traj.usage["total_tokens"] > 0
    assert traj.extra["request_id"] == response.headers["x-request-id"]
    assert (settings.home / "system" / "trajectories" / traj.day / "session-s1.jsonl").exists()


async def test_streamed_turn_is_recorded_folded(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    call = tool_call("lookup", '{"q": "x"}', id="call_1")
    backend = ScriptedBackend([ScriptedReply(content="Let me look.", tool_calls=[call], chunk_size=3)])
    async with app_client(settings, backend) as client:
        response = await client.post(
            CHAT, json={"stream": True, "messages": [{"role": "user", "content": "find x"}], "user": "alice"}
        )
        assert response.text.endswith("data: [DONE]\n\n")
    traj = store(settings.home).get(response.headers["x-ghost-trajectory-id"])
    assert traj is not None
    assert traj.final_response == "Let me look."
    assert traj.session_id == "alice"
    assert traj.extra["client_tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"q": "x"}'}
    assert traj.extra["stream"] is True


async def test_secrets_never_reach_the_store(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0" * 2
    async with app_client(settings, ScriptedBackend()) as client:  # echo: the reply repeats the secret
        response = await client.post(CHAT, json={"messages": [{"role": "user", "content": f"my key is {secret}"}]})
        assert response.status_code == 200
    files = list((settings.home / "system" / "trajectories").rglob("*.jsonl"))
    assert files
    for path in files:
        assert secret.encode() not in path.read_bytes()
    traj = store(settings.home).get(response.headers["x-ghost-trajectory-id"])
    assert traj is not None and "<REDACTED" in traj.user_request


async def test_recording_off_stores_nothing(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, record_trajectories=False)
    async with app_client(settings, ScriptedBackend()) as client:
        response = await client.post(CHAT, json={"messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    assert "x-ghost-trajectory-id" not in response.headers
    assert not list((settings.home / "system" / "trajectories").rglob("*.jsonl"))


async def test_failed_backend_call_is_recorded_with_the_reason(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    backend = ScriptedBackend([ScriptedReply(error=(502, "upstream exploded"))])
    async with app_client(settings, backend) as client:
        response = await client.post(CHAT, json={"messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 502
    (traj,) = list(store(settings.home).iter_trajectories())
    assert traj.failure_reason is not None and "upstream exploded" in traj.failure_reason
    assert traj.extra["backend_error"]["status"] == 502


async def test_outcome_heuristics_run_before_recording(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    backend = ScriptedBackend([ScriptedReply(content="giving up [ATTEMPT_ABORTED_LOOP]")])
    async with app_client(settings, backend) as client:
        response = await client.post(CHAT, json={"messages": [{"role": "user", "content": "do it"}]})
    traj = store(settings.home).get(response.headers["x-ghost-trajectory-id"])
    assert traj is not None
    assert traj.outcome is Outcome.FAILED
    assert traj.failure_reason is not None and "abort" in traj.failure_reason.lower()


async def test_record_line_is_one_schema_tagged_json_object(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    async with app_client(settings, ScriptedBackend()) as client:
        await client.post(CHAT, json={"messages": [{"role": "user", "content": "hi"}]})
    (path,) = list((settings.home / "system" / "trajectories").rglob("session-*.jsonl"))
    (line,) = path.read_bytes().splitlines()
    record = orjson.loads(line)
    assert record["schema"] == "ghost.trajectory.v1"
    assert {"id", "session_id", "ts", "source", "user_request", "steps", "final_response", "outcome",
            "failure_reason", "extra"} <= set(record)


async def test_batched_records_are_fsynced_periodically(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, trajectory_flush_s=0.05)
    app = build_app(settings, ScriptedBackend())
    collector = app.state.ctx.collector
    try:
        await _exercise_periodic_flush(app, collector)
    finally:
        structlog.reset_defaults()


async def _exercise_periodic_flush(app: Any, collector: TrajectoryCollector) -> None:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            await client.post(CHAT, json={"messages": [{"role": "user", "content": "hi"}]})
        # Written through at once (a crash keeps it); synced by the periodic flush soon after.
        assert list(collector.iter_trajectories())
        await wait_until(lambda: collector.unsynced == 0, timeout=5)
