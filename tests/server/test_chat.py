"""The chat endpoint in-process: OpenAI wire format, streaming, tool calls, model forwarding."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from tests.conftest import app_client, make_settings, sse_events

MESSAGES = [{"role": "user", "content": "What is 2+2?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


async def test_non_streaming_completion_has_openai_shape(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content="4"))
    response = await client.post("/v1/chat/completions", json={"model": "x", "messages": MESSAGES})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["x-request-id"]
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int)
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "4"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert scripted.requests[-1]["messages"] == MESSAGES


async def test_streaming_wire_format_without_usage(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content="Hello streaming world", chunk_size=5))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "Hello streaming world"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in c for c in chunks), "usage must be withheld when the client did not ask"
    # The backend is always asked for usage (for metrics); the client's choice is applied on the way out.
    assert scripted.requests[-1]["stream_options"] == {"include_usage": True}


async def test_streaming_include_usage_sends_final_usage_chunk(
    client: httpx.AsyncClient, scripted: ScriptedBackend
) -> None:
    scripted.enqueue(
        ScriptedReply(content="four", usage={"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8})
    )
    response = await client.post(
        "/v1/chat/completions",
        json={"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
    )
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    last = orjson.loads(events[-2])
    assert last["choices"] == []
    assert last["usage"] == {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}


async def test_client_tools_pass_through_non_streaming(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    call = tool_call("get_weather", '{"city": "Paris"}', id="call_abc")
    scripted.enqueue(ScriptedReply(tool_calls=[call]))
    response = await client.post(
        "/v1/chat/completions", json={"messages": MESSAGES, "tools": TOOLS, "tool_choice": "auto"}
    )
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [call]
    sent = scripted.requests[-1]
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "auto"


async def test_client_tools_pass_through_streaming(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    calls = [
        tool_call("get_weather", '{"city": "Paris"}', id="call_1"),
        tool_call("get_weather", '{"city": "Rome"}', id="call_2"),
    ]
    scripted.enqueue(ScriptedReply(tool_calls=calls, chunk_size=4))
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "tools": TOOLS, "stream": True})
    chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
    assembled: dict[int, dict[str, str]] = {}
    for c in chunks:
        for piece in c["choices"][0]["delta"].get("tool_calls") or []:
            slot = assembled.setdefault(piece["index"], {"id": "", "name": "", "arguments": ""})
            slot["id"] += piece.get("id") or ""
            slot["name"] += (piece.get("function") or {}).get("name") or ""
            slot["arguments"] += (piece.get("function") or {}).get("arguments") or ""
    assert assembled == {
        0: {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        1: {"id": "call_2", "name": "get_weather", "arguments": '{"city": "Rome"}'},
    }
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_unknown_request_fields_are_forwarded(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    await client.post("/v1/chat/completions", json={"messages": MESSAGES, "top_k": 40, "temperature": 0.2})
    assert scripted.requests[-1]["top_k"] == 40
    assert scripted.requests[-1]["temperature"] == 0.2


async def test_configured_model_is_forwarded_and_listed(tmp_path, scripted: ScriptedBackend) -> None:  # type: ignore[no-untyped-def]
    async with app_client(make_settings(tmp_path, model="my-model"), scripted) as c:
        await c.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": MESSAGES})
        assert scripted.requests[-1]["model"] == "my-model"
        models = (await c.get("/v1/models")).json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["my-model"]


async def test_model_may_be_omitted(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    response = await client.post("/v1/chat/completions", json={"messages": MESSAGES})
    assert response.status_code == 200
    assert "model" not in scripted.requests[-1]


async def test_content_parts_are_accepted(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}]}]
    response = await client.post("/v1/chat/completions", json={"messages": messages})
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "hello there"


async def test_slow_streamed_agent_turn_sends_keepalive_comments(tmp_path: Path) -> None:
    # An answer-first agent turn whose draft takes 0.5 s: the client gets the role chunk, then SSE comments
    # while the turn works, then the answer; SSE parsers ignore the comments.
    scripted = ScriptedBackend()
    scripted.enqueue(ScriptedReply(content="Paris is the capital of France.", delay_s=0.5))
    settings = make_settings(tmp_path, router="always-agent", sse_keepalive_s=0.1)
    async with app_client(settings, scripted) as client:
        response = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "What is the capital of France?"}], "stream": True},
        )
    assert response.status_code == 200
    assert response.text.count(": keep-alive\n\n") >= 2
    chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Paris is the capital of France."
