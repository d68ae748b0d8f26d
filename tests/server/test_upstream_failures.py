"""The daemon in front of a failing upstream: the scripted fake OpenAI server over real HTTP (or no server)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.fake_server import FakeOpenAIServer, free_port, serve_in_thread
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, make_settings, sse_events
from tests.llm.test_fast_transport import RawServer
from tests.llm.test_http_upstream import raw_reply
from tests.server.test_errors import assert_openai_error, assert_serves

MESSAGES = [{"role": "user", "content": "hi"}]
Upstream = tuple[str, ScriptedBackend]


@contextlib.asynccontextmanager
async def daemon(tmp_path: Path, upstream_url: str, **overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The daemon in-process with the http upstream backend its settings select."""
    settings = make_settings(tmp_path, upstream_url=upstream_url, **overrides)
    async with app_client(settings, make_backend(settings.backend)) as client:
        yield client


async def chat(client: httpx.AsyncClient, *, stream: bool = False, **extra: Any) -> httpx.Response:
    return await client.post("/v1/chat/completions", json={"messages": MESSAGES, "stream": stream, **extra})


def streamed_text(response: httpx.Response) -> str:
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in map(orjson.loads, events[:-1]) if c["choices"]
    )


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_upstream_down_is_a_fast_502_and_recovers(tmp_path: Path, stream: bool) -> None:
    port = free_port()
    async with daemon(tmp_path, f"http://127.0.0.1:{port}") as client:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        response = await chat(client, stream=stream)
        assert loop.time() - t0 < 1.0, "connection refused must fail fast, default retries included"
        error = assert_openai_error(response, 502, type="upstream_unavailable")
        assert error["code"] == "upstream_unreachable"
        assert f"127.0.0.1:{port}" in error["message"]
        health = (await client.get("/health")).json()
        assert health["status"] == "degraded" and "backend" in health["degraded"]
        detail = (await client.get("/v1/ghost/health")).json()
        assert not detail["backend"]["reachable"]

        upstream = ScriptedBackend(model="late-model")
        with serve_in_thread(FakeOpenAIServer(upstream), port=port):
            response = await chat(client, stream=stream)
            assert response.status_code == 200
            assert (await client.get("/health")).json()["status"] == "ok"
        assert len(upstream.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_upstream_too_slow_is_a_fast_504(tmp_path: Path, fake_upstream: Upstream, stream: bool) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(content="too late", delay_s=3))
    async with daemon(tmp_path, url, upstream_timeout=0.3) as client:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        response = await chat(client, stream=stream)
        assert loop.time() - t0 < 1.0
        error = assert_openai_error(response, 504, type="upstream_timeout")
        assert error["code"] == "timeout"
        await assert_serves(client)
    assert len(upstream.requests) == 2, "a read timeout is not retried: the upstream may be generating"


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_upstream_500_is_502_with_its_message(tmp_path: Path, fake_upstream: Upstream, stream: bool) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(error=(500, "llama_decode failed: KV cache full")))
    async with daemon(tmp_path, url) as client:
        response = await chat(client, stream=stream)
        error = assert_openai_error(response, 502, type="upstream_error")
        assert "llama_decode failed: KV cache full" in error["message"]
        assert len(upstream.requests) == 1, "a 500 is not retried"
        await assert_serves(client)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_upstream_400_is_passed_through(tmp_path: Path, fake_upstream: Upstream, stream: bool) -> None:
    url, upstream = fake_upstream
    message = "the request exceeds the available context size (8192 tokens)"
    upstream.enqueue(ScriptedReply(error=(400, message)))
    async with daemon(tmp_path, url) as client:
        response = await chat(client, stream=stream)
        error = assert_openai_error(response, 400, type="invalid_request_error")
        assert error["message"] == message
        await assert_serves(client)


async def test_upstream_429_keeps_its_retry_after(tmp_path: Path, fake_upstream: Upstream) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(error=(429, "slow down"), retry_after=7))
    async with daemon(tmp_path, url) as client:
        response = await chat(client)
        assert_openai_error(response, 429, type="invalid_request_error")
        assert response.headers["retry-after"] == "7"
        await assert_serves(client)


async def test_503_then_success_is_retried_to_200(tmp_path: Path, fake_upstream: Upstream) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(error=(503, "loading model")), ScriptedReply(content="ready now"))
    async with daemon(tmp_path, url) as client:
        response = await chat(client)
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == "ready now"
    assert len(upstream.requests) == 2


async def test_stream_503_then_stream_is_retried_to_200(tmp_path: Path, fake_upstream: Upstream) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(error=(503, "loading model")), ScriptedReply(content="streamed after all"))
    async with daemon(tmp_path, url) as client:
        response = await chat(client, stream=True)
        assert response.status_code == 200
        assert streamed_text(response) == "streamed after all"
    assert len(upstream.requests) == 2


async def test_stream_broken_midway_is_not_retried(tmp_path: Path, fake_upstream: Upstream) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(
        ScriptedReply(content="abcdefgh", chunk_size=1, fail_after_chunks=4), ScriptedReply(content="replayed!")
    )
    async with daemon(tmp_path, url) as client:
        response = await chat(client, stream=True)
        assert response.status_code == 200
        events = sse_events(response.text)
        chunks = [orjson.loads(e) for e in events[:-1]]
        assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["", "a", "b", "c"]
        error = orjson.loads(events[-1])["error"]
        assert "stream broken on purpose" in error["message"]
        assert "[DONE]" not in events
        assert len(upstream.requests) == 1
        assert upstream.pending == 1
        assert (await chat(client)).json()["choices"][0]["message"]["content"] == "replayed!"


@pytest.mark.parametrize("retries", [0, 2])
@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_502_every_attempt_means_retries_plus_one_requests(
    tmp_path: Path, fake_upstream: Upstream, retries: int, stream: bool
) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(*[ScriptedReply(error=(502, "bad gateway upstream"))] * (retries + 3))
    async with daemon(tmp_path, url, upstream_retries=retries) as client:
        response = await chat(client, stream=stream)
        error = assert_openai_error(response, 502, type="upstream_error")
        assert "bad gateway upstream" in error["message"]
        assert len(upstream.requests) == retries + 1
        upstream.reset()
        await assert_serves(client)


async def test_models_come_from_the_upstream(tmp_path: Path, fake_upstream: Upstream) -> None:
    url, _ = fake_upstream
    async with daemon(tmp_path, url) as client:
        models = (await client.get("/v1/models")).json()
    assert [m["id"] for m in models["data"]] == ["upstream-model"]


async def test_upstream_ignoring_stream_true_is_a_502_not_an_empty_stream(tmp_path: Path) -> None:
    completion = orjson.dumps({"object": "chat.completion", "choices": [{"message": {"content": "whole"}}]})
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(completion), completion,
    )
    async with RawServer(raw_reply(reply)) as server, daemon(tmp_path, server.url) as client:
        response = await chat(client, stream=True)
        error = assert_openai_error(response, 502)
        assert "no stream events" in error["message"] and "application/json" in error["message"]
