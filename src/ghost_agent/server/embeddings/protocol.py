"""Pydantic models of `POST /v1/embeddings` (request validated, reply documented)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, field_validator, model_validator

from ghost_agent.server.inputs import MAX_ITEMS, TEXT_OR_TOKENS_SCHEMA, text_or_tokens, writable
from ghost_agent.server.protocol_common import OpenModel, integral

# OpenAI's own limit on inputs per request.
MAX_INPUTS = MAX_ITEMS
# Larger than any embedding model's vectors (OpenAI's largest: 3072).
MAX_DIMENSIONS = 8192


class EmbeddingRequest(OpenModel):
    """`POST /v1/embeddings` body. Unknown fields pass through to an upstream."""

    input: Any = Field(
        json_schema_extra=TEXT_OR_TOKENS_SCHEMA,
        description="A string, an array of strings, an array of token ids or an array of token arrays "
        f"(at most {MAX_INPUTS} entries, none empty).",
    )
    model: str | None = Field(
        default=None,
        description="The advertised model (or none) is served by the daemon's model; another name is passed to "
        "an upstream as is (its own embedding model).",
    )
    encoding_format: Literal["float", "base64"] | None = None
    dimensions: Annotated[int, Field(ge=1, le=MAX_DIMENSIONS), BeforeValidator(integral)] | None = Field(
        default=None, description="Forwarded to an upstream; the embedded model has one size and refuses others.",
    )
    user: str | None = None

    @field_validator("input", mode="plain")
    @classmethod
    def _input(cls, value: Any) -> Any:
        return text_or_tokens(value, "input", max_items=MAX_INPUTS)

    @model_validator(mode="before")
    @classmethod
    def _writable(cls, data: Any) -> Any:
        return writable(data)


class Embedding(BaseModel):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str = Field(description="Floats, or with `encoding_format: base64` the base64 of "
                                         "the little-endian float32 values.")


class EmbeddingUsage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingList(OpenModel):
    """The reply: one embedding per input, in input order."""

    object: Literal["list"] = "list"
    data: list[Embedding]
    model: str
    usage: EmbeddingUsage | None = None
