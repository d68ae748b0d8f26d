"""Excerpts of long text (a tool's output, a traceback) that keep both ends."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, keeping head and tail around a `[… N chars clipped …]` marker.

    The tail is kept because a traceback's last line or a command's final figure is usually what matters.
    """
    if len(text) <= limit:
        return text
    if limit < 40:  # no room for a marker and anything around it
        return text[: max(0, limit)]
    # Size the marker for the largest count it could show, so the result never exceeds `limit`.
    budget = max(0, limit - len(f"\n[… {len(text)} chars clipped …]\n"))
    head = (budget + 1) // 2
    tail = budget - head
    dropped = len(text) - head - tail
    return text[:head] + f"\n[… {dropped} chars clipped …]\n" + (text[len(text) - tail :] if tail else "")
