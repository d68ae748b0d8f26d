"""The idle clock: when did a user last ask something, and how long ago was that.

Only user requests move it (`touch`, called by the chat-request hook); phases, self-play and reflections
never do — idle time is the user's clock, and resetting it from background work would starve the deep
phases. The time source is injectable so tests move time by hand instead of sleeping.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    """A time source: `monotonic()` for idle time and cooldowns, `time()` (epoch seconds) for display."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""

    def time(self) -> float:
        """Seconds since the epoch (wall time)."""


class SystemClock:
    """The real clocks."""

    def monotonic(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()

    def time(self) -> float:
        """`time.time()`."""
        return time.time()


class ManualClock:
    """A clock that only moves when told to (tests, demos): `advance(seconds)`."""

    def __init__(self, start: float = 1_000.0, wall: float | None = None) -> None:
        # Wall time starts at the real time by default: stores stamp records with the real clock, and a
        # phase comparing ages (REM dream) must see those stamps as recent.
        self._mono = start
        self._offset = (time.time() if wall is None else wall) - start

    def monotonic(self) -> float:
        """The current manual time."""
        return self._mono

    def time(self) -> float:
        """Wall time moving in step with `monotonic`."""
        return self._mono + self._offset

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` (>= 0)."""
        if seconds < 0:
            raise ValueError("a clock never goes backwards")
        self._mono += seconds


class ActivityClock:
    """Seconds since the last user request (since startup before the first one)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.last_activity = self.clock.monotonic()
        self.requests = 0

    def touch(self) -> None:
        """A user request started or ended: idle time restarts from zero."""
        self.last_activity = self.clock.monotonic()

    def idle_s(self) -> float:
        """Seconds since the last user activity."""
        return max(0.0, self.clock.monotonic() - self.last_activity)

    def to_wall(self, mono: float) -> float:
        """A `monotonic()` reading as epoch seconds."""
        return self.clock.time() + (mono - self.clock.monotonic())

    def iso(self, mono: float | None) -> str | None:
        """A `monotonic()` reading as a UTC ISO-8601 string (None stays None)."""
        if mono is None:
            return None
        return datetime.fromtimestamp(self.to_wall(mono), timezone.utc).isoformat(timespec="seconds")


__all__ = ["ActivityClock", "Clock", "ManualClock", "SystemClock"]
