"""Pydantic models of the legacy `POST /v1/completions` (request validated, reply documented)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from ghost_agent.server.chat.protocol import StreamOptions, Usage
from ghost_agent.server.inputs import MAX_ITEMS, TEXT_OR_TOKENS_SCHEMA, text_or_tokens, writable
from ghost_agent.server.protocol_common import JsonInt, OpenModel, integral

MAX_PROMPTS = MAX_ITEMS


class CompletionRequest(OpenModel):
    """`POST /v1/completions` body. Unknown fields pass through to the backend."""

    prompt: Any = Field(
        json_schema_extra=TEXT_OR_TOKENS_SCHEMA,
        description="A string, an array of strings, an array of token ids or an array of token arrays (each one "
        "prompt; its choices come back prompt by prompt)."
    )
    model: str | None = Field(default=None, description="Replaced as on /v1/chat/completions (docs/openai-api.md).")
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    max_tokens: Annotated[int, Field(ge=0), BeforeValidator(integral)] | None = Field(
        default=None, description="Default: 16 on the embedded model (OpenAI's default); an upstream's own otherwise.",
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: Annotated[int, Field(ge=1, le=16), BeforeValidator(integral)] | None = None
    stop: str | list[str] | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    seed: JsonInt | None = None
    echo: bool | None = Field(default=None, description="Forwarded to an upstream; the embedded model refuses it.")
    logprobs: Annotated[int, Field(ge=0, le=5), BeforeValidator(integral)] | None = Field(
        default=None, description="Forwarded to an upstream; the embedded model refuses it.",
    )
    best_of: Annotated[int, Field(ge=1, le=20), BeforeValidator(integral)] | None = None
    suffix: str | None = None
    logit_bias: dict[str, float] | None = None
    user: str | None = None

    @field_validator("prompt", mode="plain")
    @classmethod
    def _prompt(cls, value: Any) -> Any:
        return text_or_tokens(value, "prompt", max_items=MAX_PROMPTS)

    @model_validator(mode="before")
    @classmethod
    def _writable(cls, data: Any) -> Any:
        return writable(data)


class TextChoice(OpenModel):
    index: int
    text: str
    logprobs: Any = None
    finish_reason: str | None = None


class Completion(OpenModel):
    """A non-streaming reply (`object: text_completion`); streamed, each event is the same shape with a piece of
    `text` per choice."""

    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    choices: list[TextChoice]
    usage: Usage | None = None


class CompletionChunk(Completion):
    """One server-sent event of a streamed legacy completion."""


__all__ = ["Completion", "CompletionChunk", "CompletionRequest", "TextChoice"]
