"""Legacy completions and embeddings on the real embedded model (slow: loads the 0.5B, then its embeddings
engine as a second copy of the weights; run with `make test-slow`, never next to a benchmark)."""

from __future__ import annotations

import base64
import importlib.util
import math
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded.backend import EmbeddedBackend
from ghost_agent.llm.embedded.embeddings import DIMENSIONS

SMALL_MODEL = "qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("the [local] extra (xllamacpp) is not installed")
    return tmp_path_factory.mktemp("models")


@pytest.fixture
async def backend(model_cache: Path) -> AsyncIterator[EmbeddedBackend]:
    made = EmbeddedBackend(SMALL_MODEL, cache_dir=model_cache, n_ctx=2048, queue_max=2, warmup=False)
    try:
        await made.start()
    except BackendError as exc:
        if exc.code == "model_file_error":
            pytest.skip(f"0.5B chunk packages not installed: {exc.message}")
        raise
    yield made
    await made.aclose()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.slow
async def test_real_model_legacy_completion(backend: EmbeddedBackend) -> None:
    reply = await backend.text_completion({"prompt": "def add(a, b):\n    return", "max_tokens": 8, "temperature": 0})
    choice = reply["choices"][0]
    assert choice["text"].strip() and choice["finish_reason"] in {"stop", "length"}
    assert reply["usage"]["completion_tokens"] > 0 and reply["model"] == SMALL_MODEL

    chunks = [c async for c in backend.text_completion_stream(
        {"prompt": ["# Python\nprint(", "1, 2,"], "max_tokens": 6, "temperature": 0, "stream": True,
         "stream_options": {"include_usage": True}}
    )]
    texts = {i: "".join(c["choices"][0]["text"] for c in chunks if c["choices"] and c["choices"][0]["index"] == i)
             for i in (0, 1)}
    assert texts[0].strip() and texts[1].strip()
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0

    with pytest.raises(BackendError) as caught:
        await backend.text_completion({"prompt": "x", "echo": True})
    assert caught.value.status == 400


@pytest.mark.slow
async def test_real_model_embeddings(backend: EmbeddedBackend) -> None:
    assert (await backend.health()).extra["embeddings"] == "lazy"
    reply = await backend.embeddings({"input": ["sort a list in python", "sort a list in python",
                                                "the weather in Paris"]})
    vectors = [d["embedding"] for d in reply["data"]]
    assert all(len(v) == DIMENSIONS[SMALL_MODEL] for v in vectors)
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-3) for v in vectors)  # L2-normalised
    assert cosine(vectors[0], vectors[1]) > 0.999 > cosine(vectors[0], vectors[2])
    assert reply["usage"]["prompt_tokens"] > 0 and reply["model"] == SMALL_MODEL
    assert (await backend.health()).extra["embeddings"] == "loaded"

    packed = await backend.embeddings({"input": "sort a list in python", "encoding_format": "base64"})
    decoded = np.frombuffer(base64.b64decode(packed["data"][0]["embedding"]), dtype="<f4")
    assert np.allclose(decoded, vectors[0], atol=1e-5)

    # The chat engine still answers while the embeddings engine is loaded.
    chat = await backend.complete({"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 4})
    assert chat["choices"][0]["message"]["content"]
