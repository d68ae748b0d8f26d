"""Builders for OpenAI chat-completions wire objects, shared by every backend and the server."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from ghost_agent.jsonsafe import JSON


def completion_id() -> str:
    """A fresh `chatcmpl-…` id."""
    return "chatcmpl-" + secrets.token_hex(12)


def usage(prompt_tokens: int, completion_tokens: int) -> JSON:
    """An OpenAI `usage` object."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def token_count(usage: Any, key: str) -> int | None:
    """The integer count `key` ("prompt_tokens", …) of a response's `usage`; None when usage is not a mapping or the
    count is missing or not an integer."""
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def completion(
    *,
    model: str,
    content: str | None,
    tool_calls: list[JSON] | None = None,
    finish_reason: str = "stop",
    usage_obj: JSON | None = None,
    id: str | None = None,
) -> JSON:
    """A non-streaming `chat.completion` object with one choice."""
    message: JSON = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": id or completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": usage_obj or usage(0, 0),
    }


def chunk(
    *,
    id: str,
    model: str,
    created: int,
    delta: JSON | None = None,
    finish_reason: str | None = None,
    usage_obj: JSON | None = None,
    with_choice: bool = True,
) -> JSON:
    """A `chat.completion.chunk`; `with_choice=False` makes the final usage-only chunk (`choices: []`)."""
    out: JSON = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": (
            [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}]
            if with_choice
            else []
        ),
    }
    if usage_obj is not None:
        out["usage"] = usage_obj
    return out


def with_content(item: JSON, text: str) -> JSON:
    """A copy of the chunk `item` whose first choice's delta carries `text` as its content (no content key when
    `text` is empty); every other field, and the other choices, as they were. `item` is not changed."""
    out = dict(item)
    choice = dict(item["choices"][0])
    delta = dict(choice.get("delta") or {})
    if text:
        delta["content"] = text
    else:
        delta.pop("content", None)
    choice["delta"] = delta
    out["choices"] = [choice, *item["choices"][1:]]
    return out


def wants_usage(body: JSON) -> bool:
    """True when a streaming request asked for the final usage chunk."""
    opts = body.get("stream_options")
    return isinstance(opts, dict) and bool(opts.get("include_usage"))


MAX_TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")


def bound_max_tokens(body: JSON, limit: int | None) -> None:
    """Cap the body's `max_tokens` / `max_completion_tokens` at `limit` in place (None: leave them)."""
    if limit is None:
        return
    for name in MAX_TOKEN_FIELDS:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > limit:
            body[name] = limit


def last_user_text(body: JSON) -> str:
    """The text of the last user message (content parts joined), or ''."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
                )
    return ""


def rough_token_count(text: str) -> int:
    """A cheap token estimate (~4 chars/token) for backends that cannot count."""
    return max(1, (len(text) + 3) // 4) if text else 0


def reply_text(reply: Any) -> str:
    """The assistant text of a `chat.completion` dict ("" when missing).

    A reply that came back as native `tool_calls` instead of text is rendered as the JSON action array the
    proposal prompt asks for, so either shape yields candidates.
    """
    try:
        message = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return ""
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        actions = []
        for call in calls:
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                actions.append({"description": f"call {fn.get('name')}", "tool": fn.get("name"),
                                "args": fn.get("arguments")})
        return json.dumps(actions)
    return ""
