"""HttpUpstreamBackend against the scripted fake OpenAI server (and hand-written replies) over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.http_upstream import HttpUpstreamBackend, normalize_base_url, upstream_message
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.llm.test_fast_transport import RawServer

MESSAGES = [{"role": "user", "content": "hi"}]
BODY = {"model": "m", "messages": MESSAGES}
STREAM_BODY = {**BODY, "stream": True}


@contextlib.asynccontextmanager
async def upstream(url: str, **kwargs: Any) -> AsyncIterator[HttpUpstreamBackend]:
    backend = HttpUpstreamBackend(url, **kwargs)
    await backend.start()
    try:
        yield backend
    finally:
        await backend.aclose()


async def drain(backend: HttpUpstreamBackend, body: dict[str, Any]) -> list[dict[str, Any]]:
    return [chunk async for chunk in backend.stream(body)]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("  https://api.example.com/openai/v1  ", "https://api.example.com/openai/v1"),
        ("http://localhost:11434/v1//", "http://localhost:11434/v1"),
    ],
)
def test_normalize_base_url(given: str, expected: str) -> None:
    assert normalize_base_url(given) == expected


@pytest.mark.parametrize("bad", ["ftp://host/v1", "localhost:8080", "127.0.0.1:8080", "http://", "", "file:///x"])
def test_normalize_base_url_rejects_what_is_not_http(bad: str) -> None:
    with pytest.raises(ValueError, match="upstream url"):
        normalize_base_url(bad)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "context too long", "type": "invalid_request_error"}}', "context too long"),
        (b'{"error": "model not loaded"}', "model not loaded"),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b'{"detail": [{"loc": ["body"], "msg": "field required"}, {"msg": "bad"}]}', "field required; bad"),
        (b'{"error": null, "message": "slot busy"}', "slot busy"),
        (b'{"message": "slot unavailable"}', "slot unavailable"),
        (b'{"error": {"code": 7}}', '{"code":7}'),
        (b"Bad Gateway\n", "Bad Gateway"),
        (b"<html>\xff broken utf8</html>", "<html>\ufffd broken utf8</html>"),
        (b"", "upstream returned HTTP 500"),
        (b"   ", "upstream returned HTTP 500"),
        (b"[1, 2]", "upstream returned HTTP 500"),
        (b"{}", "upstream returned HTTP 500"),
        (b"null", "upstream returned HTTP 500"),
    ],
)
def test_upstream_message(body: bytes, expected: str) -> None:
    assert upstream_message(body, 500) == expected


def test_upstream_message_is_bounded() -> None:
    assert len(upstream_message(b"x" * 10_000, 500)) == 500
    assert len(upstream_message(b'{"error": "' + b"y" * 10_000 + b'"}', 500)) == 500


async def test_complete_and_stream_round_trip(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(content="hello"), ScriptedReply(content="streamed", chunk_size=3))
    async with upstream(url) as backend:
        reply = await backend.complete(BODY)
        chunks = await drain(backend, STREAM_BODY)
        health = await backend.health()
        models = await backend.list_models()
    assert reply["choices"][0]["message"]["content"] == "hello"
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "streamed"
    assert fake.requests == [BODY, STREAM_BODY]
    assert health.reachable and health.model_loaded
    assert models == ["upstream-model"]


async def test_upstream_api_key_is_sent() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}')
        await writer.drain()
        await server.read_request(reader)

    async with RawServer(handler) as server, upstream(server.url, api_key="sekrit") as backend:
        await backend.complete(BODY)
    head = server.requests[0][0].lower()
    assert head.startswith(b"post /v1/chat/completions http/1.1")
    assert b"authorization: bearer sekrit\r\n" in head


async def test_retries_503_then_succeeds(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(error=(503, "warming up")), ScriptedReply(content="ok"))
    async with upstream(url) as backend:
        reply = await backend.complete(BODY)
    assert reply["choices"][0]["message"]["content"] == "ok"
    assert len(fake.requests) == 2


async def test_stream_retries_503_then_streams(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(error=(504, "gateway timeout")), ScriptedReply(content="ok"))
    async with upstream(url) as backend:
        chunks = await drain(backend, STREAM_BODY)
    assert chunks[1]["choices"][0]["delta"]["content"] == "ok"
    assert len(fake.requests) == 2


@pytest.mark.parametrize("retries", [0, 1, 3])
@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_502_on_every_attempt_makes_retries_plus_one_requests(
    fake_upstream: tuple[str, ScriptedBackend], retries: int, stream: bool
) -> None:
    url, fake = fake_upstream
    fake.enqueue(*[ScriptedReply(error=(502, "bad gateway"))] * 10)
    async with upstream(url, retries=retries) as backend:
        with pytest.raises(BackendError) as info:
            await (drain(backend, STREAM_BODY) if stream else backend.complete(BODY))
    assert len(fake.requests) == retries + 1
    assert info.value.status == 502
    assert "bad gateway" in info.value.message


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_500_is_not_retried_and_becomes_502(fake_upstream: tuple[str, ScriptedBackend], stream: bool) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(error=(500, "CUDA out of memory")))
    async with upstream(url) as backend:
        with pytest.raises(BackendError) as info:
            await (drain(backend, STREAM_BODY) if stream else backend.complete(BODY))
    assert (info.value.status, info.value.code) == (502, "upstream_500")
    assert "CUDA out of memory" in info.value.message
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 413, 422, 429])
async def test_client_errors_pass_through(fake_upstream: tuple[str, ScriptedBackend], status: int) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(error=(status, "context length exceeded")))
    async with upstream(url) as backend:
        with pytest.raises(BackendError) as info:
            await backend.complete(BODY)
    assert (info.value.status, info.value.message) == (status, "context length exceeded")
    assert info.value.type == "invalid_request_error"
    assert len(fake.requests) == 1


async def test_connection_refused_is_a_fast_502() -> None:
    async with upstream(f"http://127.0.0.1:{free_port()}") as backend:
        loop = asyncio.get_running_loop()
        for call in (lambda: backend.complete(BODY), lambda: drain(backend, STREAM_BODY)):
            t0 = loop.time()
            with pytest.raises(BackendError) as info:
                await call()
            assert loop.time() - t0 < 1.0  # default retries and backoff stay well under a second
            assert (info.value.status, info.value.code) == (502, "upstream_unreachable")
        health = await backend.health()
    assert not health.reachable


async def test_connect_errors_are_retried_until_the_upstream_comes_up() -> None:
    port = free_port()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    async def start_late() -> asyncio.Server:
        await asyncio.sleep(0.1)  # the first attempt (immediate) is refused; a backoff later it connects
        return await asyncio.start_server(handle, "127.0.0.1", port)

    starter = asyncio.ensure_future(start_late())
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    async with upstream(f"http://127.0.0.1:{port}", retries=5) as backend:
        assert await backend.complete(BODY) == {}
    assert loop.time() - t0 >= 0.1
    server = await starter
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_read_timeout_is_a_fast_504_and_not_retried(
    fake_upstream: tuple[str, ScriptedBackend], stream: bool
) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(content="late", delay_s=5))
    async with upstream(url, read_timeout=0.3) as backend:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(BackendError) as info:
            await (drain(backend, STREAM_BODY) if stream else backend.complete(BODY))
        assert loop.time() - t0 < 1.0
    assert (info.value.status, info.value.code) == (504, "timeout")
    assert len(fake.requests) == 1


async def test_read_timeout_between_chunks_ends_the_stream(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(content="abcdef", chunk_size=1, chunk_delay_s=1.0))
    got: list[dict[str, Any]] = []
    async with upstream(url, read_timeout=0.3) as backend:
        with pytest.raises(BackendError) as info:
            async for chunk in backend.stream(STREAM_BODY):
                got.append(chunk)
    assert info.value.status == 504
    assert len(got) == 1
    assert len(fake.requests) == 1


async def test_mid_stream_failure_is_not_retried(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(content="abcdefgh", chunk_size=1, fail_after_chunks=3), ScriptedReply(content="no"))
    got: list[dict[str, Any]] = []
    async with upstream(url) as backend:
        with pytest.raises(BackendError) as info:
            async for chunk in backend.stream(STREAM_BODY):
                got.append(chunk)
    assert len(got) == 3
    assert "stream broken on purpose" in info.value.message
    assert len(fake.requests) == 1


def raw_reply(reply: bytes) -> Any:
    """A handler answering every request with `reply`, then closing the connection."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(reply)
        await writer.drain()

    return handler


def sse(*events: bytes) -> bytes:
    payload = b"".join(events)
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (
        len(payload), payload,
    )


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!", "non-JSON body"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n[1, 2]", "not an object"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"truncated", "upstream"),
        (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 19\r\n\r\n{\"error\": \"no key\"}", "no key"),
        (b"garbage\r\n\r\n", "upstream"),
    ],
    ids=["non-json", "not-object", "truncated", "401", "malformed-http"],
)
async def test_bad_upstream_replies_become_502(reply: bytes, message: str) -> None:
    async with RawServer(raw_reply(reply)) as server, upstream(server.url, retries=0) as backend:
        with pytest.raises(BackendError) as info:
            await backend.complete(BODY)
    assert info.value.status == 502
    assert message in info.value.message


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ((b"data: {not json}\n\n",), "malformed stream event"),
        ((b'data: {"error": {"message": "oom"}}\n\n',), "upstream failed mid-stream: oom"),
        ((b"data: 5\n\n",), "malformed stream event"),
        ((b'{"choices": [{"message": {"content": "not streamed"}}]}',), "no stream events"),
        ((), "no stream events"),
    ],
    ids=["not-json", "error-event", "not-object", "json-instead-of-sse", "empty"],
)
async def test_bad_stream_events_become_backend_errors(events: tuple[bytes, ...], message: str) -> None:
    async with RawServer(raw_reply(sse(b": comment\n\nevent: x\n", *events))) as server, upstream(server.url) as b:
        with pytest.raises(BackendError) as info:
            await drain(b, STREAM_BODY)
    assert info.value.status == 502
    assert message in info.value.message


async def test_stream_ignores_comments_and_stops_at_done() -> None:
    chunk = b'{"choices": [{"index": 0, "delta": {"content": "x"}}]}'
    reply = sse(b": keep-alive\n\n", b"data:" + chunk + b"\n\n", b"data: [DONE]\n\n", b"data: " + chunk + b"\n\n")
    async with RawServer(raw_reply(reply)) as server, upstream(server.url) as backend:
        chunks = await drain(backend, STREAM_BODY)
    assert chunks == [{"choices": [{"index": 0, "delta": {"content": "x"}}]}]


async def test_stream_dropped_mid_body_is_a_502() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        writer.write(b'1f\r\ndata: {"choices": [], "x": 1}\n\n\r\n')
        await writer.drain()

    got: list[dict[str, Any]] = []
    async with RawServer(handler) as server, upstream(server.url) as backend:
        with pytest.raises(BackendError) as info:
            async for chunk in backend.stream(STREAM_BODY):
                got.append(chunk)
    assert got == [{"choices": [], "x": 1}]
    assert info.value.status == 502 and "stream broke" in info.value.message


async def test_cancelling_a_stream_closes_the_upstream_request(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, fake = fake_upstream
    fake.enqueue(ScriptedReply(content="x" * 100, chunk_size=1, chunk_delay_s=0.02))
    async with upstream(url) as backend:
        stream = backend.stream(STREAM_BODY)
        await anext(stream)
        await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        deadline = asyncio.get_running_loop().time() + 2
        while fake.cancelled == 0 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert fake.cancelled == 1
        assert (await backend.complete(BODY))["choices"][0]["message"]["content"] == "hi"  # the pool still works


@pytest.mark.parametrize(
    "body",
    [b'{"data": 5}', b"[1]", b"not json", b'{"data": [{"id": 1}, "x", {"no": "id"}]}'],
    ids=["data-not-list", "not-object", "not-json", "odd-entries"],
)
async def test_list_models_tolerates_odd_answers(body: bytes) -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    async with RawServer(raw_reply(reply)) as server, upstream(server.url) as backend:
        models = await backend.list_models()
    assert models == (["1"] if b"id" in body else [])


async def test_body_read_timeouts_give_pooled_connections_back() -> None:
    """A non-streaming reply whose body stalls after the headers: 504, and the slot is not leaked."""
    stalls = 3

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        while await server.read_request(reader) is not None:
            if len(server.requests) <= stalls:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial')
                await writer.drain()
                await asyncio.sleep(30)
            body = b'{"id": "x", "object": "chat.completion", "choices": []}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()

    async with RawServer(handler) as server, upstream(server.url, read_timeout=0.2, max_connections=2) as backend:
        for _ in range(stalls):
            with pytest.raises(BackendError) as info:
                await backend.complete(BODY)
            assert info.value.status == 504
        # With both pool slots leaked this would wait for a slot and time out instead.
        assert (await backend.complete(BODY))["object"] == "chat.completion"
