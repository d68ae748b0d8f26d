"""`GET /v1/models/{id}` and model aliases: the daemon on a real port in front of the scripted fake upstream
over loopback HTTP. The alias is what clients see (listed, and the `model` of every reply on the fast and the
agent path, streamed or not); the upstream receives the forwarded name."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from openai import OpenAI

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, daemon_on_port, make_settings, sse_events

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def chat(client: httpx.Client, *, stream: bool = False, model: str | None = "ghost") -> tuple[str, list[str]]:
    """(text, every `model` the reply carried) of one chat request."""
    body: dict[str, Any] = {"messages": QUESTION, "stream": stream}
    if model is not None:
        body["model"] = model
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    if not stream:
        reply = response.json()
        return reply["choices"][0]["message"]["content"], [reply["model"]]
    chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    return text, [c["model"] for c in chunks]


@pytest.fixture
def upstream(fake_upstream: tuple[str, ScriptedBackend]) -> ScriptedBackend:
    return fake_upstream[1]


@contextlib.contextmanager
def daemon(tmp_path: Path, url: str, **settings: Any) -> Iterator[httpx.Client]:
    """The daemon on a real port in front of `url`, and a client for it."""
    with daemon_on_port(make_settings(tmp_path, upstream_url=url, upstream_retries=0, **settings)) as base:
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client


# ------------------------------------------------------------------------------------------ GET /v1/models/{id}


async def test_retrieve_model_found_and_not_found(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path, api_key="k"), scripted) as c:
        auth = {"Authorization": "Bearer k"}
        found = await c.get("/v1/models/scripted-model", headers=auth)
        missing = await c.get("/v1/models/org/not-here", headers=auth)
        anonymous = await c.get("/v1/models/scripted-model")
        listed = (await c.get("/v1/models", headers=auth)).json()
    assert found.status_code == 200
    assert found.json() == {**listed["data"][0], "id": "scripted-model", "object": "model"}
    assert missing.status_code == 404
    assert missing.json() == {"error": {
        "message": "the model 'org/not-here' does not exist here; GET /v1/models lists the ones this daemon serves",
        "type": "invalid_request_error", "param": "model", "code": "model_not_found",
    }}
    assert anonymous.status_code == 401  # same auth as every /v1 path


def test_retrieve_model_lists_what_the_upstream_serves(tmp_path: Path, fake_upstream: tuple[str, Any]) -> None:
    with daemon(tmp_path, fake_upstream[0]) as client:
        assert client.get("/v1/models/upstream-model").status_code == 200
        assert client.get("/v1/models/ghost").status_code == 404


# ---------------------------------------------------------------------------------------------- aliases


@pytest.mark.parametrize("router", ["always-fast", "always-agent"])
def test_alias_is_advertised_and_in_every_reply_while_the_upstream_gets_model(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, upstream = fake_upstream
    with daemon(tmp_path, url, served_model_name="ghost", model="upstream-model", router=router,
                sse_keepalive_s=0) as client:
        assert [m["id"] for m in client.get("/v1/models").json()["data"]] == ["ghost"]
        assert client.get("/v1/models/ghost").status_code == 200
        assert client.get("/v1/models/upstream-model").status_code == 404  # the forwarded name stays private
        upstream.enqueue(ScriptedReply(content="Paris."), ScriptedReply(content="Paris.", chunk_size=2))
        plain = chat(client)
        streamed = chat(client, stream=True)
        # Whatever the client names (another model, nothing), the reply names the alias.
        upstream.enqueue(ScriptedReply(content="Paris."))
        other = chat(client, model="gpt-4o")
        upstream.enqueue(ScriptedReply(content="Paris."))
        unnamed = chat(client, model=None)
    assert plain == ("Paris.", ["ghost"]) and other[1] == ["ghost"] and unnamed[1] == ["ghost"]
    assert streamed[0] == "Paris." and set(streamed[1]) == {"ghost"} and len(streamed[1]) > 2
    assert upstream.requests and {r.get("model") for r in upstream.requests} == {"upstream-model"}


def test_alias_without_model_forwards_the_upstreams_default(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    url, upstream = fake_upstream
    with daemon(tmp_path, url, served_model_name="ghost") as client:
        upstream.enqueue(ScriptedReply(content="Paris."))
        assert chat(client) == ("Paris.", ["ghost"])
    assert upstream.requests[-1]["model"] == "upstream-model"  # what the upstream listed first


@pytest.mark.parametrize("router", ["always-fast", "always-agent"])
def test_without_configuration_replies_name_the_requested_model_on_both_paths(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, upstream = fake_upstream
    with daemon(tmp_path, url, router=router, sse_keepalive_s=0) as client:
        upstream.enqueue(ScriptedReply(content="Paris."), ScriptedReply(content="Paris."))
        assert chat(client, model="gpt-test")[1] == ["gpt-test"]
        assert set(chat(client, model="gpt-test", stream=True)[1]) == {"gpt-test"}
        upstream.enqueue(ScriptedReply(content="Paris."))
        assert chat(client, model=None)[1] == ["upstream-model"]  # none asked for: the advertised default
    assert {r.get("model") for r in upstream.requests} <= {"gpt-test", None}


def test_alias_through_the_openai_sdk(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, upstream = fake_upstream
    settings = make_settings(tmp_path, upstream_url=url, served_model_name="ghost", model="upstream-model")
    with daemon_on_port(settings) as base, OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as sdk:
        assert sdk.models.retrieve("ghost").id == "ghost"
        upstream.enqueue(ScriptedReply(content="Paris."), ScriptedReply(content="Paris."))
        reply = sdk.chat.completions.create(model="ghost", messages=QUESTION)  # type: ignore[arg-type]
        chunks = list(sdk.chat.completions.create(model="ghost", messages=QUESTION, stream=True))  # type: ignore[arg-type]
    assert reply.model == "ghost" and {c.model for c in chunks} == {"ghost"}
    assert upstream.requests[-1]["model"] == "upstream-model"
