"""The hook where user chat requests enter: it moves the idle clock and holds the model gate at high priority.

A pure-ASGI middleware placed inside the auth middleware (an unauthenticated request is not activity), for the
doors user requests come through: `POST /v1/chat/completions` (fast path and agent alike), and the legacy
`/v1/completions` and `/v1/embeddings`, which run the model for a user too.
Status polls, health probes and metrics scrapes are not activity, and in-process work (phases, self-play,
reflections) never passes through here, so it can never reset the user's clock.

The clock is touched when the request starts and again when its last byte is sent (a three-minute agent turn
is activity for all three minutes); the gate is held for the whole request, streaming included, so background
model calls are preempted and stay off the model until the user is served.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ghost_agent.llm.gate import ModelGate
from ghost_agent.watchdog.clock import ActivityClock

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Every request that runs the model for a user: chat, and the legacy completions and embeddings endpoints.
USER_PATHS = frozenset({"/v1/chat/completions", "/v1/completions", "/v1/embeddings"})


class UserActivityMiddleware:
    """Touch the idle clock and hold the model gate around every user chat request."""

    def __init__(self, app: ASGIApp, activity: ActivityClock, gate: ModelGate) -> None:
        self.app = app
        self.activity = activity
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") not in USER_PATHS:
            await self.app(scope, receive, send)
            return
        self.activity.requests += 1
        self.activity.touch()
        with self.gate.user():
            try:
                await self.app(scope, receive, send)
            finally:
                self.activity.touch()


__all__ = ["USER_PATHS", "UserActivityMiddleware"]
