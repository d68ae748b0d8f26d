"""A streamed fast-path reply without a copy of the notes block the model may echo at its start.

The non-streamed paths clean the whole reply (`memory.bus.strip_notes_echo`); a stream has to decide as it
goes. The echo seen from a small model is a reply that *begins* with the block (`<ghost-notes>` …, or the
header line). So the first content is held back only while it could still be such a start: as soon as the
text (leading whitespace aside) stops being a prefix of the block's opening, everything held is released
unchanged and the rest passes straight through — an ordinary reply is delayed by a few characters at most.
When the text does begin with the block, chunks are held until the block closes (or `MAX_HELD_CHARS`, or the
stream ends), and the held content is replaced by the cleaned text; role deltas, finish reasons and usage in
the held chunks are kept. A stray delimiter later in the stream is removed from the chunk that carries it.
Streams with more than one choice pass through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.memory.bus import CLOSE, HEADER, OPEN, strip_notes_echo

MAX_HELD_CHARS = 8000  # an "echo" that never closes is released (cleaned) once this much is held
_STARTS = (OPEN, HEADER)


def _content(chunk: JSON) -> str | None:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    delta = choices[0].get("delta")
    content = delta.get("content") if isinstance(delta, dict) else None
    return content if isinstance(content, str) else None


def _single_choice(chunk: JSON) -> bool:
    choices = chunk.get("choices")
    return not choices or (isinstance(choices, list) and all(
        isinstance(c, dict) and c.get("index", 0) == 0 for c in choices))


def _could_start_echo(text: str) -> bool:
    head = text.lstrip()
    return any(start.startswith(head) or head.startswith(start) for start in _STARTS)


def _rewrite(held: list[JSON], text: str) -> list[JSON]:
    """`held` with their content replaced by `text` (in the first content chunk; the others lose theirs, and a
    chunk left with nothing to say — no delta, finish reason or usage — is dropped)."""
    out: list[JSON] = []
    placed = False
    for chunk in held:
        if _content(chunk) is None:
            out.append(chunk)
            continue
        fixed = wire.with_content(chunk, "" if placed else text)
        placed = placed or bool(text)
        choice = fixed["choices"][0]
        if choice["delta"] or choice.get("finish_reason") or fixed.get("usage"):
            out.append(fixed)
    return out


async def strip_echo_stream(chunks: AsyncIterator[JSON]) -> AsyncIterator[JSON]:
    """`chunks` (OpenAI chat-completion chunks) without an echoed notes block at the start of the reply."""
    held: list[JSON] = []
    text = ""
    deciding = True
    trim = False  # after a removed block: drop the blank lines that separated it from the reply
    async for chunk in chunks:
        if not _single_choice(chunk):
            for item in held:
                yield item
            held, deciding = [], False
            yield chunk
            continue
        content = _content(chunk)
        if not deciding:
            cleaned = content.replace(OPEN, "").replace(CLOSE, "") if content else content
            if trim and cleaned is not None:
                cleaned, trim = cleaned.lstrip(), not cleaned.strip()
            if cleaned != content:
                for item in _rewrite([chunk], cleaned or ""):
                    yield item
                continue
            yield chunk
            continue
        held.append(chunk)
        text += content or ""
        if not text.strip():
            continue
        if not _could_start_echo(text):
            for item in held:
                yield item
            held, deciding = [], False
            continue
        if CLOSE in text or len(text) > MAX_HELD_CHARS:  # the echoed block is complete (or never closes)
            cleaned = strip_notes_echo(text)
            for item in _rewrite(held, cleaned):
                yield item
            held, deciding, trim = [], False, not cleaned
    if held:
        for item in _rewrite(held, strip_notes_echo(text)):
            yield item


__all__ = ["MAX_HELD_CHARS", "strip_echo_stream"]
