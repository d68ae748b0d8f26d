"""Runners: the stub echoes; the http runner asks a real daemon on a loopback port (scripted backend), records
every trajectory id, turns HTTP errors and timeouts into reply fields, and refuses any non-loopback base url
before a connection could be made."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ghost_agent import __version__
from ghost_agent.distill.collector import TrajectoryCollector
from ghost_agent.eval.runners import (
    HttpRunner,
    Runner,
    RunnerError,
    StubRunner,
    loopback_base_url,
    make_runner,
)
from ghost_agent.eval.task import EvalTask
from ghost_agent.home import GhostHome
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
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
    in turn (the last one repeats), /v1/models answers 200."""
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/health":
            status = statuses[min(sum(p == "/health" for p in seen) - 1, len(statuses) - 1)]
            return httpx.Response(200, json={"status": status, "version": "0.1.0", "model": "m",
                                             "backend": {"kind": "embedded"}, "learned": {}})
        return httpx.Response(200, json={"object": "list", "data": []})

    return httpx.MockTransport(handle), seen


async def test_describe_waits_while_the_daemon_is_starting() -> None:
    transport, seen = health_transport(["starting", "starting", "ok"])
    runner = HttpRunner("http://127.0.0.1:8000", timeout_s=10, transport=transport)
    try:
        described = await runner.describe()
    finally:
        await runner.aclose()
    assert seen == ["/health", "/health", "/health", "/v1/models"]
    assert described["daemon_status"] == "ok" and described["backend"] == "embedded"

    transport, seen = health_transport(["starting"])
    runner = HttpRunner("http://127.0.0.1:8000", timeout_s=0.6, transport=transport)
    try:
        with pytest.raises(RunnerError, match="still starting after 0.6s"):
            await runner.describe()
    finally:
        await runner.aclose()
    assert "/v1/models" not in seen
