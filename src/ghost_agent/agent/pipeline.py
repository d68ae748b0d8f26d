"""The turn pipeline: an ordered list of stages, then finishers once the reply has been delivered.

Later capabilities (router, memory bus, tool loop, verifier, trajectory recording) are added as stages;
the HTTP route never changes. A stage that produces the reply sets `turn.response` (non-streaming) or
`turn.chunks` (streaming); stages after it may wrap them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from ghost_agent.agent.turn import Turn
from ghost_agent.logging import get_logger

log = get_logger("pipeline")


class Stage(Protocol):
    """One step of a turn."""

    name: str

    async def run(self, turn: Turn) -> None:
        """Advance the turn; raise `BackendError` (or `ApiError`) to fail the request."""


class Finisher(Protocol):
    """Work after the client has the whole reply (recording, learning hooks). Must not raise."""

    name: str

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        """Observe the completed (or failed) turn."""


class TurnPipeline:
    """Runs stages in order, timing each, and finishers after delivery."""

    def __init__(self, stages: Sequence[Stage], finishers: Sequence[Finisher] = ()) -> None:
        self.stages = list(stages)
        self.finishers = list(finishers)

    async def run(self, turn: Turn) -> Turn:
        """Run every stage; afterwards `turn.response` or `turn.chunks` is set."""
        for stage in self.stages:
            t0 = time.perf_counter()
            await stage.run(turn)
            turn.timings[f"stage_{stage.name}"] = (time.perf_counter() - t0) * 1000.0
        if turn.response is None and turn.chunks is None:
            raise RuntimeError("turn pipeline produced no reply: no stage set response or chunks")
        return turn

    async def finish(self, turn: Turn, error: BaseException | None = None) -> None:
        """Run the finishers; one failing is logged and never affects the others or the client."""
        for finisher in self.finishers:
            try:
                await finisher.finish(turn, error)
            except Exception as exc:  # noqa: BLE001 - finishers must never break a delivered turn
                log.error("finisher_failed", finisher=finisher.name, request_id=turn.request_id, error=repr(exc))
