"""Folding a streamed chat completion back into a non-streaming one."""

from __future__ import annotations

import secrets
import time
from typing import Any

from ghost_agent.jsonsafe import JSON


class ChunkFolder:
    """Folds a stream of `chat.completion.chunk` dicts into the one `chat.completion` it amounts to.

    Content and reasoning are concatenated, tool calls reassembled by index (ids, names and argument
    pieces), and usage / finish reason / timings taken from whichever chunk carried them.
    """

    def __init__(self, served_name: str) -> None:
        self._served_name = served_name
        self._meta: JSON = {}
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._tool_calls: dict[int, JSON] = {}
        self._logprobs: list[Any] = []
        self._finish_reason: str | None = None
        self._usage: JSON | None = None
        self._timings: JSON | None = None

    def add(self, chunk: JSON) -> None:
        """Take in one chunk."""
        if not self._meta:
            self._meta = {k: chunk[k] for k in ("id", "created", "system_fingerprint") if k in chunk}
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        if chunk.get("timings"):
            self._timings = chunk["timings"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self._content.append(delta["content"])
            if delta.get("reasoning_content"):
                self._reasoning.append(delta["reasoning_content"])
            for call in delta.get("tool_calls") or []:
                self._add_tool_call(call)
            logprobs = choice.get("logprobs")
            if logprobs and logprobs.get("content"):
                self._logprobs.extend(logprobs["content"])
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]

    def _add_tool_call(self, call: JSON) -> None:
        index = int(call.get("index", len(self._tool_calls)))
        slot = self._tool_calls.setdefault(
            index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if call.get("id"):
            slot["id"] = call["id"]
        if call.get("type"):
            slot["type"] = call["type"]
        function = call.get("function") or {}
        if function.get("name"):
            slot["function"]["name"] += function["name"]
        if function.get("arguments"):
            slot["function"]["arguments"] += function["arguments"]

    def result(self) -> JSON:
        """The assembled `chat.completion`."""
        message: JSON = {"role": "assistant", "content": "".join(self._content)}
        if self._reasoning:
            message["reasoning_content"] = "".join(self._reasoning)
        if self._tool_calls:
            message["tool_calls"] = [self._tool_calls[i] for i in sorted(self._tool_calls)]
            if not self._content:
                message["content"] = None
        choice: JSON = {"index": 0, "message": message, "finish_reason": self._finish_reason or "stop"}
        if self._logprobs:
            choice["logprobs"] = {"content": self._logprobs}
        out: JSON = {
            "id": self._meta.get("id") or f"chatcmpl-{secrets.token_hex(12)}",
            "object": "chat.completion",
            "created": self._meta.get("created") or int(time.time()),
            "model": self._served_name,
            "choices": [choice],
            "usage": self._usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        if "system_fingerprint" in self._meta:
            out["system_fingerprint"] = self._meta["system_fingerprint"]
        if self._timings:
            out["timings"] = self._timings
        return out
