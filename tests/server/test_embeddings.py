"""`POST /v1/embeddings`: forwarded to an upstream (the scripted fake over loopback HTTP, through httpx and the
official SDK), validation, `--embeddings off`, and a backend that serves none."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI

from ghost_agent.llm.base import BackendHealth, LLMBackend
from ghost_agent.llm.embedding_wire import encode
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, daemon_on_port, make_settings

EMBEDDINGS = "/v1/embeddings"


@pytest.fixture
def base_url(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[str]:
    """The daemon on a real port, forwarding to the fake upstream, with an alias for its chat model."""
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], upstream_retries=0, served_model_name="ghost",
                             model="upstream-model")
    with daemon_on_port(settings) as url:
        yield url


def test_embeddings_are_forwarded_to_the_upstream(base_url: str, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    upstream = fake_upstream[1]
    body = {"model": "nomic-embed-text", "input": ["alpha", "beta", "alpha"], "dimensions": 8, "user": "u1"}
    response = httpx.post(f"{base_url}{EMBEDDINGS}", json=body, timeout=10)
    assert response.status_code == 200, response.text
    reply = response.json()
    # Another model than the alias goes through untouched (an upstream's own embedding model) and is echoed.
    assert upstream.requests[-1] == body
    assert reply["object"] == "list" and reply["model"] == "nomic-embed-text"
    vectors = [d["embedding"] for d in reply["data"]]
    assert [d["index"] for d in reply["data"]] == [0, 1, 2]
    assert all(len(v) == 8 for v in vectors) and vectors[0] == vectors[2] != vectors[1]
    assert reply["usage"]["prompt_tokens"] > 0


def test_the_alias_or_no_model_is_the_forwarded_model(
    base_url: str, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    upstream = fake_upstream[1]
    for body in ({"model": "ghost", "input": "x"}, {"input": [1, 2, 3]}):
        reply = httpx.post(f"{base_url}{EMBEDDINGS}", json=body, timeout=10).json()
        assert upstream.requests[-1]["model"] == "upstream-model"
        assert reply["model"] == "ghost"


def test_embeddings_through_the_openai_sdk(base_url: str, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    upstream = fake_upstream[1]
    with OpenAI(base_url=f"{base_url}/v1", api_key="x", max_retries=0, timeout=10) as sdk:
        result = sdk.embeddings.create(model="ghost", input=["hello world", "goodbye"])
        floats = sdk.embeddings.create(model="ghost", input="hello world", encoding_format="float")
    # The SDK asks for base64 by default and decodes it; the vectors are the same as the float ones.
    assert upstream.requests[-2]["encoding_format"] == "base64"
    assert result.model == "ghost" and len(result.data) == 2
    first = result.data[0].embedding
    assert first == pytest.approx(floats.data[0].embedding, abs=1e-6)
    assert math.isclose(sum(x * x for x in first), 1.0, rel_tol=1e-4)


def test_upstream_errors_are_relayed(base_url: str, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    fake_upstream[1].enqueue(ScriptedReply(error=(400, "model nomic-embed-text not found")))
    response = httpx.post(f"{base_url}{EMBEDDINGS}", json={"model": "nomic-embed-text", "input": "x"}, timeout=10)
    assert response.status_code == 400
    assert "not found" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": ""}, "input"),
        ({"input": []}, "input"),
        ({"input": ["a", ""]}, "input.1"),
        ({"input": ["a", [1, 2]]}, "input"),
        ({"input": [[1], [-1]]}, "input.1"),
        ({"input": {"text": "a"}}, "input"),
        ({"input": ["a"] * 2049}, "input"),
        ({"input": "a", "encoding_format": "int8"}, "encoding_format"),
        ({"input": "a", "dimensions": 0}, "dimensions"),
        ({}, "input"),
    ],
)
async def test_invalid_requests_are_400_naming_the_field(
    tmp_path: Path, scripted: ScriptedBackend, body: dict[str, Any], param: str
) -> None:
    async with app_client(make_settings(tmp_path), scripted) as c:
        response = await c.post(EMBEDDINGS, json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert scripted.requests == []


async def test_token_arrays_and_base64_from_a_local_backend(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path), scripted) as c:
        tokens = (await c.post(EMBEDDINGS, json={"input": [[1, 2], [3]]})).json()
        packed = (await c.post(EMBEDDINGS, json={"input": [[1, 2]], "encoding_format": "base64"})).json()
    assert len(tokens["data"]) == 2 and tokens["usage"]["prompt_tokens"] == 3
    assert packed["data"][0]["embedding"] == encode(tokens["data"][0]["embedding"], "base64")


async def test_embeddings_off_is_501_saying_how_to_enable(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path, embeddings="off"), scripted) as c:
        response = await c.post(EMBEDDINGS, json={"input": "x"})
    assert response.status_code == 501
    error = response.json()["error"]
    assert error["code"] == "embeddings_disabled" and "--embeddings lazy" in error["message"]
    assert scripted.requests == []


class ChatOnlyBackend(LLMBackend):
    """A backend that implements chat and nothing else (the interface's defaults answer the rest)."""

    kind = "chat-only"

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("not called")

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        raise AssertionError("not called")
        yield {}

    async def health(self) -> BackendHealth:
        return BackendHealth(self.kind, True, True)


async def test_a_backend_without_embeddings_answers_501(tmp_path: Path) -> None:
    async with app_client(make_settings(tmp_path), ChatOnlyBackend()) as c:
        embeddings = await c.post(EMBEDDINGS, json={"input": "x"})
        completions = await c.post("/v1/completions", json={"prompt": "x"})
        streamed = await c.post("/v1/completions", json={"prompt": "x", "stream": True})
    for response in (embeddings, completions, streamed):
        assert response.status_code == 501
        assert response.json()["error"]["code"] == "not_supported"
        assert "does not serve" in response.json()["error"]["message"]
