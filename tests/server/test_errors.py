"""Every request-side failure answers in OpenAI's error shape, never with a traceback, and the daemon lives on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ghost_agent.llm.base import JSON
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, daemon_on_port, make_settings, sse_events

MESSAGES = [{"role": "user", "content": "hi"}]
LIMIT = 2048


def assert_openai_error(
    response: httpx.Response, status: int, *, type: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """The response is `status` with exactly the OpenAI error envelope (and no traceback); returns `error`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    if type is not None:
        assert error["type"] == type
    assert error["param"] == param
    assert response.headers.get("x-request-id")
    return dict(error)


async def assert_serves(client: httpx.AsyncClient, text: str = "still here") -> None:
    """The daemon answers a normal request after the failure."""
    response = await client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": text}]})
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == text


@pytest.fixture
async def small_client(tmp_path: Path, scripted: ScriptedBackend) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(make_settings(tmp_path, max_request_bytes=LIMIT), scripted) as client:
        yield client


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b'{"messages": [', b"", b"\xff\xfe", b"[" * 100_000],
    ids=["garbage", "truncated", "empty", "not-utf8", "deep-nesting"],
)
async def test_invalid_json_is_400(client: httpx.AsyncClient, scripted: ScriptedBackend, raw: bytes) -> None:
    response = await client.post(
        "/v1/chat/completions", content=raw, headers={"content-type": "application/json"}
    )
    error = assert_openai_error(response, 400, type="invalid_request_error")
    if raw.startswith(b"{"):
        assert error["message"].startswith("invalid JSON body")
    assert scripted.requests == []
    await assert_serves(client)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages.0.role"),
        ({"messages": [{"content": "hi"}]}, "messages.0.role"),
        ({"messages": MESSAGES, "temperature": 3}, "temperature"),
        ({"messages": MESSAGES, "temperature": "hot"}, "temperature"),
        ({"messages": MESSAGES, "top_p": -0.1}, "top_p"),
        ({"messages": MESSAGES, "n": 0}, "n"),
        ({"messages": MESSAGES, "max_tokens": 0}, "max_tokens"),
        ({"messages": MESSAGES, "stream": "maybe"}, "stream"),
        ({"messages": []}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"model": "x"}, "messages"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages.0.content"),
        ({"messages": [{"role": "user", "content": [{"type": "video"}]}]}, "messages.0.content.0"),
        ({"messages": MESSAGES, "stop": 5}, "stop"),
        ({"messages": MESSAGES, "tools": [{"type": "function", "function": {"name": ""}}]}, "tools.0.function.name"),
        ({"messages": MESSAGES, "stream_options": {"include_usage": "maybe"}}, "stream_options.include_usage"),
    ],
)
async def test_schema_violation_is_400_naming_the_field(
    client: httpx.AsyncClient, scripted: ScriptedBackend, body: JSON, param: str
) -> None:
    response = await client.post("/v1/chat/completions", json=body)
    assert_openai_error(response, 400, type="invalid_request_error", param=param)
    assert scripted.requests == []


async def test_body_that_is_not_an_object_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/chat/completions", json=[MESSAGES])
    assert_openai_error(response, 400)
    await assert_serves(client)


async def test_body_over_the_limit_with_content_length_is_413(
    small_client: httpx.AsyncClient, scripted: ScriptedBackend
) -> None:
    big = {"messages": [{"role": "user", "content": "x" * (LIMIT + 1)}]}
    response = await small_client.post("/v1/chat/completions", json=big)
    error = assert_openai_error(response, 413, type="request_too_large")
    assert error["code"] == "request_too_large"
    assert str(LIMIT) in error["message"]
    assert scripted.requests == []
    await assert_serves(small_client)


async def test_body_just_under_the_limit_is_accepted(small_client: httpx.AsyncClient) -> None:
    text = "y" * 1900
    payload = orjson.dumps({"messages": [{"role": "user", "content": text}]})
    assert len(payload) <= LIMIT
    response = await small_client.post(
        "/v1/chat/completions", content=payload, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200


async def raw_exchange(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes to a daemon port; return (status, headers, body) of the first response."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await asyncio.wait_for(reader.readexactly(int(headers.get("content-length", "0"))), 5)
        return status, headers, body
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError:
            pass  # the daemon may reset a connection whose body it refused to read


def chunked_request(payload: bytes, piece: int = 512) -> bytes:
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(payload[i : i + piece]), payload[i : i + piece]) for i in range(0, len(payload), piece)
    )
    return head + chunks + b"0\r\n\r\n"


async def test_chunked_body_over_the_limit_is_413_on_a_real_port(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path, max_request_bytes=LIMIT)
    with daemon_on_port(settings, scripted) as url:
        small = orjson.dumps({"messages": [{"role": "user", "content": "chunked ok"}]})
        status, _, body = await raw_exchange(url, chunked_request(small, piece=16))
        assert status == 200, body
        assert orjson.loads(body)["choices"][0]["message"]["content"] == "chunked ok"

        big = orjson.dumps({"messages": [{"role": "user", "content": "x" * (4 * LIMIT)}]})
        status, headers, body = await raw_exchange(url, chunked_request(big))
        assert status == 413
        assert headers["content-type"].startswith("application/json")
        assert orjson.loads(body)["error"]["code"] == "request_too_large"
        assert len(scripted.requests) == 1

        # httpx streams a generator body without Content-Length (chunked), too.
        async def gen() -> AsyncIterator[bytes]:
            for i in range(0, len(big), 256):
                yield big[i : i + 256]

        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            response = await client.post("/v1/chat/completions", content=gen())
            assert_openai_error(response, 413, type="request_too_large")
            await assert_serves(client)
            # With Content-Length the daemon refuses before reading; a large body still gets the 413.
            huge = b"x" * (4 * 1024 * 1024)
            response = await client.post("/v1/chat/completions", content=huge)
            assert_openai_error(response, 413, type="request_too_large")
            await assert_serves(client)
        assert len(scripted.requests) == 3


async def test_unknown_route_is_404_in_openai_shape(client: httpx.AsyncClient) -> None:
    for path in ("/v1/nope", "/nope", "/v1/chat/completion"):
        response = await client.get(path)
        assert_openai_error(response, 404, type="not_found_error")
    await assert_serves(client)


async def test_wrong_method_is_405_in_openai_shape(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/chat/completions")
    assert_openai_error(response, 405, type="invalid_request_error")
    assert response.headers["allow"] == "POST"
    response = await client.post("/v1/models", json={})
    assert_openai_error(response, 405)
    await assert_serves(client)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_backend_busy_is_503_with_retry_after(
    client: httpx.AsyncClient, scripted: ScriptedBackend, stream: bool
) -> None:
    scripted.enqueue(ScriptedReply(error=(503, "all model slots are busy"), retry_after=2.4))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "stream": stream})
    error = assert_openai_error(response, 503)
    assert error["message"] == "all model slots are busy"
    assert response.headers["retry-after"] == "2"
    await assert_serves(client)


async def test_sub_second_retry_after_rounds_up_to_one(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(error=(503, "busy"), retry_after=0.2))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES})
    assert response.headers["retry-after"] == "1"


@pytest.mark.parametrize("status", [400, 429, 502, 504])
async def test_backend_error_status_is_kept(client: httpx.AsyncClient, scripted: ScriptedBackend, status: int) -> None:
    scripted.enqueue(ScriptedReply(error=(status, f"failed with {status}")))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES})
    error = assert_openai_error(response, status)
    assert error["message"] == f"failed with {status}"
    assert "retry-after" not in response.headers
    await assert_serves(client)


async def test_mid_stream_failure_is_reported_in_band(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content="abcdefgh", chunk_size=1, fail_after_chunks=3))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "stream": True})
    assert response.status_code == 200
    events = sse_events(response.text)
    assert "[DONE]" not in events
    assert [orjson.loads(e)["object"] for e in events[:3]] == ["chat.completion.chunk"] * 3
    last = orjson.loads(events[3])
    assert set(last) == {"error"} and "broken on purpose" in last["error"]["message"]
    assert len(events) == 4
    await assert_serves(client)


class ExplodingBackend(ScriptedBackend):
    """A backend with a bug: it raises something that is not a BackendError."""

    async def complete(self, body: JSON) -> JSON:
        self.requests.append(body)
        if body["messages"][-1]["content"] == "explode":
            raise RuntimeError("secret internal detail")
        return await super().complete(body)

    async def stream(self, body: JSON) -> AsyncIterator[JSON]:
        async for chunk in super().stream(body):
            yield chunk
            if body["messages"][-1]["content"] == "explode":
                raise RuntimeError("secret internal detail")


async def test_unexpected_exception_is_a_500_without_details(tmp_path: Path) -> None:
    with daemon_on_port(make_settings(tmp_path), ExplodingBackend()) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            response = await client.post(
                "/v1/chat/completions", json={"messages": [{"role": "user", "content": "explode"}]}
            )
            error = assert_openai_error(response, 500, type="server_error")
            assert "secret" not in response.text
            assert error["code"] == "internal_error"
            await assert_serves(client)


async def test_unexpected_exception_mid_stream_ends_the_stream_in_band(tmp_path: Path) -> None:
    with daemon_on_port(make_settings(tmp_path), ExplodingBackend()) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            body = {"messages": [{"role": "user", "content": "explode"}], "stream": True}
            response = await client.post("/v1/chat/completions", json=body)
            assert response.status_code == 200
            events = sse_events(response.text)
            assert orjson.loads(events[0])["object"] == "chat.completion.chunk"
            error = orjson.loads(events[-1])["error"]
            assert error["type"] == "server_error"
            assert "secret" not in response.text
            await assert_serves(client)
