"""Graceful shutdown of the real CLI process: SIGTERM drains in-flight requests, refuses new ones, exits 0.

The daemon runs as `python -m ghost_agent serve` in a subprocess (signals need a real main thread); the
fake upstream runs in this process on a loopback port and is scripted to answer slowly, so a request is
still in flight when the signal arrives.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import sse_events

GRACE_S = 5.0
MESSAGES = [{"role": "user", "content": "take your time"}]


@contextlib.contextmanager
def daemon_process(
    home: Path, upstream_url: str, grace_s: float = GRACE_S
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`ghost_agent serve` in a subprocess, yielded once `/health` answers; killed if a test leaves it running."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHOST_")}
    command = [
        sys.executable, "-m", "ghost_agent", "serve",
        "--port", str(port),
        "--upstream-url", upstream_url,
        "--home", str(home),
        "--shutdown-grace-s", str(grace_s),
        "--upstream-retries", "0",
        "--router", "always-fast",  # these tests drain proxied streams: one upstream call per request
    ]
    stderr_path = home.parent / "daemon.stderr"
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                pytest.fail(f"daemon exited with {proc.returncode}: {stderr_path.read_text()}")
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"daemon did not start: {stderr_path.read_text()}")
            time.sleep(0.05)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def refuses_connections(url: str, timeout: float) -> bool:
    """True once a new connection to `url` is refused (polling, since the signal is handled asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/health", timeout=0.5)
        except httpx.ConnectError:
            return True
        except httpx.TransportError:
            pass
        time.sleep(0.02)
    return False


def log_events(home: Path) -> list[dict[str, Any]]:
    lines = (home / "system" / "logs" / "ghost.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def stop_and_check_exit(proc: subprocess.Popen[bytes], home: Path) -> None:
    """Wait for the process; assert exit code 0 and the shutdown events, in order."""
    returncode = proc.wait(timeout=GRACE_S + 5)
    stderr = (home.parent / "daemon.stderr").read_text()
    assert returncode == 0, f"exit code {returncode}; stderr: {stderr}"
    names = [e["event"] for e in log_events(home)]
    assert "shutdown_begin" in names and "shutdown_complete" in names, names
    assert names.index("shutdown_begin") < names.index("shutdown_complete")


def test_sigterm_drains_in_flight_request_and_exits_zero(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    upstream_url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(content="finished after the signal", delay_s=1.5))
    home = tmp_path / "home"
    with daemon_process(home, upstream_url) as (proc, url):
        result: dict[str, Any] = {}

        def call() -> None:
            try:
                result["response"] = httpx.post(
                    f"{url}/v1/chat/completions", json={"messages": MESSAGES}, timeout=GRACE_S + 5
                )
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                result["error"] = exc

        worker = threading.Thread(target=call)
        worker.start()
        wait_for(lambda: len(upstream.requests) == 1, 5, "the request to reach the upstream")
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        t_signal = time.monotonic()

        assert refuses_connections(url, timeout=2), "new connections must be refused after SIGTERM"
        assert worker.is_alive(), "connections were refused while the in-flight request was still running"
        worker.join(timeout=GRACE_S + 5)
        assert "error" not in result, result.get("error")
        response = result["response"]
        assert response.status_code == 200, response.text
        assert response.json()["choices"][0]["message"]["content"] == "finished after the signal"

        stop_and_check_exit(proc, home)
        assert time.monotonic() - t_signal < GRACE_S, "shutdown took longer than the grace period"
    events = log_events(home)
    names = [e["event"] for e in events]
    served = [e for e in events if e["event"] == "request" and e.get("path") == "/v1/chat/completions"]
    assert [e["status"] for e in served] == [200]
    assert names.index("request", names.index("startup") + 1) < names.index("shutdown_begin"), (
        "the in-flight request must finish before the lifespan shuts down"
    )
    assert refuses_connections(url, timeout=0.5)


def test_sigterm_lets_in_flight_stream_finish_with_done(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    upstream_url, upstream = fake_upstream
    text = "streamed to the end despite SIGTERM"
    upstream.enqueue(ScriptedReply(content=text, chunk_size=3, chunk_delay_s=0.15))
    home = tmp_path / "home"
    with daemon_process(home, upstream_url) as (proc, url):
        first_event = threading.Event()
        result: dict[str, Any] = {}

        def stream() -> None:
            body = b""
            try:
                with httpx.stream(
                    "POST", f"{url}/v1/chat/completions", json={"messages": MESSAGES, "stream": True},
                    timeout=GRACE_S + 5,
                ) as response:
                    result["status"] = response.status_code
                    for piece in response.iter_bytes():
                        body += piece
                        if b"data: " in body:
                            first_event.set()
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                result["error"] = exc
            result["body"] = body.decode()

        worker = threading.Thread(target=stream)
        worker.start()
        assert first_event.wait(5), "the stream never started"
        proc.send_signal(signal.SIGTERM)
        t_signal = time.monotonic()
        assert refuses_connections(url, timeout=2), "new connections must be refused after SIGTERM"
        assert worker.is_alive(), "the stream should still be running when connections are refused"
        worker.join(timeout=GRACE_S + 5)

        assert "error" not in result, result.get("error")
        assert result["status"] == 200
        events = sse_events(result["body"])
        assert events[-1] == "[DONE]"
        chunks = [orjson.loads(e) for e in events[:-1]]
        assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == text
        stop_and_check_exit(proc, home)
        assert time.monotonic() - t_signal < GRACE_S


def test_requests_outliving_the_grace_period_are_cut_off(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    upstream_url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(content="too late", delay_s=8))
    home = tmp_path / "home"
    grace = 1.0
    with daemon_process(home, upstream_url, grace_s=grace) as (proc, url):
        result: dict[str, Any] = {}

        def call() -> None:
            try:
                result["response"] = httpx.post(f"{url}/v1/chat/completions", json={"messages": MESSAGES}, timeout=10)
            except httpx.TransportError as exc:
                result["error"] = exc

        worker = threading.Thread(target=call)
        worker.start()
        wait_for(lambda: len(upstream.requests) == 1, 5, "the request to reach the upstream")
        t_signal = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stop_and_check_exit(proc, home)
        took = time.monotonic() - t_signal
        worker.join(timeout=5)
    assert grace - 0.1 < took < grace + 1.5, f"shutdown took {took:.2f}s with a {grace}s grace period"
    # Cut off before its response started, the client is told why, in OpenAI's error shape.
    response = result.get("response")
    assert response is not None, result
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "shutting_down"
    assert response.headers["retry-after"]
