"""The last replies the daemon sent, in memory: what the status page's "Now" section rates and plots.

The middleware notes every chat or completion reply as it logs the request (time, latency, time to first token,
tokens); nothing is read from disk to draw "Now", so it renders at once on a home of any size. The ring holds the
last `CAPACITY` replies; rates are over the last `WINDOW_S` seconds.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire

CAPACITY = 2048
WINDOW_S = 300.0
LAST = 30  # replies plotted


@dataclass(frozen=True)
class Reply:
    at: float  # epoch seconds
    ms: float
    ttft_ms: float | None
    prompt_tokens: int
    completion_tokens: int
    path: str

    @property
    def tokens_per_s(self) -> float | None:
        """Completion tokens over the generation time (after the first token when it is known)."""
        generating = self.ms - (self.ttft_ms or 0.0)
        if self.completion_tokens <= 0 or generating <= 0:
            return None
        return self.completion_tokens / (generating / 1000.0)


class RecentReplies:
    """A bounded, thread-safe ring of replies."""

    def __init__(self, capacity: int = CAPACITY, clock: Callable[[], float] = time.time) -> None:
        self._ring: deque[Reply] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._clock = clock

    def note(self, *, ms: float, ttft_ms: float | None, usage: object, path: str) -> None:
        reply = Reply(self._clock(), ms, ttft_ms, wire.token_count(usage, "prompt_tokens") or 0,
                      wire.token_count(usage, "completion_tokens") or 0, path)
        with self._lock:
            self._ring.append(reply)

    def figures(self) -> JSON:
        """Requests and tokens per minute over the window, and the last replies' tokens/s and latency."""
        now = self._clock()
        with self._lock:
            replies = list(self._ring)
        recent = [r for r in replies if now - r.at <= WINDOW_S]
        minutes = WINDOW_S / 60.0
        last = replies[-LAST:]
        return {
            "window_s": WINDOW_S,
            "requests_per_min": round(len(recent) / minutes, 2),
            "tokens_per_min": round(sum(r.prompt_tokens + r.completion_tokens for r in recent) / minutes, 1),
            "replies": [{"at": round(r.at, 3), "ms": round(r.ms, 1), "tokens_per_s":
                         None if r.tokens_per_s is None else round(r.tokens_per_s, 2),
                         "completion_tokens": r.completion_tokens} for r in last],
        }


__all__ = ["RecentReplies", "Reply"]
