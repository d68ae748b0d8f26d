"""The model-priority gate: chat first, background model work only while no user request is in flight.

There is one model (on the embedded backend, literally one llama.cpp slot), and a user must never wait behind
a reflection or a narrative the daemon wrote for itself. So:

* a user request holds `user()` for its whole life (streaming included). It never waits: entering preempts
  every background model call in progress (the call's task is cancelled, which stops the embedded model at its
  next token or closes the upstream connection), so the user's request gets the model at once;
* background work runs each model call through `background(fn)`: one at a time, only while no user request
  is in flight. `wait=False` (the idle phases) fails fast with `ModelPreempted` when a user is active or
  arrives mid-call — the phase ends as "yielded" and idle time starts over anyway; `wait=True` (work a user
  request scheduled, e.g. a post-turn reflection) waits for users to leave and retries a preempted call.

Phases also check `user_active` between their steps, so CPU work yields too, not just model calls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class ModelPreempted(Exception):
    """A background model call gave way to a user request (or could not start because one was active)."""


class ModelGate:
    """Priority between user requests (high, never wait) and background model calls (low, preemptible)."""

    def __init__(self) -> None:
        self._users = 0
        self._calls: set[asyncio.Task[Any]] = set()
        self._lock: asyncio.Lock | None = None  # created lazily: it must belong to the serving loop
        self._idle: asyncio.Event | None = None
        self.preemptions = 0

    @property
    def user_active(self) -> bool:
        """True while at least one user request is in flight."""
        return self._users > 0

    @property
    def users(self) -> int:
        """User requests in flight."""
        return self._users

    @property
    def background_busy(self) -> bool:
        """True while a background model call is running."""
        return bool(self._calls)

    def _loop_objects(self) -> tuple[asyncio.Lock, asyncio.Event]:
        if self._lock is None or self._idle is None:
            self._lock = asyncio.Lock()
            self._idle = asyncio.Event()
            if self._users == 0:
                self._idle.set()
        return self._lock, self._idle

    @contextlib.contextmanager
    def user(self) -> Iterator[None]:
        """Hold high priority for one user request: background model calls in progress are cancelled."""
        self._users += 1
        if self._idle is not None:
            self._idle.clear()
        for call in list(self._calls):
            if not call.done():
                self.preemptions += 1
                call.cancel()
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0 and self._idle is not None:
                self._idle.set()

    async def background(self, fn: Callable[[], Awaitable[T]], *, wait: bool = False) -> T:
        """Run `fn()` (one model call) at low priority and return its result.

        `wait=False`: raise `ModelPreempted` if a user request is active now or arrives before the call ends.
        `wait=True`: wait until no user request is in flight, and start over after a preemption.
        Cancelling the caller cancels the call too (and waits for it).
        """
        lock, idle = self._loop_objects()
        async with lock:
            while True:
                if self._users:
                    if not wait:
                        raise ModelPreempted("a user request is in flight")
                    await idle.wait()
                    continue
                call: asyncio.Task[T] = asyncio.ensure_future(fn())
                self._calls.add(call)
                try:
                    await asyncio.wait({call})
                except asyncio.CancelledError:
                    call.cancel()
                    await asyncio.gather(call, return_exceptions=True)
                    raise
                finally:
                    self._calls.discard(call)
                if not call.cancelled():
                    return call.result()
                if not wait:
                    raise ModelPreempted("preempted by a user request")


__all__ = ["ModelGate", "ModelPreempted"]
