"""A streamed fast-path reply without a copy of the blocks the model was shown and may echo at its start.

The non-streamed paths clean the whole reply (`memory.bus.strip_notes_echo`); a stream has to decide as it
goes. The echo seen from a small model is a reply that *begins* with a block (`<ghost-notes>` … or
`<ghost-examples>` …, or a header line). So the first content is held back only while it could still be such a
start: as soon as the text (leading whitespace aside) stops being a prefix of a block's opening or header,
everything held is released unchanged and the rest passes straight through — an ordinary reply is delayed by a
few characters at most. When the text does begin with a block, chunks are held until the echoed blocks close
and something else follows (or `MAX_HELD_CHARS`, or the stream ends), and the held content is replaced by the
cleaned text; role deltas, finish reasons and usage in the held chunks are kept. A stray delimiter later in
the stream is removed from the chunk that carries it. Streams with more than one choice pass through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.memory.bus import ECHO_CLOSES, ECHO_STARTS, strip_notes_echo

MAX_HELD_CHARS = 8000  # an "echo" that never closes is released (cleaned) once this much is held
_OPENS = tuple(o for o in ECHO_STARTS if o.startswith("<"))
_HEADERS = tuple(h for h in ECHO_STARTS if not h.startswith("<"))
_PAIRS = tuple(zip(_OPENS, ECHO_CLOSES, strict=True))


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


def _after_echo(text: str) -> tuple[str, bool]:
    """What follows the complete echoed headers and blocks `text` begins with (leading whitespace dropped),
    and whether there were any. An unclosed block is left in place: it is still being echoed."""
    head, removed = text.lstrip(), False
    while True:
        header = next((h for h in _HEADERS if head.startswith(h)), None)
        if header is not None:
            head, removed = head[len(header):].lstrip(), True
            continue
        pair = next(((o, c) for o, c in _PAIRS if head.startswith(o) and c in head), None)
        if pair is None:
            return head, removed
        head, removed = head[head.index(pair[1]) + len(pair[1]):].lstrip(), True


def _could_start_echo(head: str) -> bool:
    return any(start.startswith(head) or head.startswith(start) for start in ECHO_STARTS)


def _drop_delimiters(text: str) -> str:
    for part in (*_OPENS, *ECHO_CLOSES):
        text = text.replace(part, "")
    return text


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
    """`chunks` (OpenAI chat-completion chunks) without echoed blocks at the start of the reply."""
    held: list[JSON] = []
    text = ""
    deciding = True
    async for chunk in chunks:
        if not _single_choice(chunk):
            for item in held:
                yield item
            held, deciding = [], False
            yield chunk
            continue
        content = _content(chunk)
        if not deciding:
            cleaned = _drop_delimiters(content) if content else content
            if cleaned != content:
                for item in _rewrite([chunk], cleaned or ""):
                    yield item
                continue
            yield chunk
            continue
        held.append(chunk)
        text += content or ""
        rest, removed = _after_echo(text)
        if not rest or (_could_start_echo(rest) and len(text) <= MAX_HELD_CHARS):
            continue  # nothing said yet beyond the echo, or still possibly (inside) one
        for item in _rewrite(held, strip_notes_echo(text)) if removed or _could_start_echo(rest) else held:
            yield item
        held, deciding = [], False
    if held:
        for item in _rewrite(held, strip_notes_echo(text)):
            yield item


__all__ = ["MAX_HELD_CHARS", "strip_echo_stream"]
