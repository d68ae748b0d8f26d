"""Chat content parts: which kinds a request carries, and the 400 for the ones a model cannot read.

The decision (docs/openai-api.md, "Content parts"): `text` parts work everywhere. `image_url`, `input_audio` and
`file` parts are passed to a backend that may understand them (an http upstream: it decides, and its error is
relayed) on the fast path — the agent's checks read text only, so such a request never takes the agent path,
where the parts would be lost. A backend that declares what it reads (`LLMBackend.content_parts`; the embedded
model reads text only) refuses the rest with a 400 naming the part. Unknown part types are a 400 at validation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ghost_agent.llm.base import BackendError

# The part types the chat API accepts (others are refused when the request is validated).
KNOWN = ("text", "image_url", "input_audio", "file")


def parts(messages: Any) -> Iterator[tuple[int, int, str]]:
    """(message index, part index, part type) for every content part of `messages`."""
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, part in enumerate(content):
            if isinstance(part, dict):
                yield i, j, str(part.get("type"))


def has_non_text(body: Any) -> bool:
    """True when a chat body carries any part other than text."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return any(kind != "text" for _, _, kind in parts(messages))


def check(messages: Any, readable: frozenset[str] | None, model: str) -> None:
    """Raise a 400 `BackendError` for the first part `model` cannot read (`readable` None: anything goes)."""
    if readable is None:
        return
    for i, j, kind in parts(messages):
        if kind not in readable:
            can = ", ".join(sorted(readable))
            raise BackendError(
                f"messages[{i}].content[{j}] is an `{kind}` part, but {model} reads only {can} parts; send the "
                "content as text, or run the daemon against an upstream whose model accepts it (--upstream-url)",
                status=400, type="invalid_request_error", param=f"messages.{i}.content.{j}",
                code="unsupported_content_part",
            )


__all__ = ["KNOWN", "check", "has_non_text", "parts"]
