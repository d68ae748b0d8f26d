"""Runners: the stub echoes; the http runner asks a real daemon on a loopback port (scripted backend), records
every trajectory id, turns HTTP errors and timeouts into reply fields, and refuses any non-loopback base url
before a connection could be made."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent import __version__
from ghost_agent.eval.run import run_suite
from ghost_agent.eval.runners import (
    HttpRunner,
    Runner,
    RunnerError,
    StubRunner,
    loopback_base_url,
    make_runner,
    place_task_files,
)
from ghost_agent.eval.task import EvalTask
from ghost_agent.home import GhostHome
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox.base import SandboxError
from ghost_agent.sandbox.workspace import Workspaces, workspace_name
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import daemon_on_port, make_settings


def task(task_id: str = "t/1", prompt: str = "what is 6 * 7?", system: str | None = None) -> EvalTask:
    return EvalTask(id=task_id, suite="s", cluster="c", prompt=prompt, verifier="contains", expected="42",
                    system=system)


async def test_the_stub_echoes_the_prompt_and_describes_itself() -> None:
    runner = StubRunner()
    assert isinstance(runner, Runner)
    reply = await runner.reply(task(prompt="Repeat exactly: ghost-ok"))
    assert reply.text == "Repeat exactly: ghost-ok"
    assert reply.error is None and not reply.timed_out and reply.trajectory_id is None
    assert await runner.describe() == {"runner": "stub", "model": "stub-echo", "daemon_version": __version__}


@pytest.mark.parametrize("url, expected", [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
    ("http://127.4.5.6:9", "http://127.4.5.6:9"),
    ("http://localhost:8000", "http://localhost:8000"),
    ("https://LOCALHOST:8443/", "https://localhost:8443"),
    ("http://[::1]:8000", "http://[::1]:8000"),
    ("http://[::ffff:127.0.0.1]:8000", "http://[::ffff:127.0.0.1]:8000"),
])
def test_loopback_base_urls_are_accepted(url: str, expected: str) -> None:
    assert loopback_base_url(url) == expected


# Documentation ranges and names only; and nothing is ever sent: the transport below records instead.
@pytest.mark.parametrize("url", [
    "http://192.0.2.10:8000",
    "http://[2001:db8::1]:8000",
    "http://0.0.0.0:8000",
    "http://example.invalid:8000",
    "http://127.0.0.1.example.invalid",
    "http://localhost.example.invalid",
    "ftp://127.0.0.1:21",
    "127.0.0.1:8000",
    "not a url",
])
def test_a_non_loopback_base_url_is_refused_without_connecting(url: str) -> None:
    attempts: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(200, json={})

    with pytest.raises(ValueError, match="base url"):
        HttpRunner(url, transport=httpx.MockTransport(record))
    with pytest.raises(ValueError, match="base url"):
        make_runner("http", base_url=url)
    assert attempts == []


def test_make_runner_names_the_kinds() -> None:
    assert isinstance(make_runner("stub"), StubRunner)
    with pytest.raises(ValueError, match="unknown runner"):
        make_runner("carrier-pigeon")
    with pytest.raises(ValueError, match="timeout"):
        HttpRunner("http://127.0.0.1:8000", timeout_s=0)


async def test_the_http_runner_asks_the_daemon_and_records_the_trajectory(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    scripted = ScriptedBackend(model="scripted-model")
    scripted.enqueue(ScriptedReply(content="It is 42."), ScriptedReply(content="Paris"))
    with daemon_on_port(settings, scripted) as url:
        runner = HttpRunner(url, model="eval-model", timeout_s=30)
        try:
            described = await runner.describe()
            first = await runner.reply(task("t/1", system="Answer briefly."))
            second = await runner.reply(task("t/2", prompt="Capital of France?"))
        finally:
            await runner.aclose()
    assert first.text == "It is 42." and second.text == "Paris"
    assert first.error is None and not first.timed_out and first.duration_ms > 0
    assert first.trajectory_id and second.trajectory_id and first.trajectory_id != second.trajectory_id
    # What reached the model: the system message, the prompt, greedy decoding.
    sent = scripted.requests[0]
    assert sent["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "what is 6 * 7?"},
    ]
    assert sent.get("temperature") == 0.0
    assert described["runner"] == "http" and described["daemon_version"] == __version__
    assert described["daemon_model"] == "scripted-model" and described["model"] == "eval-model"
    assert described["backend"] == "scripted" and set(described["learned"]) == {"prm", "router"}
    # The recorded id names the trajectory the daemon wrote for that very turn.
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        stored = collector.get(first.trajectory_id)
    assert stored is not None and "6 * 7" in str(stored.to_dict())


async def test_http_errors_and_timeouts_become_reply_fields(tmp_path: Path) -> None:
    scripted = ScriptedBackend(model="scripted-model")
    scripted.enqueue(ScriptedReply(error=(500, "upstream exploded")), ScriptedReply(content="too late", delay_s=5))
    with daemon_on_port(make_settings(tmp_path), scripted) as url:
        runner = HttpRunner(url, timeout_s=0.5)
        try:
            failed = await runner.reply(task("t/err"))
            slow = await runner.reply(task("t/slow"))
        finally:
            await runner.aclose()
    assert failed.text == "" and failed.error is not None and failed.error.startswith("HTTP 5")
    assert "upstream exploded" in failed.error and not failed.timed_out
    assert slow.timed_out and slow.text == "" and "timed out after 0.5s" in (slow.error or "")
    assert slow.duration_ms < 4000


async def test_an_api_key_is_sent_and_a_refused_one_fails_describe(tmp_path: Path) -> None:
    scripted = ScriptedBackend(model="scripted-model")
    with daemon_on_port(make_settings(tmp_path, api_key="sekrit-key-123"), scripted) as url:
        keyless = HttpRunner(url, timeout_s=10)
        keyed = HttpRunner(url, api_key="sekrit-key-123", timeout_s=10)
        try:
            with pytest.raises(RunnerError, match="refused the api key"):
                await keyless.describe()
            refused = await keyless.reply(task())
            await keyed.describe()
            answered = await keyed.reply(task(prompt="echo me"))
        finally:
            await keyless.aclose()
            await keyed.aclose()
    assert refused.error is not None and refused.error.startswith("HTTP 401")
    assert answered.text == "echo me" and answered.error is None


async def test_an_unreachable_daemon() -> None:
    runner = HttpRunner(f"http://127.0.0.1:{free_port()}", timeout_s=5)
    try:
        with pytest.raises(RunnerError, match="cannot reach the daemon"):
            await runner.describe()
        reply = await runner.reply(task())
    finally:
        await runner.aclose()
    assert reply.error is not None and "ConnectError" in reply.error and not reply.timed_out


async def test_proxy_environment_variables_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment would carry eval traffic off the machine. Here it points at a dead loopback
    # port: a runner that honoured it could not reach the daemon.
    dead = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    scripted = ScriptedBackend(model="scripted-model")
    with daemon_on_port(make_settings(tmp_path), scripted) as url:
        runner = HttpRunner(url, timeout_s=10)
        try:
            await runner.describe()
            reply = await runner.reply(task(prompt="direct"))
        finally:
            await runner.aclose()
    assert reply.text == "direct" and reply.error is None


def health_transport(statuses: list[str]) -> tuple[httpx.MockTransport, list[str]]:
    """A daemon stand-in (httpx's MockTransport, nothing leaves the process): /health answers the given statuses
    in turn (the last one repeats), /v1/ghost/health the detail."""
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        status = statuses[min(sum(p == "/health" for p in seen) - 1, len(statuses) - 1)]
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": status, "version": "0.1.0", "degraded": []})
        return httpx.Response(200, json={"status": status, "version": "0.1.0", "degraded": [], "model": "m",
                                         "backend": {"kind": "embedded"}, "learned": {}})

    return httpx.MockTransport(handle), seen


async def test_describe_waits_while_the_daemon_is_starting() -> None:
    transport, seen = health_transport(["starting", "starting", "ok"])
    runner = HttpRunner("http://127.0.0.1:8000", timeout_s=10, transport=transport)
    try:
        described = await runner.describe()
    finally:
        await runner.aclose()
    assert seen == ["/health", "/health", "/health", "/v1/ghost/health"]
    assert described["daemon_status"] == "ok" and described["backend"] == "embedded"

    transport, seen = health_transport(["starting"])
    runner = HttpRunner("http://127.0.0.1:8000", timeout_s=0.6, transport=transport)
    try:
        with pytest.raises(RunnerError, match="still starting after 0.6s"):
            await runner.describe()
    finally:
        await runner.aclose()
    assert "/v1/ghost/health" not in seen


# --- task files in the session workspace ----------------------------------------------------------------------


def file_task(files: dict[str, str], task_id: str = "workspace_data/csv/t1") -> EvalTask:
    return EvalTask(id=task_id, suite="workspace_data", cluster="csv", prompt="Read sales.csv; what is the total?",
                    verifier="answer_line", expected=3, files=files)


@dataclass
class WorkspaceWitness(ScriptedBackend):
    """The scripted model, also noting at each call what the watched workspace directory holds."""

    watched: Path | None = None
    snapshots: list[dict[str, str]] = field(default_factory=list)

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        seen: dict[str, str] = {}
        if self.watched is not None and self.watched.is_dir():
            seen = {p.relative_to(self.watched).as_posix(): p.read_text() for p in self.watched.rglob("*")
                    if p.is_file()}
        self.snapshots.append(seen)
        return await super().complete(body)


async def test_task_files_are_in_the_workspace_before_the_prompt_is_sent(tmp_path: Path) -> None:
    """When the daemon calls the model for the task, the files already sit in the workspace the daemon gives
    that session (`$GHOST_HOME/workspace/<workspace_name(session id)>`), and the session id was sent."""
    settings = make_settings(tmp_path)
    root = GhostHome(settings.home).workspace
    csv_text = "item,n\nmarker-a17,1\nmarker-b42,2\n"
    task = file_task({"data/sales.csv": csv_text, "notes.json": "{}"})
    with daemon_on_port(settings, backend := WorkspaceWitness(model="scripted-model", default="error")) as url:
        runner = HttpRunner(url, timeout_s=30, workspace_root=root)
        backend.watched = root / workspace_name(runner.session_id(task))
        backend.enqueue(ScriptedReply(content="The total is 3.\nAnswer: 3"))
        try:
            reply = await runner.reply(task)
        finally:
            await runner.aclose()
    assert reply.error is None and reply.text.endswith("Answer: 3")
    assert backend.snapshots == [{"data/sales.csv": csv_text, "notes.json": "{}"}]
    assert runner.session_id(task).startswith("eval-") and task.id in runner.session_id(task)
    # the daemon saw the same session: its trajectory names it
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        stored = collector.get(reply.trajectory_id or "")
    assert stored is not None and runner.session_id(task) in json.dumps(stored.to_dict())


async def test_a_file_task_without_a_workspace_root_is_an_error_outcome(tmp_path: Path) -> None:
    scripted = ScriptedBackend(model="scripted-model", default="error")
    scripted.enqueue(ScriptedReply(content="It is 42."))
    with daemon_on_port(make_settings(tmp_path), scripted) as url:
        runner = HttpRunner(url, timeout_s=10)
        try:
            result = await run_suite([file_task({"sales.csv": "a\n1\n"}), task("t/plain")], runner)
        finally:
            await runner.aclose()
    failed, plain = result.outcomes
    assert not failed.passed and failed.error is not None and "no workspace_root" in failed.error
    assert failed.reward["failure_class"] == "transport_error"
    assert plain.passed  # the run went on; only the plain task reached the model
    assert [r["messages"][-1]["content"] for r in scripted.requests] == ["what is 6 * 7?"]


@pytest.mark.parametrize("name", ["../escape.csv", "/etc/passwd", "", "a/../../b", "a\\b"])
async def test_file_names_outside_the_workspace_are_refused(tmp_path: Path, name: str) -> None:
    runner = HttpRunner("http://127.0.0.1:9", timeout_s=5, workspace_root=tmp_path / "ws")
    try:
        reply = await runner.reply(file_task({name: "x"}))
    finally:
        await runner.aclose()
    assert reply.error is not None and "must be a relative path" in reply.error
    assert not (tmp_path / "escape.csv").exists()


def test_place_task_files_uses_the_daemons_directory_and_refuses_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    workspace = place_task_files(root, "eval-1/odd id", {"a.json": "{}", "sub/b.txt": "b"})
    assert workspace == Workspaces(root, quota_mb=1, max_age_days=0).path_for("eval-1/odd id")
    assert (workspace / "a.json").read_text() == "{}" and (workspace / "sub" / "b.txt").read_text() == "b"
    (root / "plain").symlink_to(tmp_path)
    with pytest.raises(SandboxError, match="not a directory"):
        place_task_files(root, "plain", {"x": "y"})
