"""Builders and a folder for the legacy completions wire format (`POST /v1/completions`, `text_completion`).

Shared by the backends that produce it themselves (embedded, scripted); an http upstream's objects pass through.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire

# A prompt as the API takes it: text, or token ids.
Prompt = str | list[int]


def completion_id() -> str:
    """A fresh `cmpl-…` id."""
    return "cmpl-" + secrets.token_hex(12)


def prompts(value: Any) -> list[Prompt]:
    """The `prompt` field as a list of prompts: a string, a list of strings, a token array or a list of them.

    The server validated the shape; anything else is an empty list here.
    """
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return []
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [list(value)]
    return [v for v in value if isinstance(v, (str, list))]


def choice(index: int, text: str, finish_reason: str | None, logprobs: Any = None) -> JSON:
    """One `choices[i]` of a `text_completion`."""
    return {"index": index, "text": text, "logprobs": logprobs, "finish_reason": finish_reason}


def text_completion(*, model: str, choices: list[JSON], usage_obj: JSON | None = None, id: str | None = None,
                    created: int | None = None) -> JSON:
    """A non-streaming `text_completion` object."""
    return {
        "id": id or completion_id(),
        "object": "text_completion",
        "created": created or int(time.time()),
        "model": model,
        "choices": choices,
        "usage": usage_obj or wire.usage(0, 0),
    }


def text_chunk(*, id: str, model: str, created: int, choices: list[JSON], usage_obj: JSON | None = None) -> JSON:
    """One streamed `text_completion` event (`choices: []` with `usage` for the final usage chunk)."""
    out: JSON = {"id": id, "object": "text_completion", "created": created, "model": model, "choices": choices}
    if usage_obj is not None:
        out["usage"] = usage_obj
    return out


def add_usage(total: JSON | None, usage: Any) -> JSON | None:
    """`total` plus one generation's `usage` (either may be missing)."""
    if not isinstance(usage, dict):
        return total
    prompt = int(usage.get("prompt_tokens") or 0) + int((total or {}).get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0) + int((total or {}).get("completion_tokens") or 0)
    return wire.usage(prompt, completion)


class TextFolder:
    """Folds one generation's stream of `text_completion` chunks into its text, finish reason and usage."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: JSON | None = None
        self.id: str | None = None
        self.created: int | None = None

    def add(self, chunk: JSON) -> None:
        """Take in one chunk (llama.cpp's or ours)."""
        self.id = self.id or chunk.get("id")
        self.created = self.created or chunk.get("created")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for item in chunk.get("choices") or ():
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("text"), str):
                self.parts.append(item["text"])
            if item.get("finish_reason"):
                self.finish_reason = item["finish_reason"]

    @property
    def text(self) -> str:
        """The generated text so far."""
        return "".join(self.parts)


__all__ = [
    "Prompt", "TextFolder", "add_usage", "choice", "completion_id", "prompts", "text_chunk", "text_completion",
]
