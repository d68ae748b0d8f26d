"""Drawing data that tells replies apart: a template draws again until its known-bad replies are wrong on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
TRIES = 200


def until(build: Callable[[], T | None]) -> T:
    """`build()` until it returns something; it returns None for data that cannot tell the reference from a bad
    reply (a tie, a filter that changes nothing). Deterministic: `build` draws from the task's seeded RNG."""
    for _ in range(TRIES):
        got = build()
        if got is not None:
            return got
    raise RuntimeError(f"could not draw telling data in {TRIES} tries")


__all__ = ["until"]
