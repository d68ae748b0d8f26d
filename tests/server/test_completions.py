"""Legacy `POST /v1/completions`: forwarded to the scripted fake upstream over loopback HTTP (httpx and the
official SDK), streaming and not, model names, `n`, errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import orjson
import pytest
from openai import OpenAI

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, daemon_on_port, make_settings, sse_events

COMPLETIONS = "/v1/completions"


@pytest.fixture
def upstream(fake_upstream: tuple[str, ScriptedBackend]) -> ScriptedBackend:
    return fake_upstream[1]


@pytest.fixture
def base_url(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[str]:
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], upstream_retries=0, api_key="k")
    with daemon_on_port(settings) as url:
        yield url


@pytest.fixture
def sdk(base_url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{base_url}/v1", api_key="k", max_retries=0, timeout=10) as client:
        yield client


def test_completion_is_forwarded_with_its_parameters(base_url: str, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(content=" world", finish_reason="length"))
    body = {"model": "gpt-3.5-turbo-instruct", "prompt": "hello", "max_tokens": 5, "temperature": 0.0,
            "stop": ["\n"], "echo": False, "logprobs": 2, "top_k": 40}
    response = httpx.post(f"{base_url}{COMPLETIONS}", json=body, headers={"Authorization": "Bearer k"}, timeout=10)
    assert response.status_code == 200, response.text
    assert upstream.requests[-1] == body  # every field, known or not, reaches the upstream as sent
    reply = response.json()
    assert reply["object"] == "text_completion" and reply["model"] == "gpt-3.5-turbo-instruct"
    assert reply["choices"] == [{"index": 0, "text": " world", "logprobs": None, "finish_reason": "length"}]
    assert httpx.post(f"{base_url}{COMPLETIONS}", json=body, timeout=10).status_code == 401  # same auth as /v1


def test_completion_through_the_openai_sdk(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(content="def add(a, b): return a + b"))
    result = sdk.completions.create(model="m", prompt="# add two numbers\n", max_tokens=16)
    assert result.object == "text_completion"
    assert result.choices[0].text == "def add(a, b): return a + b"
    assert result.choices[0].finish_reason == "stop"
    assert result.usage is not None and result.usage.total_tokens > 0
    assert upstream.requests[-1]["prompt"] == "# add two numbers\n" and upstream.requests[-1]["max_tokens"] == 16


def test_streamed_completion_through_the_openai_sdk(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(content="one two three four", chunk_size=3))
    chunks = list(sdk.completions.create(model="m", prompt="count:", stream=True,
                                         stream_options={"include_usage": True}))
    assert len(chunks) > 4
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "one two three four"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None  # asked for
    assert {c.model for c in chunks} == {"m"}


def test_several_prompts_come_back_in_order(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    result = sdk.completions.create(model="m", prompt=["first", "second"])  # the echo default: each prompt back
    assert [(c.index, c.text) for c in result.choices] == [(0, "first"), (1, "second")]


def test_upstream_errors_keep_their_status(sdk: OpenAI, upstream: ScriptedBackend) -> None:
    upstream.enqueue(ScriptedReply(error=(400, "echo is not supported")))
    with pytest.raises(openai.BadRequestError, match="echo is not supported"):
        sdk.completions.create(model="m", prompt="x", echo=True)


async def test_alias_names_every_reply_and_the_upstream_gets_model(tmp_path: Path) -> None:
    scripted = ScriptedBackend(model="local")
    settings = make_settings(tmp_path, served_model_name="ghost", model="behind")
    async with app_client(settings, scripted) as c:
        plain = (await c.post(COMPLETIONS, json={"model": "ghost", "prompt": "hi"})).json()
        streamed = await c.post(COMPLETIONS, json={"prompt": "hello there", "stream": True})
    assert plain["model"] == "ghost"
    events = [orjson.loads(e) for e in sse_events(streamed.text)[:-1]]
    assert events and {e["model"] for e in events} == {"ghost"}
    assert all("usage" not in e for e in events)  # not asked for
    assert [r["model"] for r in scripted.requests] == ["behind", "behind"]


async def test_n_above_max_n_is_refused(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path, max_n=2), scripted) as c:
        response = await c.post(COMPLETIONS, json={"prompt": "x", "n": 3})
        bad = await c.post(COMPLETIONS, json={"prompt": ["ok", ""]})
    assert response.status_code == 400 and response.json()["error"]["code"] == "n_too_large"
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "prompt.1"
    assert scripted.requests == []
