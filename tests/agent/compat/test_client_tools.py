"""Native `tool_calls` for clients that send `tools`, from whatever text the model wrote its call as."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from openai import OpenAI

from ghost_agent.agent.compat.tool_call_parse import parse_tool_calls
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from tests.conftest import daemon_on_port, make_settings, sse_events

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
    },
}
TOOLS = [WEATHER, TIME]
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]


def args(call: dict) -> dict:
    return json.loads(call["function"]["arguments"])


# -- parsing ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}',
        '{"tool": "get_weather", "args": {"city": "Paris"}}',
        "{'name': 'get_weather', 'arguments': {'city': 'Paris'}}",
        'get_weather(city="Paris")',
        '```python\nget_weather("Paris")\n```',
        '<function=get_weather>{"city": "Paris"}</function>',
        '{"name": "get_weather", "arguments": {"city": "Paris"}',  # missing closing brace
        '{{"name": "get_weather", "arguments": {"city": "Paris"}}}',  # braces doubled as in a template
    ],
)
def test_parses_the_shapes_small_models_write(content: str) -> None:
    parsed = parse_tool_calls(content, TOOLS)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_weather", {"city": "Paris"})]
    assert not parsed.errors
    assert parsed.text == ""


def test_lenient_parse_never_rewrites_inside_strings() -> None:
    parsed = parse_tool_calls("{'name': 'get_weather', 'arguments': {'city': 'true north', 'unit': null}}", TOOLS)
    assert parsed.calls[0].arguments == {"city": "true north", "unit": None}


def test_prose_around_a_call_is_kept_as_text() -> None:
    content = 'Let me check.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'
    parsed = parse_tool_calls(content, TOOLS)
    assert parsed.calls[0].arguments == {"city": "Oslo"}
    assert parsed.text == "Let me check."
    inner = 'Saving.\n```json\n{"name": "get_weather", "arguments": {"city": "a ```b``` c"}}\n```\nDone.'
    parsed = parse_tool_calls(inner, TOOLS)  # backticks mid-line do not close the fence
    assert parsed.calls[0].arguments == {"city": "a ```b``` c"} and parsed.text == "Saving.\n\nDone."


def test_parallel_calls_in_a_list_and_in_several_blocks() -> None:
    listed = (
        '[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]'
    )
    assert [c.name for c in parse_tool_calls(listed, TOOLS).calls] == ["get_weather", "get_time"]
    tagged = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n'
        '<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>'
    )
    assert [c.name for c in parse_tool_calls(tagged, TOOLS).calls] == ["get_weather", "get_time"]


def test_not_a_call_stays_content() -> None:
    # A JSON answer whose keys look like a call but names no offered tool; ordinary code in a fence; prose.
    for content in (
        '{"name": "Ada Lovelace", "arguments": ["a", "b"]}',
        "```python\ndef add(a, b):\n    return a + b\n```",
        "It is sunny in Paris today.",
    ):
        parsed = parse_tool_calls(content, TOOLS)
        assert parsed.calls == [] and parsed.errors == []
        assert parsed.text == content.strip()


def test_schema_violations_are_reported() -> None:
    parsed = parse_tool_calls('{"name": "get_weather", "arguments": {"city": 3, "unit": "k"}}', TOOLS)
    assert parsed.calls and len(parsed.calls[0].errors) == 2


# -- through the daemon (in-process) ----------------------------------------------------------------------

async def test_fenced_json_becomes_native_tool_calls(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content='```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS})
    assert response.status_code == 200
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "get_weather" and args(call) == {"city": "Paris"}
    assert len(scripted.requests) == 1  # a valid call costs no extra model call


async def test_native_calls_from_the_backend_pass_through(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(tool_calls=[tool_call("get_weather", '{"city": "Rome"}', id="call_x")]))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS})
    (call,) = response.json()["choices"][0]["message"]["tool_calls"]
    assert call["id"] == "call_x" and args(call) == {"city": "Rome"}


async def test_invalid_call_gets_one_repair_round(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content='{"name": "get_weather", "arguments": {"town": "Paris"}}'))
    scripted.enqueue(ScriptedReply(content='{"name": "get_weather", "arguments": {"city": "Paris"}}'))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS})
    (call,) = response.json()["choices"][0]["message"]["tool_calls"]
    assert args(call) == {"city": "Paris"}
    repair = scripted.requests[-1]["messages"]
    assert repair[-2]["role"] == "assistant" and "town" in repair[-2]["content"]
    assert "city" in repair[-1]["content"] and "required" in repair[-1]["content"]


async def test_unrepaired_schema_violation_is_surfaced_as_the_call(
    client: httpx.AsyncClient, scripted: ScriptedBackend
) -> None:
    bad = '{"name": "get_weather", "arguments": {"town": "Paris"}}'
    scripted.enqueue(ScriptedReply(content=bad))
    scripted.enqueue(ScriptedReply(content=bad))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS})
    (call,) = response.json()["choices"][0]["message"]["tool_calls"]
    assert args(call) == {"town": "Paris"}  # the client's own validation sees what the model asked for
    assert len(scripted.requests) == 2  # one repair round, no more


async def test_prose_answer_stays_content_and_tool_choice_none_is_untouched(
    client: httpx.AsyncClient, scripted: ScriptedBackend
) -> None:
    scripted.enqueue(ScriptedReply(content="I can't check the weather, but Paris is lovely."))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS})
    message = response.json()["choices"][0]["message"]
    assert message["content"].startswith("I can't") and "tool_calls" not in message
    call_text = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    scripted.enqueue(ScriptedReply(content=call_text))
    response = await client.post(
        "/v1/chat/completions", json={"messages": ASK, "tools": TOOLS, "tool_choice": "none"}
    )
    assert response.json()["choices"][0]["message"]["content"] == call_text


async def test_required_and_named_tool_choice_ask_once_for_the_call(
    client: httpx.AsyncClient, scripted: ScriptedBackend
) -> None:
    scripted.enqueue(ScriptedReply(content="Paris is usually mild."))
    scripted.enqueue(ScriptedReply(content='{"name": "get_time", "arguments": {"tz": "CET"}}'))
    named = {"type": "function", "function": {"name": "get_time"}}
    response = await client.post(
        "/v1/chat/completions", json={"messages": ASK, "tools": TOOLS, "tool_choice": named}
    )
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert [c["function"]["name"] for c in choice["message"]["tool_calls"]] == ["get_time"]
    assert "`get_time`" in scripted.requests[-1]["messages"][-1]["content"]


async def test_streamed_call_arrives_as_tool_call_deltas(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    content = 'Checking.\n```json\n[{"name": "get_weather", "arguments": {"city": "Oslo"}}, ' \
              '{"name": "get_time", "arguments": {"tz": "CET"}}]\n```'
    scripted.enqueue(ScriptedReply(content=content, chunk_size=4))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS, "stream": True})
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text.strip() == "Checking."
    deltas = [d for c in chunks if c["choices"] for d in c["choices"][0]["delta"].get("tool_calls") or []]
    assert [(d["index"], d["function"]["name"]) for d in deltas] == [(0, "get_weather"), (1, "get_time")]
    assert args(deltas[0]) == {"city": "Oslo"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_streamed_prose_still_streams(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(content="It is sunny today in Paris, enjoy it.", chunk_size=5))
    response = await client.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS, "stream": True})
    chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert "".join(p or "" for p in pieces) == "It is sunny today in Paris, enjoy it."
    assert sum(1 for p in pieces if p) > 3, "prose must stream in pieces, not arrive in one block at the end"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


# -- through the official SDK on a real port ------------------------------------------------------------

@pytest.fixture
def sdk(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[OpenAI]:
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], upstream_retries=0)
    with daemon_on_port(settings) as url, OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0, timeout=10) as c:
        yield c


def test_openai_sdk_sees_native_tool_calls(sdk: OpenAI, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    upstream = fake_upstream[1]
    tagged = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    upstream.enqueue(ScriptedReply(content=tagged))
    completion = sdk.chat.completions.create(model="m", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    calls = completion.choices[0].message.tool_calls
    assert completion.choices[0].finish_reason == "tool_calls"
    assert calls is not None and calls[0].function.name == "get_weather"  # type: ignore[union-attr]
    fenced = '```json\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n```'
    upstream.enqueue(ScriptedReply(content=fenced, chunk_size=3))
    stream = sdk.chat.completions.create(model="m", messages=ASK, tools=TOOLS, stream=True)  # type: ignore[arg-type]
    names = [d.function.name for chunk in stream if chunk.choices for d in chunk.choices[0].delta.tool_calls or []
             if d.function is not None]
    assert names == ["get_time"]
