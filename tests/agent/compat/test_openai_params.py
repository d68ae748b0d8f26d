"""The client's parameters on both paths: sampling reaches the model, max_tokens/stop bound the reply,
`response_format` gives JSON that parses and validates (byte-for-byte, whatever its keys), user/metadata are
recorded. Daemon in-process, its upstream the scripted fake OpenAI server over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.agent.test_agent_turn import daemon, stored
from tests.conftest import make_settings

SAMPLING = {"temperature": 0.3, "top_p": 0.9, "seed": 7, "stop": ["\n\nEND"], "max_tokens": 200,
            "presence_penalty": 0.1, "frequency_penalty": 0.2, "logprobs": True, "top_logprobs": 2}
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "name": {"type": "string"},
                   "arguments": {"type": "object"}, "tool": {"type": "string"}},
    "required": ["answer", "name", "arguments", "tool"],
    "additionalProperties": False,
}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "envelope", "schema": SCHEMA, "strict": True}}
# A client's JSON whose keys are exactly the ones an agent envelope would use.
ENVELOPE = '{"answer": "42", "name": "python", "arguments": {"code": "print(1)"}, "tool": "bash"}'
PATHS = ["always-fast", "always-agent"]


async def ask(tmp_path: Path, url: str, router: str, content: str, **extra: Any) -> httpx.Response:
    settings = make_settings(tmp_path, router=router, upstream_url=url, mcts=False)
    async with daemon(settings) as client:
        response = await client.post(
            "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": content}], **extra}
        )
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("router", PATHS)
async def test_sampling_parameters_reach_the_model(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="Paris."))
    response = await ask(tmp_path, url, router, "What is the capital of France?", user="u-1",
                         metadata={"ticket": "T-9"}, **SAMPLING)
    sent = llm.requests[0]
    for key, value in SAMPLING.items():
        assert sent.get(key) == value, f"{key} did not reach the model on {router}"
    assert response.json()["choices"][0]["message"]["content"] == "Paris."
    record = stored(make_settings(tmp_path), response.headers["x-ghost-trajectory-id"])
    assert record.extra["user"] == "u-1" and record.extra["metadata"] == {"ticket": "T-9"}


async def test_agent_path_bounds_a_revised_reply_by_max_tokens_and_stop(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    # The draft claims an output its code does not print: the rewrite is part of the reply, so it gets the
    # client's max_tokens (lower than the agent's own budget) and stop too.
    url, llm = upstream
    draft = "```python\nprint(2 + 2)\n```\nOutput:\n```\n5\n```"
    llm.enqueue(ScriptedReply(content=draft), ScriptedReply(content="It prints 4."))
    response = await ask(tmp_path, url, "always-agent", "What does print(2 + 2) print? Show the code.",
                         max_tokens=64, stop=["\n\nEND"])
    assert response.json()["choices"][0]["message"]["content"] == "It prints 4."
    rewrite = llm.requests[-1]
    assert rewrite["max_tokens"] == 64 and rewrite["stop"] == ["\n\nEND"]


@pytest.mark.parametrize("router", PATHS)
async def test_structured_output_with_envelope_keys_comes_back_byte_for_byte(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content=ENVELOPE))
    response = await ask(tmp_path, url, router, "Compute 6*7 and describe it as JSON.", response_format=JSON_SCHEMA)
    assert response.json()["choices"][0]["message"]["content"] == ENVELOPE
    assert llm.requests[0]["response_format"] == JSON_SCHEMA  # the constraint reached the model
    assert len(llm.requests) == 1  # valid JSON: no check, no repair, no rewrite


@pytest.mark.parametrize("router", PATHS)
async def test_structured_output_is_repaired_once_when_it_does_not_validate(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content='Sure! {"answer": "42"}'), ScriptedReply(content=f"```json\n{ENVELOPE}\n```"))
    response = await ask(tmp_path, url, router, "Describe 42 as JSON.", response_format=JSON_SCHEMA)
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == json.loads(ENVELOPE)
    repair = llm.requests[-1]
    assert repair["response_format"] == JSON_SCHEMA
    assert "not valid JSON" in repair["messages"][-1]["content"]


async def test_json_object_format_on_the_agent_path_keeps_a_json_reply(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    # Without a schema the reply must still be one JSON object; the agent's checks never rewrite it to prose.
    url, llm = upstream
    reply = '{"tool": "python", "args": {"code": "print(sum(range(10)))"}}'
    llm.enqueue(ScriptedReply(content=reply))
    response = await ask(tmp_path, url, "always-agent", "How much is 0+1+...+9? Answer as JSON.",
                         response_format={"type": "json_object"})
    assert response.json()["choices"][0]["message"]["content"] == reply


async def test_agent_path_returns_the_drafts_logprobs(tmp_path: Path, upstream: tuple[str, ScriptedBackend]) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="Paris."))
    response = await ask(tmp_path, url, "always-agent", "Capital of France?", logprobs=True)
    choice = response.json()["choices"][0]
    assert choice["logprobs"] is not None and choice["logprobs"]["content"], "the draft's logprobs are the reply's"
