"""`max_tokens` is bounded by the model's context on the fast path and on legacy completions (the agent route
caps its own calls): a client asking for 2^31-1 tokens gets the context's worth, through a real daemon."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

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
