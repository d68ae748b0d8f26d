"""The daemon probes the sandbox in the background at startup and reports it: degraded or not on the open
`/health`, the detail on `/v1/ghost/health` and in doctor. Without bubblewrap the code tools refuse (the daemon
still chats, the answer-first checks are skipped); running code unisolated is an explicit, loud opt-in."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ghost_agent.cli.doctor import check_sandbox
from ghost_agent.home import GhostHome
from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory
from tests.conftest import app_client, make_settings
from tests.sandbox.conftest import hide_bwrap

DETAIL = "/v1/ghost/health"
SPEC = "Write a python function double(x) that returns twice x."
DRAFT = "```python\ndef double(x):\n    return 2 * x\n```"


async def sandbox_status(client: httpx.AsyncClient, timeout: float = 30.0) -> dict[str, Any]:
    """/v1/ghost/health's sandbox section once the background probe has finished."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        body: dict[str, Any] = (await client.get(DETAIL)).json()["sandbox"]
        if body["status"] != "probing":
            return body
        assert asyncio.get_running_loop().time() < deadline, "sandbox probe did not finish"
        await asyncio.sleep(0.02)


def stored(settings: Settings, trajectory_id: str) -> Trajectory:
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        found = collector.get(trajectory_id)
    assert found is not None
    return found


def log_events(settings: Settings) -> list[dict[str, Any]]:
    path = GhostHome(settings.home).log_file
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def chat(client: httpx.AsyncClient, content: str) -> httpx.Response:
    return await client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user",
                                                                                        "content": content}]})


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox)")
async def test_health_reports_the_isolating_backend(tmp_path: Path) -> None:
    async with app_client(make_settings(tmp_path), ScriptedBackend()) as client:
        sandbox = await sandbox_status(client)
        public = (await client.get("/health")).json()
    assert sandbox["status"] == "ready" and sandbox["code_tools"] == "enabled"
    assert sandbox["backend"] == "bwrap" and sandbox["isolated"] is True
    assert sandbox["network"] is True and sandbox["filesystem"] is True
    assert sandbox["degraded"] is False and sandbox["warnings"] == []
    assert all(p["ok"] for p in sandbox["probes"] if p["candidate"] == sandbox["candidate"])
    assert public["status"] == "ok" and public["degraded"] == []


async def test_health_says_loudly_when_code_would_run_unisolated(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, sandbox="subprocess")
    async with app_client(settings, ScriptedBackend()) as client:
        sandbox = await sandbox_status(client)
        public = (await client.get("/health")).json()
    assert sandbox["status"] == "ready"
    assert sandbox["backend"] == "subprocess" and sandbox["isolated"] is False
    assert sandbox["network"] is False and sandbox["filesystem"] is False
    assert sandbox["degraded"] is True and sandbox["warnings"][0].startswith("UNISOLATED")
    # the open /health says that the sandbox is degraded, and nothing more
    assert public == {"status": "degraded", "version": public["version"], "degraded": ["sandbox"]}
    warning = next(e for e in log_events(settings) if e["event"] == "sandbox_unisolated")
    assert warning["level"] == "warning" and warning["mode"] == "subprocess"


def test_doctor_reports_the_sandbox(tmp_path: Path) -> None:
    check = check_sandbox(make_settings(tmp_path, sandbox="subprocess"))
    assert check.name == "sandbox" and check.status == "WARN"
    assert "UNISOLATED" in check.detail and check.fix


# --------------------------------------------------------------------------------- without bubblewrap


async def test_without_bubblewrap_code_tools_refuse_and_the_daemon_still_chats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upstream: tuple[str, ScriptedBackend]
) -> None:
    """Issue 12 item 4: `--sandbox auto` with bubblewrap missing runs no model-written code at all."""
    hide_bwrap(monkeypatch, tmp_path)
    url, llm = upstream
    settings = make_settings(tmp_path, upstream_url=url, router="always-agent", agent_strategy="auto")
    async with app_client(settings, make_backend(settings.backend)) as client:
        sandbox = await sandbox_status(client)
        public = (await client.get("/health")).json()
        # the answer-first turn: the draft is the reply, its checks skipped (they would run code)
        llm.enqueue(ScriptedReply(content=DRAFT))
        answered = await chat(client, SPEC)
    assert sandbox["status"] == "refused" and sandbox["code_tools"] == "disabled" and sandbox["degraded"] is True
    assert "bubblewrap cannot run here" in sandbox["error"] and "--sandbox unisolated" in sandbox["error"]
    assert "make sandbox" in sandbox["fix"] and "ghost-agent sandbox setup" in sandbox["fix"]
    assert public["status"] == "degraded" and public["degraded"] == ["sandbox"]

    assert answered.status_code == 200, answered.text
    assert answered.json()["choices"][0]["message"]["content"] == DRAFT
    assert len(llm.requests) == 1  # no test-writing or repair calls: nothing could check them
    traj = stored(settings, answered.headers["x-ghost-trajectory-id"])
    assert traj.steps == [] and "bubblewrap cannot run here" in traj.extra["agent"]["checks_skipped"]

    events = log_events(settings)
    refused = next(e for e in events if e["event"] == "sandbox_unavailable")
    assert refused["code_tools"] == "disabled"
    assert not [e for e in events if e["event"] in ("sandbox_detected", "sandbox_unisolated")]


async def test_without_bubblewrap_the_python_tool_says_why_and_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upstream: tuple[str, ScriptedBackend]
) -> None:
    hide_bwrap(monkeypatch, tmp_path)
    url, llm = upstream
    marker = tmp_path / "ran-unisolated"
    code = f"open({str(marker)!r}, 'w').write('x')"
    llm.enqueue(
        ScriptedReply(content=json.dumps({"tool": "python", "args": {"code": code}})),
        ScriptedReply(content="I cannot run code here, but the answer is 4."),
        ScriptedReply(content=json.dumps({"verdict": "CONFIRMED", "confidence": 0.5, "note": "ok"})),
    )
    settings = make_settings(tmp_path, upstream_url=url, router="always-agent", agent_strategy="action-loop",
                             mcts=False)
    async with app_client(settings, make_backend(settings.backend)) as client:
        await sandbox_status(client)
        response = await chat(client, "use python to compute 2 + 2")
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"].endswith("the answer is 4.")
    assert not marker.exists(), "model-written code ran although no isolating sandbox exists"
    seen = json.dumps(llm.requests[1]["messages"])  # the tool result the model got back
    assert "code execution is disabled" in seen and "bubblewrap cannot run here" in seen
    assert "make sandbox" in seen and "Answer without running code" in seen
    [step] = stored(settings, response.headers["x-ghost-trajectory-id"]).steps
    assert step.tool_name == "python" and step.ok is False and "code execution is disabled" in (step.error or "")


async def test_running_code_unisolated_is_an_explicit_loud_opt_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_bwrap(monkeypatch, tmp_path)
    settings = make_settings(tmp_path, sandbox="unisolated")
    async with app_client(settings, ScriptedBackend()) as client:
        sandbox = await sandbox_status(client)
        public = (await client.get("/health")).json()
    assert sandbox["status"] == "ready" and sandbox["code_tools"] == "enabled"
    assert sandbox["backend"] == "subprocess" and sandbox["isolated"] is False and sandbox["mode"] == "unisolated"
    assert "opted in with --sandbox unisolated" in sandbox["warnings"][0]
    assert public["status"] == "degraded" and public["degraded"] == ["sandbox"]
    warning = next(e for e in log_events(settings) if e["event"] == "sandbox_unisolated")
    assert warning["level"] == "warning" and "bwrap not installed" in warning["reason"]
    check = check_sandbox(settings)
    assert check.status == "WARN" and "UNISOLATED (opted in with --sandbox unisolated)" in check.detail
