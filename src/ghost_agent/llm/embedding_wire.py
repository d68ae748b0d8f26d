"""The embeddings wire format (`POST /v1/embeddings`): inputs, the `list` reply, base64 vectors.

Shared by the backends that compute embeddings themselves (embedded, scripted); an upstream's reply passes
through untouched.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import numpy as np

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire

# One input as the API takes it: text, or token ids.
EmbeddingInput = str | list[int]


def inputs(value: Any) -> list[EmbeddingInput]:
    """The `input` field as a list of inputs: a string, a list of strings, a token array or a list of them.

    The server validated the shape; anything else is an empty list here.
    """
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return []
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [list(value)]
    return [v for v in value if isinstance(v, (str, list))]


def encode(vector: Sequence[float], encoding_format: str | None) -> list[float] | str:
    """A vector as the client asked for it: floats, or (`base64`) the base64 of its little-endian float32 bytes
    (what OpenAI sends, and what the `openai` SDK asks for by default)."""
    if encoding_format == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return [float(x) for x in vector]


def embedding_list(vectors: Sequence[Sequence[float]], *, model: str, prompt_tokens: int,
                   encoding_format: str | None = None) -> JSON:
    """OpenAI's embeddings reply: `{"object": "list", "data": [{"object": "embedding", "index", "embedding"}]}`."""
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": encode(v, encoding_format)} for i, v in enumerate(vectors)
        ],
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def input_tokens(item: EmbeddingInput) -> int:
    """A token count for usage: exact for token arrays, estimated for text."""
    return len(item) if isinstance(item, list) else wire.rough_token_count(item)


__all__ = ["EmbeddingInput", "embedding_list", "encode", "input_tokens", "inputs"]
