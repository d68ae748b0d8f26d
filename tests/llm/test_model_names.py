"""ModelNames: what is advertised, what the backend receives, what every reply says."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ghost_agent.llm.model_names import ModelNames, renamed


def names(**settings: Any) -> ModelNames:
    values = {"served_model_name": None, "model": None, "backend_kind": "http", "backend_name": "ghost-agent"}
    return ModelNames.configure(**{**values, **settings})


def test_nothing_configured_passes_the_clients_name_through_and_echoes_it() -> None:
    n = names()
    n.discovered(["up-default", "other"])
    body = {"model": "other"}
    assert n.apply(body) == "other" and body == {"model": "other"}
    assert n.advertised == "up-default"
    empty: dict[str, Any] = {}
    assert n.apply(empty) == "up-default" and empty == {}  # no name asked for: none sent, the default replies


def test_model_alone_is_forwarded_advertised_and_replied_as_before() -> None:
    n = names(model="remote")
    n.discovered(["something-else"])  # --model wins over what the upstream lists
    body = {"model": "gpt-4o"}
    assert n.apply(body) == "remote" and body["model"] == "remote"
    assert n.advertised == "remote"


def test_an_alias_is_advertised_and_replied_while_the_upstream_gets_model() -> None:
    n = names(served_model_name="ghost", model="qwen-32b")
    body = {"model": "ghost"}
    assert n.apply(body) == "ghost" and body["model"] == "qwen-32b"
    assert n.advertised == "ghost" and n.pinned


def test_an_alias_without_model_sends_the_upstreams_default() -> None:
    n = names(served_model_name="ghost")
    body = {"model": "ghost"}
    assert n.apply(body) == "ghost" and "model" not in body  # nothing known yet: the upstream chooses
    n.discovered(["up-default"])
    assert n.advertised == "ghost"
    body = {"model": "ghost"}
    assert n.apply(body) == "ghost" and body["model"] == "up-default"


def test_embedded_replies_always_name_its_one_model() -> None:
    n = names(backend_kind="embedded", backend_name="qwen2.5-coder-1.5b")
    body = {"model": "gpt-4o"}
    assert n.apply(body) == "qwen2.5-coder-1.5b"
    assert n.apply({"model": "text-embedding-3-small"}, other_models=True) == "qwen2.5-coder-1.5b"


def test_other_models_reach_an_upstream_under_an_alias() -> None:
    n = names(served_model_name="ghost", model="qwen-32b")
    body = {"model": "nomic-embed-text"}
    assert n.apply(body, other_models=True) == "nomic-embed-text" and body["model"] == "nomic-embed-text"
    body = {"model": "ghost"}
    assert n.apply(body, other_models=True) == "ghost" and body["model"] == "qwen-32b"


async def test_renamed_sets_the_model_on_every_chunk_and_closes_the_source() -> None:
    closed = []

    async def source() -> AsyncIterator[dict[str, Any]]:
        try:
            yield {"model": "a", "choices": [{"index": 0}]}
            yield {"model": "a", "choices": [], "usage": {}}
            yield {"model": "a", "choices": [{"index": 0}]}
        finally:
            closed.append(True)

    stream = renamed(source(), "ghost")
    first = await anext(stream)
    second = await anext(stream)
    assert first["model"] == second["model"] == "ghost"
    await stream.aclose()  # the client left after two chunks
    assert closed == [True]
