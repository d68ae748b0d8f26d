"""The embedded model's warm-up: `start` runs one 1-token request over the default chat prefix before the
backend (and so the daemon's /health) reports ready; a failed warm-up is logged, never fatal."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded.backend import WARMUP_BODY, EmbeddedBackend
from ghost_agent.server import build_app
from tests.conftest import make_settings, wait_until
from tests.llm.embedded.test_backend import SMALL_MODEL, FakeEngine, FakeEngineBackend, chat

JSON = dict[str, Any]


class GatedEngine(FakeEngine):
    """A fake engine whose first request (the warm-up) waits until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__(tokens=2)
        self.gate = threading.Event()

    def handle_chat_completions(self, body: JSON, callback: Callable[[JSON], bool]) -> None:
        if not self.requests:
            self.requests.append(body)
            assert self.gate.wait(5), "the test never opened the gate"
            self.requests.pop()  # recorded again by the real handler below
        super().handle_chat_completions(body, callback)


class FailingFirstEngine(FakeEngine):
    """A fake engine whose first request raises, as a broken engine would."""

    def handle_chat_completions(self, body: JSON, callback: Callable[[JSON], bool]) -> None:
        if not self.requests:
            self.requests.append(body)
            raise RuntimeError("engine hiccup")
        super().handle_chat_completions(body, callback)


async def test_start_warms_up_the_default_chat_prefix_before_returning() -> None:
    engine = FakeEngine()
    backend = FakeEngineBackend(engine, warmup=True)
    with capture_logs() as logs:
        await backend.start()
    try:
        [sent] = engine.requests  # the warm-up ran inside start()
        # A bare user message: the chat template gives it the default system prompt, as it does the client's.
        assert sent["messages"] == WARMUP_BODY["messages"] == [{"role": "user", "content": "Hello."}]
        assert sent["max_tokens"] == 1 and sent["stream"] is True
        [event] = [e for e in logs if e["event"] == "backend_warmup"]
        assert event["prompt_tokens"] == 3 and event["warmup_s"] >= 0
        assert (await backend.health()).extra["requests_admitted"] == 0  # its slot is free again

        await backend.complete(chat("hi"))
        assert engine.requests[1]["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        await backend.aclose()


async def test_warm_up_off_sends_nothing() -> None:
    engine = FakeEngine()
    backend = FakeEngineBackend(engine, warmup=False)
    await backend.start()
    try:
        assert engine.requests == []
        assert await backend.warm_up() is True and len(engine.requests) == 1  # still callable on demand
    finally:
        await backend.aclose()


async def test_a_failed_warm_up_is_logged_and_the_backend_still_serves() -> None:
    engine = FailingFirstEngine()
    backend = FakeEngineBackend(engine, warmup=True)
    with capture_logs() as logs:
        await backend.start()
    try:
        assert [e["event"] for e in logs if e["event"].startswith("backend_warmup")] == ["backend_warmup_failed"]
        assert "engine hiccup" in next(e for e in logs if e["event"] == "backend_warmup_failed")["error"]
        assert (await backend.health()).model_loaded
        reply = await backend.complete(chat("hi", max_tokens=2))
        assert reply["choices"][0]["finish_reason"] == "stop"
    finally:
        await backend.aclose()


async def test_warm_up_before_load_does_nothing() -> None:
    backend = EmbeddedBackend(SMALL_MODEL, cache_dir=Path("/nonexistent"))
    assert await backend.warm_up() is False


async def test_daemon_reports_ready_only_after_the_warm_up(tmp_path: Path) -> None:
    """/health turns `ok` (and chat requests are admitted) only once the warm-up has run."""
    engine = GatedEngine()
    backend = FakeEngineBackend(engine, warmup=True)
    app = build_app(make_settings(tmp_path), backend, configure_logs=False)
    ctx = app.state.ctx
    started, stop = asyncio.Event(), asyncio.Event()

    async def run_daemon() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    daemon = asyncio.create_task(run_daemon())
    try:
        await wait_until(lambda: bool(engine.requests))  # the warm-up reached the engine ...
        await asyncio.sleep(0.05)
        assert not ctx.backend_ready.is_set() and not started.is_set()  # ... and readiness waits for it
        engine.gate.set()
        await asyncio.wait_for(started.wait(), 5)
        assert ctx.backend_ready.is_set()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            assert (await client.get("/health")).json()["status"] == "ok"
            reply = await client.post("/v1/chat/completions", json=chat("hi"))
        assert reply.status_code == 200
        assert [r["messages"][-1]["content"] for r in engine.requests] == ["Hello.", "hi"]
    finally:
        engine.gate.set()
        stop.set()
        await asyncio.wait_for(daemon, 10)


# -- the real model ------------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_real_model_warm_up_leaves_the_default_chat_prefix_cached() -> None:
    """After `start`, a new bare question reuses the warmed prefix: llama.cpp reports it as cached tokens."""
    cache = Path(os.environ.get("GHOST_TEST_MODEL_CACHE", "/tmp/ghost-models"))
    backend = EmbeddedBackend(SMALL_MODEL, cache_dir=cache, n_ctx=2048, queue_max=0)
    try:
        await backend.start()
    except BackendError as exc:
        if exc.code in {"model_file_error", "local_extra_missing"}:
            pytest.skip(f"the 0.5B model is not installed: {exc.message}")
        raise
    try:
        reply = await backend.complete(
            {"messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 4,
             "temperature": 0}
        )
        usage = reply["usage"]
        # Qwen's default system prompt and the user header (24 tokens) were processed by the warm-up.
        assert usage["prompt_tokens_details"]["cached_tokens"] >= 20, usage
        assert reply["timings"]["prompt_n"] <= usage["prompt_tokens"] - 20
    finally:
        await backend.aclose()
