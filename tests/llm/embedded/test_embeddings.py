"""`/v1/embeddings` on EmbeddedBackend: the lazily loaded embeddings engine, with fake engines at the `_load`
seams (the real model: the slow test in tests/llm/embedded/test_surface.py)."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded.embeddings import EMBED_CTX, LazyEmbedder
from tests.llm.embedded.test_backend import FakeEngine, FakeEngineBackend

JSON = dict[str, Any]
SIZE = 896  # the 0.5B's embedding size, which FakeEngineBackend serves


class FakeEmbeddingEngine:
    """Stands in for an embedding-mode `xllamacpp.Server`: `handle_embeddings(dict) -> dict`, blocking."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.requests: list[JSON] = []
        self.gate = gate

    def handle_embeddings(self, body: JSON) -> JSON:
        self.requests.append(body)
        if self.gate is not None:
            self.gate.wait(5)
        items = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if any(isinstance(i, str) and i.startswith("huge") for i in items):
            return {"error": {"code": 500, "type": "server_error",
                              "message": "input (9000 tokens) is too large to process. increase the physical "
                              "batch size (current batch size: 2048)"}}
        data = [{"object": "embedding", "index": i, "embedding": [float(len(str(item)))] + [0.0] * (SIZE - 1)}
                for i, item in enumerate(items)]
        return {"object": "list", "model": "engine", "data": list(reversed(data)),
                "usage": {"prompt_tokens": 5, "total_tokens": 5}}


class FakeLazyEmbedder(LazyEmbedder):
    def __init__(self, backend: Any, engine: FakeEmbeddingEngine) -> None:
        super().__init__(backend)
        self.engine = engine
        self.loads = 0

    def _load(self) -> Any:
        self.loads += 1
        return self.engine


class Backend(FakeEngineBackend):
    def __init__(self, engine: FakeEmbeddingEngine, embeddings: str = "lazy", **kwargs: Any) -> None:
        super().__init__(FakeEngine(), **kwargs)
        self.embeddings_mode = embeddings  # what `--embeddings` sets through the factory
        self.embedding_engine = engine

    def _make_embedder(self) -> Any:
        return FakeLazyEmbedder(self, self.embedding_engine)


@pytest.fixture
async def make() -> AsyncIterator[Any]:
    made: list[Backend] = []

    async def build(engine: FakeEmbeddingEngine | None = None, **kwargs: Any) -> Backend:
        backend = Backend(engine or FakeEmbeddingEngine(), **kwargs)
        await backend.start()
        backend.model_file = Path("/models/fake.gguf")  # what the chat engine's load sets
        made.append(backend)
        return backend

    yield build
    for backend in made:
        await backend.aclose()


async def test_the_engine_loads_on_the_first_request_only(make: Any) -> None:
    backend = await make()
    assert (await backend.health()).extra["embeddings"] == "lazy"  # nothing loaded at start
    reply = await backend.embeddings({"model": "x", "input": ["ab", "abcd"]})
    again = await backend.embeddings({"input": "abc"})
    assert backend._embedder.loads == 1
    assert (await backend.health()).extra["embeddings"] == "loaded"
    assert reply["model"] == backend.served_name and again["model"] == backend.served_name
    # In input order whatever order the engine answered in; only `input` reaches the engine.
    assert [(d["index"], d["embedding"][0]) for d in reply["data"]] == [(0, 2.0), (1, 4.0)]
    assert backend.embedding_engine.requests[0] == {"input": ["ab", "abcd"]}
    assert reply["usage"] == {"prompt_tokens": 5, "total_tokens": 5}


async def test_base64_is_little_endian_float32(make: Any) -> None:
    backend = await make()
    reply = await backend.embeddings({"input": "abc", "encoding_format": "base64"})
    vector = np.frombuffer(base64.b64decode(reply["data"][0]["embedding"]), dtype="<f4")
    assert vector.shape == (SIZE,) and vector[0] == 3.0


async def test_dimensions_other_than_the_models_are_a_400(make: Any) -> None:
    backend = await make()
    assert len((await backend.embeddings({"input": "a", "dimensions": SIZE}))["data"][0]["embedding"]) == SIZE
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": "a", "dimensions": 256})
    assert caught.value.status == 400 and caught.value.param == "dimensions" and str(SIZE) in caught.value.message


async def test_an_input_longer_than_the_batch_is_a_400(make: Any) -> None:
    backend = await make()
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": ["fine", "huge text"]})
    assert caught.value.status == 400 and caught.value.code == "context_length_exceeded"
    assert str(EMBED_CTX) in caught.value.message


async def test_off_is_501_saying_how_to_enable(make: Any) -> None:
    backend = await make(embeddings="off")
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": "a"})
    assert caught.value.status == 501 and "--embeddings lazy" in caught.value.message
    assert backend._embedder is None


async def test_a_full_queue_is_503_and_slots_come_back(make: Any) -> None:
    gate = threading.Event()
    backend = await make(FakeEmbeddingEngine(gate), queue_max=1)
    running = [asyncio.ensure_future(backend.embeddings({"input": "a"})) for _ in range(2)]
    await asyncio.sleep(0.1)
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": "b"})
    assert caught.value.status == 503 and caught.value.retry_after
    gate.set()
    assert all(len(r["data"]) == 1 for r in await asyncio.gather(*running))
    assert backend._embedder._admitted == 0
    assert len((await backend.embeddings({"input": "c"}))["data"]) == 1


async def test_a_failed_load_is_503_and_retried_next_time(make: Any) -> None:
    backend = await make()

    class Failing(FakeLazyEmbedder):
        def _load(self) -> Any:
            self.loads += 1
            if self.loads == 1:
                raise RuntimeError("Failed to init server, please check the input params.")
            return self.engine

    backend._embedder = Failing(backend, backend.embedding_engine)
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": "a"})
    assert caught.value.status == 503 and caught.value.code == "embeddings_unavailable"
    assert (await backend.health()).extra["embeddings"].startswith("failed:")
    assert len((await backend.embeddings({"input": "a"}))["data"]) == 1
    assert backend._embedder._admitted == 0


async def test_not_loaded_chat_model_means_no_embeddings_engine(tmp_path: Path) -> None:
    backend = Backend(FakeEmbeddingEngine())  # never started
    with pytest.raises(BackendError) as caught:
        await backend.embeddings({"input": "a"})
    assert caught.value.status == 503 and backend._embedder is None


def test_the_factory_passes_the_settings(tmp_path: Path) -> None:
    from ghost_agent.llm.factory import make_backend
    from tests.conftest import make_settings

    settings = make_settings(tmp_path, embeddings="off", served_model_name="ghost", model="ignored-locally")
    backend = make_backend(settings.backend)  # constructing loads nothing
    assert backend.embeddings_mode == "off" and backend.served_name == "ghost"  # type: ignore[attr-defined]
