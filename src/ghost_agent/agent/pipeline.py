"""The turn pipeline: an ordered list of stages, then finishers once the reply has been delivered.

Later capabilities (router, memory bus, tool loop, verifier, trajectory recording) are added as stages;
the HTTP route never changes. A stage that produces the reply sets `turn.response` (non-streaming) or
`turn.chunks` (streaming); stages after it may wrap them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from ghost_agent.agent.stages.choices import choice_error
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
    """Runs stages in order, timing each, and finishers after delivery.

    `on_finisher_error(name)` is called for every finisher that raised (the daemon counts them in /metrics:
    a failed finisher may be a lost trajectory the client never hears about).
    """

    def __init__(
        self,
        stages: Sequence[Stage],
        finishers: Sequence[Finisher] = (),
        *,
        on_finisher_error: Callable[[str], None] | None = None,
    ) -> None:
        self.stages = list(stages)
        self.finishers = list(finishers)
        self.on_finisher_error = on_finisher_error

    async def run(self, turn: Turn) -> Turn:
        """Run every stage; afterwards `turn.response` or `turn.chunks` is set."""
        for stage in self.stages:
            t0 = time.perf_counter()
            await stage.run(turn)
            turn.timings[f"stage_{stage.name}"] = (time.perf_counter() - t0) * 1000.0
        if turn.response is None and turn.chunks is None:
            raise RuntimeError("turn pipeline produced no reply: no stage set response or chunks")
        return turn

    async def finish(self, turn: Turn, error: BaseException | None = None, *, before_delivery: bool = False) -> None:
        """Run the finishers; one failing is logged, counted and never affects the others or the client.

        `before_delivery=True` runs only the finishers marked `before_delivery` (recording the trajectory): the
        route calls it for a successful reply just before its last byte goes out, so a turn the client saw
        succeed is already written when it does (a kill -9 right after cannot lose it). The later full `finish`
        skips what already ran. A turn of `n > 1` choices is finished as its choices (`turn.choices`, each its
        own turn and trajectory, with the error `agent.choices.choice_error` assigns it); a choice that never
        started is not finished.
        """
        if not turn.choices:
            await self._finish_one(turn, error, before_delivery)
            return
        for choice in turn.choices:
            if choice.state.choice is not None and choice.state.choice.started:
                await self._finish_one(choice, choice_error(choice, error), before_delivery)

    async def _finish_one(self, turn: Turn, error: BaseException | None, before_delivery: bool = False) -> None:
        for finisher in self.finishers:
            if finisher.name in turn.finished or (before_delivery and not getattr(finisher, "before_delivery", False)):
                continue
            turn.finished.add(finisher.name)
            try:
                await finisher.finish(turn, error)
            except Exception as exc:  # noqa: BLE001 - finishers must never break a delivered turn
                log.error(
                    "finisher_failed", finisher=finisher.name, request_id=turn.request_id,
                    trajectory_id=turn.trajectory_id, error=repr(exc),
                )
                if self.on_finisher_error is not None:
                    self.on_finisher_error(finisher.name)
