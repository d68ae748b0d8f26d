"""Recently answered turns, keyed by a fingerprint of the reply, for the next turn's correction check.

When the user's next message is a correction ("no, …" + a rephrase), the client sends our previous reply back
as the assistant message; fingerprinting it finds the trajectory that reply came from without any session
state on the client's side (seed 001, "Real-time loop closure"). Bounded LRU: enough for several concurrent
conversations, never unbounded growth.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

FINGERPRINT_CHARS = 500
DEFAULT_CAPACITY = 32
_WS = re.compile(r"\s+")


def reply_fingerprint(text: str) -> str:
    """md5 of the whitespace-collapsed, lowercased first 500 characters of a reply ('' for an empty reply)."""
    normalized = _WS.sub(" ", text or "").strip().lower()[:FINGERPRINT_CHARS]
    return hashlib.md5(normalized.encode("utf-8", "surrogatepass")).hexdigest() if normalized else ""


@dataclass(frozen=True)
class RecentTurn:
    """What the correction check needs about an answered turn."""

    trajectory_id: str
    user_request: str
    session_id: str
    examples: tuple[str, ...] = ()  # the worked examples it was shown: a correction demotes them
    # a reply to a correction that stated a preference: (the corrected turn's id, the request it was about); if the
    # next message does not correct this reply too, the pair becomes the lesson's demonstration
    demonstrates: tuple[str, str] | None = None


class RecentTurns:
    """A thread-safe LRU of fingerprint → RecentTurn (capacity 32 by default)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = max(1, capacity)
        self._items: OrderedDict[str, RecentTurn] = OrderedDict()
        self._pending: OrderedDict[str, tuple[str, RecentTurn]] = OrderedDict()
        self._lock = threading.Lock()

    def hold_demonstration(self, session: str, reply: str, turn: RecentTurn) -> None:
        """Hold `turn` (a reply to a correction that stated a preference) until the session's next message says
        whether the user accepted it; one per session, the newest."""
        with self._lock:
            self._pending[session] = (reply, turn)
            self._pending.move_to_end(session)
            while len(self._pending) > self.capacity:
                self._pending.popitem(last=False)

    def take_demonstration(self, session: str) -> tuple[str, RecentTurn] | None:
        """The (reply, turn) held for `session`, removed; None when none is held."""
        with self._lock:
            return self._pending.pop(session, None)

    def remember(self, reply: str, turn: RecentTurn) -> None:
        """Stash a turn under its reply's fingerprint (an empty reply is not stashed)."""
        key = reply_fingerprint(reply)
        if not key:
            return
        with self._lock:
            self._items[key] = turn
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def pop(self, reply: str) -> RecentTurn | None:
        """Take the turn that produced `reply` (one promotion per stashed turn), or None."""
        key = reply_fingerprint(reply)
        with self._lock:
            return self._items.pop(key, None) if key else None

    def peek(self, reply: str) -> RecentTurn | None:
        """The turn that produced `reply`, leaving it stashed."""
        key = reply_fingerprint(reply)
        with self._lock:
            return self._items.get(key) if key else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
