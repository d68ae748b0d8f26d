"""Native `tool_calls` for clients that send `tools`, whatever text the model wrote its call as (issue 14).

The fast path forwards the client's `tools`; a backend whose model emits its template's tool-call tokens
answers with real `tool_calls` and this layer only passes them on. A small local model instead writes the call
as text (fenced JSON, `<tool_call>` tags, a bare object, `f(x=1)`): `tool_call_parse` finds it, the arguments
are validated against the client's schema, one repair round asks the model to fix an invalid call, and the
reply carries the call as `tool_calls` with `finish_reason: "tool_calls"` — streamed as deltas too.
`tool_choice` is honoured: `"none"` leaves the reply alone; `"required"` or a named function gets one
follow-up asking for the call when the model answered in prose (the named function only, when named).

Streaming keeps prose streaming: text is passed through until something that may start a call appears (a
fence, `<tool_call>`, `{`, a tool's name followed by `(`); from there the rest is held, parsed at the end, and
sent as content or as `tool_calls`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncIterator
from typing import Any

from ghost_agent.agent.compat.tool_call_parse import Parsed, ParsedCall, call_from_object, parse_tool_calls, tool_names
from ghost_agent.agent.turn import Turn
from ghost_agent.agent.turn_state import ClientToolsReport
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.stream_fold import ChunkFolder
from ghost_agent.logging import get_logger

log = get_logger("agent.client_tools")

_REPAIR = (
    "Your tool call could not be used: {errors}. Reply with only the corrected call as one JSON object "
    '{{"name": "<function name>", "arguments": {{...}}}} that follows the function\'s parameter schema.'
)
_REQUIRE = (
    "Call {which} now. Reply with only the call as one JSON object "
    '{{"name": "<function name>", "arguments": {{...}}}} that follows the function\'s parameter schema.'
)


def wants_conversion(body: JSON) -> bool:
    """True when the client offered tools and did not forbid calling them."""
    return bool(tool_names(body.get("tools"))) and body.get("tool_choice") != "none"


def required_name(body: JSON) -> tuple[bool, str | None]:
    """(a call is required, the function it must be) from `tool_choice`."""
    choice = body.get("tool_choice")
    if choice == "required":
        return True, None
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return True, function["name"]
    return False, None


class ClientToolCalls:
    """Turns a fast-path reply's text calls into native `tool_calls` (non-streaming and streaming)."""

    def __init__(self, backend: LLMBackend) -> None:
        self.backend = backend

    async def convert_response(self, turn: Turn) -> None:
        """Non-streaming: rewrite `turn.response` in place when its content holds calls."""
        response = turn.response
        if not isinstance(response, dict):
            return
        choices = response.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            return
        message = choices[0].get("message") or {}
        if message.get("tool_calls"):
            turn.state.client_tools = ClientToolsReport(native=True, calls=len(message["tool_calls"]))
            return
        content = message["content"] if isinstance(message.get("content"), str) else ""
        parsed = await self.resolve(turn, content)
        if parsed is None or not parsed.calls:
            return
        message["content"] = parsed.text or None
        message["tool_calls"] = [call.wire() for call in parsed.calls]
        choices[0]["finish_reason"] = "tool_calls"

    async def resolve(self, turn: Turn, content: str) -> Parsed | None:
        """The calls in `content`, after one repair round for invalid ones and one follow-up when a call is
        required and the model answered in prose. None when nothing was call-shaped."""
        body = turn.body
        required, name = required_name(body)
        parsed = _only(parse_tool_calls(content, body.get("tools")), name)
        rounds: list[str] = []
        if parsed.errors:
            rounds.append("repair")
            fixed = _only(await self._ask(turn, content, _REPAIR.format(errors="; ".join(parsed.errors))), name)
            if fixed.calls and not fixed.errors:
                parsed = Parsed(fixed.calls, parsed.text if parsed.calls else fixed.text or parsed.text)
        if required and not parsed.calls:
            rounds.append("require")
            which = f"the function `{name}`" if name else "one of the functions you were given"
            asked = _only(await self._ask(turn, content, _REQUIRE.format(which=which)), name)
            if asked.calls:
                parsed = Parsed(asked.calls, "")
        report = ClientToolsReport(
            native=False,
            calls=len(parsed.calls),
            names=[c.name for c in parsed.calls],
            rounds=rounds,
            schema_errors=[e for c in parsed.calls for e in c.errors],
            unparsed=parsed.broken,
        )
        turn.state.client_tools = report
        if parsed.calls or rounds:
            log.info("client_tool_calls", request_id=turn.request_id, **report.to_json())
        return parsed

    async def _ask(self, turn: Turn, content: str, instruction: str) -> Parsed:
        """One more model call: the reply so far plus an instruction; its calls, parsed."""
        body = turn.body
        message = await follow_up(self.backend, turn, content, instruction)
        native = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        if native:
            return Parsed([_from_native(c, body.get("tools")) for c in native], "")
        text = message["content"] if isinstance(message.get("content"), str) else ""
        return parse_tool_calls(text, body.get("tools"))

    async def convert_stream(self, turn: Turn, chunks: AsyncIterator[JSON]) -> AsyncIterator[JSON]:
        """Streaming: pass prose through, hold what may be a call, end with content or `tool_calls` deltas."""
        tools = turn.body.get("tools")
        triggers = ["<tool_call", "<function=", "```", "{", *(f"{n}(" for n in tool_names(tools))]
        folder = ChunkFolder(str(turn.body.get("model") or ""))
        turn.state.folder = folder  # the record keeps what the client saw
        held, pending, holding, native, emitted_any, finished = "", "", False, False, False, False
        meta: JSON = {}
        async for item in chunks:
            if not meta and item.get("id"):
                meta = {"id": item["id"], "model": item.get("model", ""), "created": item.get("created", 0)}
            choices = item.get("choices") or []
            choice = choices[0] if choices and isinstance(choices[0], dict) else None
            if choice is None or native:
                folder.add(item)
                yield item
                continue
            delta = choice.get("delta") or {}
            if delta.get("tool_calls"):  # the backend makes native calls itself: pass everything on
                native = True
                if held or pending:
                    flushed = _content_chunk(meta, held + pending)
                    folder.add(flushed)
                    yield flushed
                    held = pending = ""
                folder.add(item)
                yield item
                continue
            text = delta.get("content") or ""
            finish = choice.get("finish_reason")
            if text:
                if holding:
                    held += text
                    text = ""
                else:
                    emit, rest, triggered = _split(pending + text, triggers, at_start=not emitted_any)
                    emitted_any = emitted_any or bool(emit.strip())
                    if triggered:
                        holding, held, pending = True, rest, ""
                    else:
                        pending = rest
                    text = emit
            if finish is None:
                if text or set(delta) - {"content"}:
                    out = wire.with_content(item, text)
                    folder.add(out)
                    yield out
                continue
            # The last chunk of the choice: decide what the held text is.
            before = wire.with_content(item, text)
            before["choices"][0]["finish_reason"] = None
            if text or set(delta) - {"content"}:
                folder.add(before)
                yield before
            tail = held + pending
            parsed = await self.resolve(turn, tail) if tail.strip() or required_name(turn.body)[0] else None
            if parsed is not None and parsed.calls:
                if parsed.text:
                    out = _content_chunk(meta, parsed.text)
                    folder.add(out)
                    yield out
                for index, call in enumerate(parsed.calls):
                    out = _call_chunk(meta, index, call)
                    folder.add(out)
                    yield out
                finish = "tool_calls"
            elif tail:
                out = _content_chunk(meta, tail)
                folder.add(out)
                yield out
            held = pending = ""
            finished = True
            out = _content_chunk(meta, None, finish_reason=finish)
            if item.get("usage"):
                out["usage"] = item["usage"]
            folder.add(out)
            yield out
        if not finished and (held or pending):  # a stream cut short: what was held is still the reply's text
            out = _content_chunk(meta, held + pending)
            folder.add(out)
            yield out


async def follow_up(backend: LLMBackend, turn: Turn, content: str, instruction: str) -> JSON:
    """One more non-streaming call with the client's parameters: the conversation, the reply so far, then an
    instruction as a user message. Its tokens count in the turn's usage; returns the reply's message."""
    body = copy.deepcopy(turn.body)
    body.pop("stream", None)
    body.pop("stream_options", None)
    body["messages"] = [
        *body.get("messages", []),
        {"role": "assistant", "content": content},
        {"role": "user", "content": instruction},
    ]
    reply = await backend.complete(body)
    _add_usage(turn, reply.get("usage"))
    choices = reply.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    return message if isinstance(message, dict) else {}


def _only(parsed: Parsed, name: str | None) -> Parsed:
    """Keep only calls to the named function (a named `tool_choice`)."""
    if name is None:
        return parsed
    return Parsed([c for c in parsed.calls if c.name == name], parsed.text, parsed.broken)


def _from_native(call: JSON, tools: Any) -> ParsedCall:
    function = call.get("function") or {}
    parsed = call_from_object(function, tools)
    return parsed if parsed is not None else ParsedCall(str(function.get("name", "")), {}, ["unparseable"])


def _split(text: str, triggers: list[str], *, at_start: bool) -> tuple[str, str, bool]:
    """(text safe to stream, text to keep, whether a trigger started). Keeps a tail that may begin a trigger."""
    candidates = list(triggers) + (["["] if at_start else [])
    hits = [i for i in (text.find(t) for t in candidates) if i >= 0]
    if at_start and text.lstrip()[:1] == "[":
        hits.append(len(text) - len(text.lstrip()))
    if hits:
        cut = min(hits)
        return text[:cut], text[cut:], True
    keep = 0
    for trigger in candidates:
        for size in range(min(len(trigger) - 1, len(text)), 0, -1):
            if text.endswith(trigger[:size]):
                keep = max(keep, size)
                break
    return text[: len(text) - keep], text[len(text) - keep:], False


def _content_chunk(meta: JSON, text: str | None, *, finish_reason: str | None = None) -> JSON:
    return wire.chunk(
        id=meta.get("id") or wire.completion_id(), model=meta.get("model", ""),
        created=meta.get("created") or int(time.time()),
        delta={"content": text} if text else {}, finish_reason=finish_reason,
    )


def _call_chunk(meta: JSON, index: int, call: ParsedCall) -> JSON:
    entry = call.wire()
    return wire.chunk(
        id=meta.get("id") or wire.completion_id(), model=meta.get("model", ""),
        created=meta.get("created") or int(time.time()),
        delta={"tool_calls": [{"index": index, **entry}]},
    )


def _add_usage(turn: Turn, usage: Any) -> None:
    """Count a repair round's tokens in the turn's usage."""
    if not isinstance(usage, dict) or not isinstance(turn.usage, dict):
        return
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        if isinstance(usage.get(key), int) and isinstance(turn.usage.get(key), int):
            turn.usage[key] += usage[key]
