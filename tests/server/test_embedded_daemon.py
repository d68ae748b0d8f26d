"""The daemon on its default embedded model, end to end (slow: loads the real Qwen2.5-Coder-1.5B)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from tests.conftest import daemon_on_port, make_settings

pytestmark = pytest.mark.slow

# Shared with the other slow tests so the 1.1 GB file is assembled once per machine, not per test.
MODEL_CACHE = Path(os.environ.get("GHOST_TEST_MODEL_CACHE", "/tmp/ghost-models"))


def wait_ready(url: str, timeout: float = 300.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = httpx.get(f"{url}/health", timeout=5).json()
        if body["status"] != "starting":
            return dict(body)
        time.sleep(0.5)
    raise AssertionError("the embedded model did not load in time")


def test_default_embedded_model_chats_plain_and_streamed(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, model_cache_dir=MODEL_CACHE, n_ctx=2048)
    assert settings.backend.upstream_url is None and settings.backend.local_model == "qwen2.5-coder-1.5b"
    with daemon_on_port(settings) as url:
        # While the model loads (seconds), /health answers at once and chat requests get 503 + Retry-After.
        if httpx.get(f"{url}/health", timeout=5).json()["status"] == "starting":
            early = httpx.post(f"{url}/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
            assert early.status_code == 503
            assert early.json()["error"]["code"] == "backend_starting"
            assert early.headers["retry-after"]
        health = wait_ready(url)
        assert health["status"] == "ok", health
        assert httpx.get(f"{url}/v1/ghost/health", timeout=5).json()["model"] == "qwen2.5-coder-1.5b"
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=300)
        assert [m.id for m in client.models.list()] == ["qwen2.5-coder-1.5b"]

        reply = client.chat.completions.create(
            model="qwen2.5-coder-1.5b",
            messages=[{"role": "user", "content": "Reply with the single word: pong"}],
            max_tokens=16,
            temperature=0,
        )
        assert reply.choices[0].message.content
        assert "pong" in reply.choices[0].message.content.lower()
        assert reply.usage is not None and reply.usage.completion_tokens > 0

        stream = client.chat.completions.create(
            model="qwen2.5-coder-1.5b",
            messages=[{"role": "user", "content": "Count from 1 to 5, separated by spaces."}],
            max_tokens=32,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
        pieces, finish, usage = [], None, None
        for chunk in stream:
            if chunk.choices:
                pieces.append(chunk.choices[0].delta.content or "")
                finish = chunk.choices[0].finish_reason or finish
            if chunk.usage:
                usage = chunk.usage
        text = "".join(pieces)
        assert "1" in text and "5" in text, text
        assert finish in ("stop", "length")
        assert usage is not None and usage.completion_tokens > 0
