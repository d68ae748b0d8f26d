"""A deterministic backend scripted turn by turn, recording every request it receives.

Tests and demos enqueue replies (text, tool calls, delays, errors, chunking) and assert on what was sent.
When the script runs out the backend falls back to `default`: `"echo"` answers with the last user message,
`"error"` fails with a 500 so a test notices an unexpected extra call.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import embedding_wire, text_completion, wire
from ghost_agent.llm.base import BackendError, BackendHealth, LLMBackend


@dataclass
class ScriptedReply:
    """One scripted model turn.

    `error=(status, message)` fails the call with that status (`retry_after` seconds ride along, as a busy
    backend's 503 carries them). `delay_s` elapses before the first byte, `chunk_delay_s` between streamed
    chunks; content streams `chunk_size` characters at a time and each tool call streams its arguments in
    pieces (as real servers do). `fail_after_chunks` breaks a stream midway.
    """

    content: str | None = None
    tool_calls: list[JSON] | None = None
    finish_reason: str | None = None
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    chunk_size: int = 8
    error: tuple[int, str] | None = None
    retry_after: float | None = None
    fail_after_chunks: int | None = None
    usage: JSON | None = None

    @classmethod
    def from_dict(cls, data: JSON) -> ScriptedReply:
        """Build from a JSON object (the fake server's `/_script` body); unknown keys are an error."""
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown ScriptedReply fields: {sorted(unknown)}")
        data = dict(data)
        if data.get("error") is not None:
            status, message = data["error"]
            data["error"] = (int(status), str(message))
        return cls(**data)


def tool_call(name: str, arguments: str, id: str | None = None) -> JSON:
    """An OpenAI `tool_calls` entry."""
    return {"id": id or f"call_{name}", "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class ScriptedBackend(LLMBackend):
    """An in-memory LLM whose replies are scripted; `requests` holds every body it was called with."""

    replies: Iterable[ScriptedReply] = ()
    default: str = "echo"
    model: str = "scripted"
    requests: list[JSON] = field(default_factory=list)
    kind: str = "scripted"
    # Calls abandoned by the caller (client disconnect), streaming or not: tests assert cancellation
    # reached us.
    cancelled: int = 0

    def __post_init__(self) -> None:
        self._queue: deque[ScriptedReply] = deque(self.replies)

    def enqueue(self, *replies: ScriptedReply) -> None:
        """Append replies to the script."""
        self._queue.extend(replies)

    def reset(self) -> None:
        """Drop the remaining script and the recorded requests."""
        self._queue.clear()
        self.requests.clear()

    @property
    def pending(self) -> int:
        """Replies not yet consumed."""
        return len(self._queue)

    def _next(self, body: JSON) -> ScriptedReply:
        self.requests.append(body)
        if self._queue:
            return self._queue.popleft()
        if self.default == "echo":
            return ScriptedReply(content=wire.last_user_text(body))
        return ScriptedReply(error=(500, "scripted backend: script exhausted"))

    def _usage(self, body: JSON, reply: ScriptedReply) -> JSON:
        if reply.usage is not None:
            return reply.usage
        prompt = sum(wire.rough_token_count(str(m.get("content") or "")) for m in body.get("messages") or [])
        return wire.usage(prompt, wire.rough_token_count(reply.content or ""))

    @staticmethod
    def _raise(reply: ScriptedReply) -> None:
        if reply.error is not None:
            status, message = reply.error
            raise BackendError(message, status=status, type="scripted_error", retry_after=reply.retry_after)

    @staticmethod
    def _finish(reply: ScriptedReply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    async def complete(self, body: JSON) -> JSON:
        reply = self._next(body)
        if reply.delay_s:
            try:
                await asyncio.sleep(reply.delay_s)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        self._raise(reply)
        out = wire.completion(
            model=self.model,
            content=reply.content,
            tool_calls=reply.tool_calls,
            finish_reason=self._finish(reply),
            usage_obj=self._usage(body, reply),
        )
        if body.get("logprobs") and reply.content:
            # One entry per whitespace-separated piece, as a real server gives one per token.
            out["choices"][0]["logprobs"] = {
                "content": [{"token": t, "logprob": -0.5, "bytes": list(t.encode()), "top_logprobs": []}
                            for t in reply.content.split(" ")]
            }
        return out

    async def stream(self, body: JSON) -> AsyncIterator[JSON]:
        reply = self._next(body)
        cid, created = wire.completion_id(), int(time.time())
        pieces = list(self._deltas(reply))
        try:
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            self._raise(reply)
            for n, delta in enumerate(pieces):
                if reply.fail_after_chunks is not None and n >= reply.fail_after_chunks:
                    raise BackendError("scripted backend: stream broken on purpose", status=502)
                if n and reply.chunk_delay_s:
                    await asyncio.sleep(reply.chunk_delay_s)
                yield wire.chunk(id=cid, model=self.model, created=created, delta=delta)
            yield wire.chunk(id=cid, model=self.model, created=created, finish_reason=self._finish(reply))
            if wire.wants_usage(body):
                yield wire.chunk(
                    id=cid, model=self.model, created=created, usage_obj=self._usage(body, reply), with_choice=False
                )
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled += 1
            raise

    @staticmethod
    def _deltas(reply: ScriptedReply) -> Iterable[JSON]:
        size = max(1, reply.chunk_size)
        yield {"role": "assistant", "content": ""}
        text = reply.content or ""
        for start in range(0, len(text), size):
            yield {"content": text[start : start + size]}
        for index, call in enumerate(reply.tool_calls or []):
            fn = call.get("function", {})
            args = str(fn.get("arguments", ""))
            yield {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call.get("id"),
                        "type": "function",
                        "function": {"name": fn.get("name"), "arguments": ""},
                    }
                ]
            }
            for start in range(0, len(args), size):
                yield {"tool_calls": [{"index": index, "function": {"arguments": args[start : start + size]}}]}

    async def health(self) -> BackendHealth:
        return BackendHealth(kind=self.kind, reachable=True, model_loaded=True, detail="scripted")

    async def list_models(self) -> list[str]:
        return [self.model]

    # -- the rest of the API: deterministic, recorded like chat requests --------------------------------

    async def embeddings(self, body: JSON) -> JSON:
        """A unit vector per input derived from its hash (`dimensions` long up to 256, default 16): equal inputs
        give equal vectors. A scripted reply's `error` applies; its content is ignored."""
        self.requests.append(body)
        if self._queue and self._queue[0].error is not None:
            self._raise(self._queue.popleft())
        items = embedding_wire.inputs(body.get("input"))
        size = min(int(body.get("dimensions") or EMBEDDING_DIMENSIONS), 256)  # a fake: small vectors
        vectors = [_hash_vector(item, size) for item in items]
        return embedding_wire.embedding_list(
            vectors, model=self.model, prompt_tokens=sum(embedding_wire.input_tokens(i) for i in items),
            encoding_format=body.get("encoding_format"),
        )

    def _text_replies(self, body: JSON) -> list[tuple[text_completion.Prompt, ScriptedReply]]:
        """Record the request once; one scripted reply per prompt (the echo default: the prompt itself)."""
        self.requests.append(body)
        out = []
        for prompt in text_completion.prompts(body.get("prompt")):
            if self._queue:
                reply = self._queue.popleft()
            elif self.default == "echo":
                reply = ScriptedReply(content=prompt if isinstance(prompt, str) else " ".join(map(str, prompt)))
            else:
                reply = ScriptedReply(error=(500, "scripted backend: script exhausted"))
            out.append((prompt, reply))
        return out

    async def text_completion(self, body: JSON) -> JSON:
        """Legacy completions: one scripted reply per prompt (echo default: the prompt itself)."""
        choices, usage = [], None
        for index, (prompt, reply) in enumerate(self._text_replies(body)):
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            self._raise(reply)
            text = reply.content or ""
            choices.append(text_completion.choice(index, text, reply.finish_reason or "stop"))
            usage = text_completion.add_usage(usage, _text_usage(prompt, text, reply))
        return text_completion.text_completion(model=self.model, choices=choices, usage_obj=usage)

    async def text_completion_stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Legacy completions streamed `chunk_size` characters at a time, prompt after prompt."""
        cid, created = text_completion.completion_id(), int(time.time())
        usage = None
        for index, (prompt, reply) in enumerate(self._text_replies(body)):
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            self._raise(reply)
            text, size = reply.content or "", max(1, reply.chunk_size)
            for start in range(0, len(text), size):
                if start and reply.chunk_delay_s:
                    await asyncio.sleep(reply.chunk_delay_s)
                piece = text_completion.choice(index, text[start : start + size], None)
                yield text_completion.text_chunk(id=cid, model=self.model, created=created, choices=[piece])
            done = text_completion.choice(index, "", reply.finish_reason or "stop")
            yield text_completion.text_chunk(id=cid, model=self.model, created=created, choices=[done])
            usage = text_completion.add_usage(usage, _text_usage(prompt, text, reply))
        if wire.wants_usage(body):
            yield text_completion.text_chunk(id=cid, model=self.model, created=created, choices=[], usage_obj=usage)


EMBEDDING_DIMENSIONS = 16


def _hash_vector(item: embedding_wire.EmbeddingInput, size: int) -> list[float]:
    seed = hashlib.sha256(repr(item).encode()).digest()
    values = [((seed[i % len(seed)] + 7 * i) % 251) / 125.0 - 1.0 for i in range(size)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _text_usage(prompt: text_completion.Prompt, text: str, reply: ScriptedReply) -> JSON:
    if reply.usage is not None:
        return reply.usage
    tokens = len(prompt) if isinstance(prompt, list) else wire.rough_token_count(prompt)
    return wire.usage(tokens, wire.rough_token_count(text))
