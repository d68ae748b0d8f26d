"""Lenient JSON: every value a small model's reply holds, whatever prose or fences surround it.

Local models (Qwen2.5-Coder) wrap JSON in ```json fences, add prose around it, or return several values. This
degrades to "nothing found" rather than raising, so the caller decides between a retry and a default.

One scan serves the readers of this code base (`json_values`): the whole text, then each fenced block, then each
value embedded in the prose at an opening bracket (`scan_json`, which the form fix-up also uses alone, to get a value
as written). What differs between readers is a parameter: how a piece of text is decoded (strict JSON here in
`iter_json`; the tool loop's action reader, `agent/protocol`, also takes raw newlines in strings, trailing commas and
Python quoting), which brackets may start a value, which fences count, and how the work is bounded. The tool-call
reader (`agent/tool_call_parse`) is not one of them: a call block must be JSON from its first character on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ghost_agent.text.fences import Fence, find_fences

SCAN_CHARS = 32_000  # a reply longer than this is rambling; its JSON, if any, is near the start
MAX_DECODE_STARTS = 64  # bracket positions tried by the raw scan (bounds the work on bracket-heavy garbage)

Decode = Callable[[str], Any]  # a chunk that starts with a bracket -> its value, or None when it is not one
DecodeAt = Callable[[str, int], "tuple[Any, int] | None"]  # (value, end) of the value at a position, or None

_DECODER = json.JSONDecoder()


def decode_at(text: str, start: int) -> tuple[Any, int] | None:
    """The strict JSON value that starts at `start` and the index just past it; None when there is none."""
    try:
        return _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None


@lru_cache(maxsize=8)
def _opening(opens: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(opens)}]")


def scan_json(
    text: str,
    *,
    opens: str = "[{",
    decode: DecodeAt = decode_at,
    max_brackets: int | None = None,
    max_tries: int | None = None,
) -> Iterator[tuple[int, int, Any]]:
    """(start, end, value) of each value that `decode` finds at an opening bracket of `text` (one of `opens`), left
    to right; brackets inside a value already found are skipped. The work is bounded by `max_brackets` (the scan
    stops at that many opening brackets, skipped ones included) or `max_tries` (at that many decode attempts)."""
    end = tries = 0
    for n, match in enumerate(_opening(opens).finditer(text)):
        if max_brackets is not None and n >= max_brackets:
            break
        start = match.start()
        if start < end:
            continue
        if max_tries is not None and tries >= max_tries:
            break
        tries += 1
        found = decode(text, start)
        if found is not None:
            value, end = found
            yield start, end, value


def json_values(
    text: str,
    *,
    decode: Decode,
    decode_at: DecodeAt = decode_at,
    opens: str = "[{",
    fence: Callable[[Fence], bool] | None = None,
    max_brackets: int = MAX_DECODE_STARTS,
) -> Iterator[Any]:
    """Every JSON value findable in the first `SCAN_CHARS` of `text`, most likely first: the whole text, each fenced
    block ("same_line" fences, so ```` ```{"a": 1}``` ```` counts; `fence` may refuse some), each decoded by `decode`
    when it starts with a bracket; then each value `decode_at` finds in the prose (`scan_json`: values nested in one
    already yielded are not yielded again; the fenced values are met again there)."""
    text = text[:SCAN_CHARS]
    fenced = [f.body.strip() for f in find_fences(text, "same_line") if fence is None or fence(f)]
    for chunk in [text.strip(), *fenced]:
        if chunk[:1] in ("[", "{"):
            value = decode(chunk)
            if value is not None:
                yield value
    for _, _, value in scan_json(text, opens=opens, decode=decode_at, max_brackets=max_brackets):
        yield value


def _loads(chunk: str) -> Any:
    try:
        return json.loads(chunk)
    except ValueError:
        return None


def _letters_tag(fence: Fence) -> bool:
    return not fence.language or fence.language.isalpha()


def iter_json(text: str) -> Iterator[Any]:
    """Every strict JSON value findable in `text`, most likely first: the whole text, each fenced block, then each
    bracketed value in the prose (values nested in one already yielded are not yielded again). A fence whose tag has
    a digit, `_` or `-` (```json5) is not read as a fence (this reader has only ever taken letters as a tag); its
    value is still found in the prose."""
    if not isinstance(text, str):
        return
    yield from json_values(text, decode=_loads, fence=_letters_tag)


__all__ = [
    "MAX_DECODE_STARTS",
    "SCAN_CHARS",
    "Decode",
    "DecodeAt",
    "decode_at",
    "iter_json",
    "json_values",
    "scan_json",
]
