"""LangChain and LiteLLM against the daemon on a real port (the scripted fake upstream behind it): structured
output and tool calls arrive as those libraries expect them, on the default route a new install takes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import daemon_on_port, make_settings

# LiteLLM fetches a model price map from the internet at import unless told to use its bundled copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

API_KEY = "lib-test-key"
SCHEMA = {
    "title": "Envelope",
    "type": "object",
    "properties": {"answer": {"type": "string"}, "name": {"type": "string"}, "tool": {"type": "string"}},
    "required": ["answer", "name", "tool"],
    "additionalProperties": False,
}
ENVELOPE = {"answer": "42", "name": "python", "tool": "bash"}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture
def daemon(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[tuple[str, ScriptedBackend]]:
    # Default settings: the untrained router's prior decides the route, as on a fresh install.
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], api_key=API_KEY, upstream_retries=0)
    with daemon_on_port(settings) as url:
        yield f"{url}/v1", fake_upstream[1]


def test_langchain_structured_output_with_envelope_keys(daemon: tuple[str, ScriptedBackend]) -> None:
    from langchain_openai import ChatOpenAI

    url, upstream = daemon
    upstream.enqueue(ScriptedReply(content=json.dumps(ENVELOPE)))
    llm = ChatOpenAI(base_url=url, api_key=API_KEY, model="m", max_retries=0, timeout=20)  # type: ignore[arg-type]
    result: Any = llm.with_structured_output(SCHEMA, method="json_schema").invoke(
        "Compute 6*7 and report it as JSON with the tool you would use."
    )
    assert result == ENVELOPE
    assert upstream.requests[0]["response_format"]["type"] == "json_schema"


def test_langchain_tool_call_from_a_text_call(daemon: tuple[str, ScriptedBackend]) -> None:
    from langchain_openai import ChatOpenAI

    url, upstream = daemon
    upstream.enqueue(ScriptedReply(content='```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'))
    llm = ChatOpenAI(base_url=url, api_key=API_KEY, model="m", max_retries=0, timeout=20)  # type: ignore[arg-type]
    message = llm.bind_tools([WEATHER]).invoke("What's the weather in Oslo?")
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("get_weather", {"city": "Oslo"})]


def test_litellm_tool_call_and_response_format(daemon: tuple[str, ScriptedBackend]) -> None:
    import litellm

    url, upstream = daemon
    tagged = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    upstream.enqueue(ScriptedReply(content=tagged))
    response: Any = litellm.completion(
        model="openai/m", api_base=url, api_key=API_KEY, tools=[WEATHER],
        messages=[{"role": "user", "content": "Weather in Rome?"}], num_retries=0, timeout=20,
    )
    (call,) = response.choices[0].message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Rome"}

    upstream.enqueue(ScriptedReply(content=json.dumps(ENVELOPE)))
    response = litellm.completion(
        model="openai/m", api_base=url, api_key=API_KEY, num_retries=0, timeout=20,
        messages=[{"role": "user", "content": "Describe 42 as JSON."}],
        response_format={"type": "json_schema", "json_schema": {"name": "envelope", "schema": SCHEMA}},
    )
    assert json.loads(response.choices[0].message.content) == ENVELOPE
