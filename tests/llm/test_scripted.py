"""The scripted backend and the fake OpenAI server built on it (over real HTTP on a loopback port)."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from tests.conftest import sse_events, wait_until

MESSAGES = [{"role": "user", "content": "ping"}]


async def collect(backend: ScriptedBackend, body: dict[str, object]) -> list[dict[str, object]]:
    return [chunk async for chunk in backend.stream(body)]


def test_from_dict_rejects_unknown_fields_and_coerces_error() -> None:
    reply = ScriptedReply.from_dict({"content": "x", "error": ["503", "busy"], "retry_after": 3})
    assert reply.error == (503, "busy")
    assert reply.retry_after == 3
    with pytest.raises(ValueError, match="unknown ScriptedReply fields"):
        ScriptedReply.from_dict({"content": "x", "contnet": "typo"})


async def test_records_requests_and_falls_back_to_echo() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="scripted")])
    first = await backend.complete({"messages": MESSAGES})
    second = await backend.complete({"messages": MESSAGES})
    assert first["choices"][0]["message"]["content"] == "scripted"
    assert second["choices"][0]["message"]["content"] == "ping"
    assert backend.requests == [{"messages": MESSAGES}] * 2
    assert backend.pending == 0


async def test_default_error_fails_unexpected_calls() -> None:
    backend = ScriptedBackend(default="error")
    with pytest.raises(BackendError) as info:
        await backend.complete({"messages": MESSAGES})
    assert info.value.status == 500


async def test_error_carries_status_and_retry_after() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(error=(503, "busy"), retry_after=2.5)] * 2)
    with pytest.raises(BackendError) as info:
        await backend.complete({"messages": MESSAGES})
    assert (info.value.status, info.value.message, info.value.retry_after) == (503, "busy", 2.5)
    with pytest.raises(BackendError) as info:
        await collect(backend, {"messages": MESSAGES, "stream": True})
    assert info.value.status == 503


async def test_stream_chunks_content_and_tool_calls() -> None:
    call = tool_call("f", '{"a": 1}', id="c1")
    backend = ScriptedBackend(replies=[ScriptedReply(content="abcdef", tool_calls=[call], chunk_size=4)])
    chunks = await collect(backend, {"messages": MESSAGES, "stream_options": {"include_usage": True}})
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]  # type: ignore[index]
    assert [d.get("content") for d in deltas[:3]] == ["", "abcd", "ef"]
    args = "".join(d["tool_calls"][0]["function"]["arguments"] for d in deltas if "tool_calls" in d)
    assert args == '{"a": 1}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"  # type: ignore[index]
    assert chunks[-1]["choices"] == [] and "usage" in chunks[-1]


async def test_fail_after_chunks_breaks_the_stream() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="abcdefgh", chunk_size=1, fail_after_chunks=3)])
    got: list[object] = []
    with pytest.raises(BackendError):
        async for chunk in backend.stream({"messages": MESSAGES}):
            got.append(chunk)
    assert len(got) == 3
    assert backend.cancelled == 0  # a failure is not a cancellation


async def test_abandoned_stream_counts_as_cancelled() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="x" * 50, chunk_size=1)])
    stream = backend.stream({"messages": MESSAGES})
    await anext(stream)
    await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]
    assert backend.cancelled == 1


async def test_fully_read_stream_is_not_cancelled() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="abc")])
    await collect(backend, {"messages": MESSAGES})
    assert backend.cancelled == 0


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_cancelling_during_the_delay_counts(stream: bool) -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="late", delay_s=10)])
    body = {"messages": MESSAGES}
    task = asyncio.ensure_future(collect(backend, body) if stream else backend.complete(body))
    await wait_until(lambda: backend.requests)
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert backend.cancelled == 1


async def test_fake_server_control_endpoints(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, backend = fake_upstream
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        script = [{"content": "one"}, {"error": [503, "busy"], "retry_after": 4}]
        assert (await client.post("/_script", json=script)).json() == {"pending": 2}
        ok = await client.post("/v1/chat/completions", json={"messages": MESSAGES})
        assert ok.json()["choices"][0]["message"]["content"] == "one"
        busy = await client.post("/v1/chat/completions", json={"messages": MESSAGES})
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "4"
        assert busy.json()["error"]["message"] == "busy"
        recorded = (await client.get("/_requests")).json()
        assert recorded == [{"messages": MESSAGES}] * 2
        assert (await client.post("/_reset")).json() == {"pending": 0}
        assert (await client.get("/_requests")).json() == []
        bad = await client.post("/_script", json=[{"nope": 1}])
        assert bad.status_code == 400 and "unknown ScriptedReply fields" in bad.json()["error"]["message"]
        missing = await client.get("/nowhere")
        assert missing.status_code == 404
        invalid = await client.post("/v1/chat/completions", content=b"{not json")
        assert invalid.status_code == 400
        not_object = await client.post("/v1/chat/completions", json=[1, 2])
        assert not_object.status_code == 400
        models = (await client.get("/v1/models")).json()
        assert [m["id"] for m in models["data"]] == ["upstream-model"]
    assert backend.pending == 0


async def test_fake_server_streams_and_reports_mid_stream_failure(fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, backend = fake_upstream
    backend.enqueue(ScriptedReply(content="abcdef", chunk_size=2), ScriptedReply(content="abcdef", chunk_size=1,
                                                                                  fail_after_chunks=2))
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        body = {"messages": MESSAGES, "stream": True}
        good = sse_events((await client.post("/v1/chat/completions", json=body)).text)
        assert good[-1] == "[DONE]"
        assert "".join(orjson.loads(e)["choices"][0]["delta"].get("content", "") for e in good[:-1]) == "abcdef"
        broken = sse_events((await client.post("/v1/chat/completions", json=body)).text)
        assert len(broken) == 3
        assert "error" in orjson.loads(broken[-1])


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_fake_server_cancels_generation_when_its_client_leaves(
    fake_upstream: tuple[str, ScriptedBackend], stream: bool
) -> None:
    url, backend = fake_upstream
    reply = ScriptedReply(content="x" * 200, chunk_size=1, chunk_delay_s=0.02) if stream else ScriptedReply(
        content="late", delay_s=10
    )
    backend.enqueue(reply)
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        if stream:
            async with client.stream("POST", "/v1/chat/completions", json={"messages": MESSAGES, "stream": True}) as r:
                lines = r.aiter_lines()
                await anext(lines)
        else:
            task = asyncio.ensure_future(client.post("/v1/chat/completions", json={"messages": MESSAGES}))
            await wait_until(lambda: backend.requests)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    await wait_until(lambda: backend.cancelled == 1, timeout=2)
