"""`max_tokens` is bounded by the model's context on the fast path and on legacy completions (the agent route
caps its own calls): a client asking for 2^31-1 tokens gets the context's worth, through a real daemon."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ghost_agent.llm.fake_server import FakeOpenAIServer, serve_in_thread
from ghost_agent.llm.http_upstream import model_context_length
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.llm.wire import bound_max_tokens
from tests.conftest import daemon_on_port, make_settings

HUGE = 2**31 - 1


@pytest.mark.parametrize("context", [4096, None])
def test_fast_path_and_legacy_completions_cap_max_tokens(tmp_path: Path, context: int | None) -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="hello")])
    backend.context_tokens = context  # the embedded model knows its n_ctx; an upstream bounds its own (None)
    with daemon_on_port(make_settings(tmp_path), backend) as url:
        chat = httpx.post(f"{url}/v1/chat/completions", timeout=30, json={
            "messages": [{"role": "user", "content": "hello there"}], "max_tokens": HUGE,
            "max_completion_tokens": HUGE,
        })
        legacy = httpx.post(f"{url}/v1/completions", json={"prompt": "Once", "max_tokens": HUGE}, timeout=30)
        small = httpx.post(f"{url}/v1/chat/completions", timeout=30, json={
            "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 7,
        })
    assert chat.status_code == legacy.status_code == small.status_code == 200
    sent = [r for r in backend.requests if "max_tokens" in r]
    expected = context if context is not None else HUGE
    assert sent[0]["max_tokens"] == sent[0]["max_completion_tokens"] == expected
    assert sent[1]["max_tokens"] == expected
    assert sent[2]["max_tokens"] == 7  # within the context: untouched


@pytest.mark.parametrize("pinned", [None, "upstream-model"])
def test_an_upstream_reporting_its_context_bounds_max_tokens(tmp_path: Path, pinned: str | None) -> None:
    # A vLLM-like upstream lists `max_model_len`; the daemon notes it at startup, whether or not --model is set.
    upstream = ScriptedBackend(model="upstream-model", replies=[ScriptedReply(content="hi") for _ in range(3)])
    upstream.context_tokens = 8192
    with serve_in_thread(FakeOpenAIServer(upstream)) as upstream_url:
        settings = make_settings(tmp_path, upstream_url=upstream_url, model=pinned)
        with daemon_on_port(settings) as url:
            chat = httpx.post(f"{url}/v1/chat/completions", timeout=30, json={
                "model": "upstream-model", "messages": [{"role": "user", "content": "hello there"}],
                "max_tokens": HUGE,
            })
            legacy = httpx.post(f"{url}/v1/completions", timeout=30,
                                json={"model": "upstream-model", "prompt": "Once", "max_tokens": HUGE})
            other = httpx.post(f"{url}/v1/completions", timeout=30,
                               json={"model": "unlisted", "prompt": "Once", "max_tokens": HUGE})
    assert chat.status_code == legacy.status_code == other.status_code == 200
    sent = [r["max_tokens"] for r in upstream.requests if "max_tokens" in r]
    # An unlisted model (forwarded as named when nothing is pinned) is left to the upstream to bound.
    assert sent == [8192, 8192, 8192 if pinned else HUGE]


def test_model_context_length_reads_what_servers_report() -> None:
    assert model_context_length({"id": "m", "max_model_len": 32768}) == 32768  # vLLM
    assert model_context_length({"id": "m", "context_length": 8192}) == 8192  # OpenRouter
    assert model_context_length({"id": "m", "meta": {"n_ctx_train": 4096}}) == 4096  # llama.cpp
    assert model_context_length({"id": "m", "max_model_len": "big"}) is None
    assert model_context_length({"id": "m", "max_model_len": True}) is None
    assert model_context_length({"id": "m"}) is None


def test_bound_max_tokens_leaves_what_is_not_a_count() -> None:
    body = {"max_tokens": True, "max_completion_tokens": "9"}
    bound_max_tokens(body, 10)
    assert body == {"max_tokens": True, "max_completion_tokens": "9"}  # validation answers those, not this
    body = {"max_tokens": 11}
    bound_max_tokens(body, None)
    assert body == {"max_tokens": 11}


def test_the_embedded_model_reports_its_context(tmp_path: Path) -> None:
    from ghost_agent.llm.embedded.backend import EmbeddedBackend

    assert EmbeddedBackend(cache_dir=tmp_path, n_ctx=2048).context_tokens == 2048  # nothing is loaded to know it
