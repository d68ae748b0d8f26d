"""EmbeddedBackend: the thread/asyncio bridge on a fake engine (fast), the real 0.5B model (slow)."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded.backend import EmbeddedBackend
from ghost_agent.llm.embedded.model_files import ModelFileError

JSON = dict[str, Any]
SMALL_MODEL = "qwen2.5-coder-0.5b"


class FakeEngine:
    """Stands in for `xllamacpp.Server`: same call shape, same callback contract (True = stop).

    The user message picks the behaviour: "error" → an error dict, "invalid" → ValueError, otherwise
    `max_tokens` (default `tokens`) content chunks `delay` seconds apart.
    """

    def __init__(self, tokens: int = 5, delay: float = 0.0) -> None:
        self.tokens = tokens
        self.delay = delay
        self.requests: list[JSON] = []
        self.stopped_early = threading.Event()
        self.finished = threading.Event()

    def handle_chat_completions(self, body: JSON, callback: Callable[[JSON], bool]) -> None:
        self.requests.append(body)
        text = body["messages"][-1]["content"]
        if text == "invalid":
            raise ValueError("Expected 'messages' to be an array")
        if text == "error":
            callback({"error": {"code": 400, "message": "too long", "type": "exceed_context_size_error"}})
            return
        base = {"id": "chatcmpl-1", "created": 1, "model": "engine-name", "object": "chat.completion.chunk"}
        events: list[JSON] = [{"role": "assistant", "content": None}]
        n = int(body.get("max_tokens") or self.tokens)
        events += [{"content": f"t{i} "} for i in range(n)]
        for delta in events:
            if callback({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}):
                self.stopped_early.set()
                return
            time.sleep(self.delay)
        callback({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        usage = {"prompt_tokens": 3, "completion_tokens": n, "total_tokens": 3 + n}
        callback({**base, "choices": [], "usage": usage})
        self.finished.set()


class FakeEngineBackend(EmbeddedBackend):
    """EmbeddedBackend with the engine swapped at its one seam, `_load`.

    The warm-up is off unless asked for, so `engine.requests` holds only what a test sent
    (tests/llm/embedded/test_warmup.py covers the warm-up).
    """

    def __init__(self, engine: FakeEngine, *, queue_max: int = 16, warmup: bool = False) -> None:
        super().__init__(
            SMALL_MODEL, cache_dir=Path("/nonexistent"), queue_max=queue_max, n_threads=1, warmup=warmup
        )
        self.engine = engine

    def _load(self) -> Any:
        return self.engine


def chat(text: str, **extra: Any) -> JSON:
    return {"model": "anything", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture
async def make_backend() -> AsyncIterator[Callable[..., Any]]:
    made: list[EmbeddedBackend] = []

    async def make(engine: FakeEngine, **kwargs: Any) -> FakeEngineBackend:
        backend = FakeEngineBackend(engine, **kwargs)
        await backend.start()
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


async def test_complete_folds_chunks_into_a_completion(make_backend: Any) -> None:
    engine = FakeEngine(tokens=3)
    backend = await make_backend(engine)

    reply = await backend.complete(chat("hi"))

    assert reply["object"] == "chat.completion"
    assert reply["model"] == SMALL_MODEL
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": "t0 t1 t2 "}
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert reply["usage"]["completion_tokens"] == 3
    sent = engine.requests[0]
    assert sent["stream"] is True and "model" not in sent


async def test_stream_yields_chunks_and_usage_only_when_asked(make_backend: Any) -> None:
    backend = await make_backend(FakeEngine(tokens=2))

    plain = [c async for c in backend.stream(chat("hi"))]
    with_usage = [c async for c in backend.stream(chat("hi", stream_options={"include_usage": True}))]

    assert all(c["choices"] for c in plain)
    assert plain[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["model"] == SMALL_MODEL for c in plain)
    assert with_usage[-1]["choices"] == [] and with_usage[-1]["usage"]["total_tokens"] == 5


async def test_engine_errors_become_backend_errors(make_backend: Any) -> None:
    backend = await make_backend(FakeEngine())

    with pytest.raises(BackendError) as too_long:
        await backend.complete(chat("error"))
    with pytest.raises(BackendError) as invalid:
        async for _ in backend.stream(chat("invalid")):
            pass

    assert (too_long.value.status, too_long.value.code) == (400, "context_length_exceeded")
    assert (invalid.value.status, invalid.value.type) == (400, "invalid_request_error")


async def test_consumer_leaving_stops_the_engine_and_frees_the_slot(make_backend: Any) -> None:
    engine = FakeEngine(tokens=1000, delay=0.01)
    backend = await make_backend(engine, queue_max=0)

    stream = backend.stream(chat("long"))
    await stream.__anext__()
    await stream.aclose()  # what the server does when the client disconnects

    assert await asyncio.to_thread(engine.stopped_early.wait, 5)
    assert (await backend.complete(chat("next", max_tokens=2)))["choices"][0]["finish_reason"] == "stop"


async def test_cancelled_complete_stops_the_engine(make_backend: Any) -> None:
    engine = FakeEngine(tokens=1000, delay=0.01)
    backend = await make_backend(engine)

    task = asyncio.create_task(backend.complete(chat("long")))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(engine.stopped_early.wait, 5)


async def test_full_queue_answers_503_with_retry_after(make_backend: Any) -> None:
    engine = FakeEngine(tokens=1000, delay=0.01)
    backend = await make_backend(engine, queue_max=1)
    first = backend.stream(chat("long"))
    await first.__anext__()  # generating
    waiting = asyncio.create_task(backend.complete(chat("short", max_tokens=2)))  # queued behind it
    await asyncio.sleep(0.05)

    with pytest.raises(BackendError) as busy:
        await backend.complete(chat("one too many"))

    assert busy.value.status == 503 and busy.value.type == "server_busy"
    assert busy.value.retry_after is not None and busy.value.retry_after >= 1
    health = await backend.health()
    assert health.extra["requests_admitted"] == 2
    await first.aclose()
    assert (await waiting)["choices"][0]["finish_reason"] == "stop"


async def test_aclose_fails_in_flight_and_queued_requests(make_backend: Any) -> None:
    engine = FakeEngine(tokens=1000, delay=0.01)
    backend = await make_backend(engine)
    running = asyncio.create_task(backend.complete(chat("long")))
    queued = asyncio.create_task(backend.complete(chat("long")))
    await asyncio.sleep(0.1)

    await backend.aclose()

    for task in (running, queued):
        with pytest.raises(BackendError) as err:
            await task
        assert err.value.status == 503
    assert not (await backend.health()).model_loaded
    await backend.aclose()  # idempotent


async def test_not_started_backend_is_unavailable() -> None:
    backend = EmbeddedBackend(SMALL_MODEL, cache_dir=Path("/nonexistent"))
    with pytest.raises(BackendError) as err:
        await backend.complete(chat("hi"))
    assert err.value.status == 503
    assert (await backend.health()).model_loaded is False
    assert await backend.list_models() == [SMALL_MODEL]


async def test_missing_model_path_fails_start_with_a_clear_error(tmp_path: Path) -> None:
    backend = EmbeddedBackend(SMALL_MODEL, cache_dir=tmp_path, model_path=tmp_path / "none.gguf")
    if importlib.util.find_spec("xllamacpp") is None:
        expected = "local_extra_missing"
    else:
        expected = "model_file_missing"
    with pytest.raises(BackendError) as err:
        await backend.start()
    assert err.value.code == expected
    health = await backend.health()
    assert not health.model_loaded and health.detail == err.value.message


def test_unknown_model_key_is_refused_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="choose one of"):
        EmbeddedBackend("llama-70b", cache_dir=tmp_path)


# -- the real model ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("the [local] extra (xllamacpp) is not installed")
    return tmp_path_factory.mktemp("models")


@pytest.fixture
async def real_backend(model_cache: Path) -> AsyncIterator[EmbeddedBackend]:
    backend = EmbeddedBackend(SMALL_MODEL, cache_dir=model_cache, n_ctx=2048, queue_max=0)
    try:
        await backend.start()
    except BackendError as exc:
        if exc.code == "model_file_error":
            pytest.skip(f"0.5B chunk packages not installed: {exc.message}")
        raise
    yield backend
    await backend.aclose()


@pytest.mark.slow
async def test_real_model_complete(real_backend: EmbeddedBackend) -> None:
    reply = await real_backend.complete(
        {"messages": [{"role": "user", "content": "Write a Python hello world."}], "max_tokens": 24, "temperature": 0}
    )

    choice = reply["choices"][0]
    assert choice["message"]["content"].strip()
    assert choice["finish_reason"] in {"stop", "length"}
    assert reply["usage"]["completion_tokens"] > 0 and reply["usage"]["prompt_tokens"] > 0
    assert reply["model"] == SMALL_MODEL
    health = await real_backend.health()
    assert health.model_loaded and health.extra["model_file"].endswith(".gguf")


@pytest.mark.slow
async def test_real_model_stream(real_backend: EmbeddedBackend) -> None:
    chunks = [
        c
        async for c in real_backend.stream(
            {
                "messages": [{"role": "user", "content": "Count from 1 to 5."}],
                "max_tokens": 24,
                "temperature": 0,
                "stream_options": {"include_usage": True},
            }
        )
    ]

    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text.strip()
    assert any(c["choices"] and c["choices"][0]["finish_reason"] for c in chunks)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)


@pytest.mark.slow
async def test_real_model_busy_and_cancel(real_backend: EmbeddedBackend) -> None:
    long = {"messages": [{"role": "user", "content": "Write a long essay on compilers."}], "max_tokens": 400}
    stream = real_backend.stream(long)
    await stream.__anext__()  # the one slot is generating; queue_max=0 leaves no room

    with pytest.raises(BackendError) as busy:
        await real_backend.complete({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    assert busy.value.status == 503 and busy.value.retry_after

    started = time.monotonic()
    await stream.aclose()  # llama.cpp cancels the task at its next token, then the slot is free
    while (await real_backend.health()).extra["requests_admitted"] and time.monotonic() - started < 5:
        await asyncio.sleep(0.01)
    assert time.monotonic() - started < 1  # not the ~10 s the rest of the 400 tokens would take
    reply = await real_backend.complete({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    assert reply["choices"][0]["finish_reason"] in {"stop", "length"}
