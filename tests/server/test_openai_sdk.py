"""The official `openai` SDK against the daemon on a real port, proxying to the fake upstream over real HTTP.

The daemon's settings point `upstream_url` at the scripted fake OpenAI server, so every call crosses two
real sockets: SDK -> daemon (uvicorn) -> fake upstream (uvicorn). What the SDK parses is what real clients get.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from openai import AsyncOpenAI, OpenAI

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from tests.conftest import daemon_on_port, make_settings
from tests.server.test_chat import TOOLS

API_KEY = "sdk-test-key"
MESSAGES = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture
def upstream(fake_upstream: tuple[str, ScriptedBackend]) -> ScriptedBackend:
    """The fake upstream's scripted backend (the model behind the daemon)."""
    return fake_upstream[1]


@pytest.fixture
def base_url(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[str]:
    """The daemon's `/v1` base url; it requires API_KEY and forwards to the fake upstream over HTTP."""
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], api_key=API_KEY, upstream_retries=0)
    with daemon_on_port(settings) as url:
        yield f"{url}/v1"


@pytest.fixture
def sdk(base_url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=10) as client:
        yield client


def test_plain_completion(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(content="4"))
    completion = sdk.chat.completions.create(model="gpt-test", messages=MESSAGES)  # type: ignore[arg-type]
    assert completion.object == "chat.completion"
    # Nothing configured: the reply names the model the client asked for, on every path (docs/openai-api.md).
    assert completion.model == "gpt-test"
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "4"
    assert choice.finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens > 0
    # The daemon forwarded the client's model and messages to the upstream unchanged.
    assert upstream.requests[-1]["model"] == "gpt-test"
    assert upstream.requests[-1]["messages"] == MESSAGES


def test_streaming_deltas_concatenate(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(content="Hello from the streaming upstream", chunk_size=3))
    stream = sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
    chunks = list(stream)
    assert len(chunks) > 5, "the reply must arrive in many chunks"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the streaming upstream"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks), "usage was not requested"


def test_streamed_tool_calls_reassemble(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    calls = [
        tool_call("get_weather", '{"city": "Paris", "unit": "celsius"}', id="call_1"),
        tool_call("get_weather", '{"city": "Rome"}', id="call_2"),
    ]
    upstream.enqueue(ScriptedReply(tool_calls=calls, chunk_size=4))
    stream = sdk.chat.completions.create(
        model="m", messages=MESSAGES, tools=TOOLS, stream=True  # type: ignore[arg-type]
    )
    assembled: dict[int, dict[str, str]] = {}
    finish = None
    pieces = 0
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for piece in choice.delta.tool_calls or []:
            pieces += 1
            slot = assembled.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
            slot["id"] += piece.id or ""
            if piece.function is not None:
                slot["name"] += piece.function.name or ""
                slot["arguments"] += piece.function.arguments or ""
    assert pieces > 4, "the arguments must have been streamed in pieces"
    assert assembled == {
        0: {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'},
        1: {"id": "call_2", "name": "get_weather", "arguments": '{"city": "Rome"}'},
    }
    assert finish == "tool_calls"
    assert upstream.requests[-1]["tools"] == TOOLS


def test_non_streamed_tool_calls(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(tool_calls=[tool_call("get_weather", '{"city": "Oslo"}', id="call_x")]))
    completion = sdk.chat.completions.create(
        model="m", messages=MESSAGES, tools=TOOLS, tool_choice="auto"  # type: ignore[arg-type]
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    [call] = choice.message.tool_calls
    assert call.id == "call_x"
    assert call.type == "function"
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    assert call.function.arguments == '{"city": "Oslo"}'  # type: ignore[union-attr]


def test_include_usage_puts_usage_on_final_chunk(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    upstream.enqueue(ScriptedReply(content="four", usage=usage))
    stream = sdk.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}  # type: ignore[arg-type]
    )
    chunks = list(stream)
    final = chunks[-1]
    assert final.choices == []
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.total_tokens) == (11, 3, 14)
    assert all(c.usage is None for c in chunks[:-1])


def test_models_list(sdk: OpenAI) -> None:
    models = sdk.models.list()
    assert [m.id for m in models.data] == ["upstream-model"]
    assert all(m.object == "model" for m in models.data)


def test_wrong_api_key_raises_authentication_error(base_url: str, upstream: ScriptedBackend) -> None:
    with OpenAI(base_url=base_url, api_key="not-the-key", max_retries=0, timeout=10) as client:
        with pytest.raises(openai.AuthenticationError) as info:
            client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        with pytest.raises(openai.AuthenticationError):
            client.models.list()
    assert info.value.status_code == 401
    assert upstream.requests == [], "an unauthenticated request must not reach the upstream"


def test_upstream_error_surfaces_as_502(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(error=(500, "the GPU caught fire")))
    with pytest.raises(openai.APIStatusError) as info:
        sdk.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert info.value.status_code == 502
    assert "the GPU caught fire" in info.value.message
    assert isinstance(info.value.body, dict) and "the GPU caught fire" in info.value.body["message"]


def test_upstream_error_before_stream_surfaces_as_502(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(error=(500, "out of memory")))
    with pytest.raises(openai.APIStatusError) as info:
        sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
    assert info.value.status_code == 502
    assert "out of memory" in info.value.message


async def test_async_client_completion_stream_and_tools(base_url: str, upstream: ScriptedBackend) -> None:
    upstream.enqueue(
        ScriptedReply(content="async hello"),
        ScriptedReply(content="async streamed reply", chunk_size=2),
        ScriptedReply(tool_calls=[tool_call("get_weather", '{"city": "Lima"}', id="call_a")], chunk_size=3),
    )
    async with AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=10) as client:
        completion = await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        assert completion.choices[0].message.content == "async hello"

        stream = await client.chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}  # type: ignore[arg-type]
        )
        text, last = "", None
        async for chunk in stream:
            last = chunk
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
        assert text == "async streamed reply"
        assert last is not None and last.usage is not None and last.usage.completion_tokens > 0

        stream = await client.chat.completions.create(
            model="m", messages=MESSAGES, tools=TOOLS, stream=True  # type: ignore[arg-type]
        )
        arguments = ""
        async for chunk in stream:
            for piece in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                arguments += (piece.function.arguments or "") if piece.function else ""
        assert arguments == '{"city": "Lima"}'

        models = await client.models.list()
        assert [m.id for m in models.data] == ["upstream-model"]


async def test_async_client_errors(base_url: str, upstream: ScriptedBackend) -> None:
    async with AsyncOpenAI(base_url=base_url, api_key="wrong", max_retries=0, timeout=10) as client:
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    upstream.enqueue(ScriptedReply(error=(500, "upstream melted")))
    async with AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=10) as client:
        with pytest.raises(openai.APIStatusError) as info:
            await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert info.value.status_code == 502
    assert "upstream melted" in info.value.message
