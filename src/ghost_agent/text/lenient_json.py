"""Lenient JSON: every value a small model's reply holds, whatever prose or fences surround it.

Local models (Qwen2.5-Coder) wrap JSON in ```json fences, add prose around it, or return several values. This
degrades to "nothing found" rather than raising, so the caller decides between a retry and a default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

SCAN_CHARS = 32_000  # a reply longer than this is rambling; its JSON, if any, is near the start
MAX_DECODE_STARTS = 64  # bracket positions tried by the raw scan (bounds the work on bracket-heavy garbage)
_FENCE_RE = re.compile(r"```[ \t]*[A-Za-z]*[ \t]*\r?\n?(.*?)```", re.S)
_OPEN_RE = re.compile(r"[\[{]")


def iter_json(text: str) -> Iterator[Any]:
    """Every JSON value findable in `text`, most likely first: the whole text, each fenced block, then each
    bracketed value in the prose (values nested in one already yielded are not yielded again)."""
    if not isinstance(text, str):
        return
    text = text[:SCAN_CHARS]
    chunks = [text.strip()] + [m.group(1).strip() for m in _FENCE_RE.finditer(text)]
    for chunk in chunks:
        if chunk[:1] in ("[", "{"):
            try:
                yield json.loads(chunk)
            except ValueError:
                pass
    decoder = json.JSONDecoder()
    end = 0
    for n, match in enumerate(_OPEN_RE.finditer(text)):
        if n >= MAX_DECODE_STARTS:
            break
        if match.start() < end:
            continue
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        yield value


__all__ = ["MAX_DECODE_STARTS", "SCAN_CHARS", "iter_json"]
