"""The state one chat request carries through the stage pipeline."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from ghost_agent.agent.turn_state import TurnState
from ghost_agent.jsonsafe import JSON


class ClientDisconnected(Exception):
    """The client closed the connection before the reply was complete."""


@dataclass
class Turn:
    """One request's journey: the client's body in, a completion (or a chunk stream) out.

    Stages read and write these fields; nothing else is shared between them. `timings` holds milliseconds
    per named phase (`queue`, `ttft`, `total`, one per stage) and is what the `request` log event reports;
    `state` holds what the stages hand on to each other and to the record (`agent/turn_state.py`).
    """

    body: JSON
    stream: bool = False
    include_usage: bool = False
    request_id: str = field(default_factory=lambda: secrets.token_hex(16))
    session_id: str = "default"
    trajectory_id: str | None = None
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    response: JSON | None = None
    chunks: AsyncIterator[JSON] | None = None
    usage: JSON | None = None
    finish_reason: str | None = None
    state: TurnState = field(default_factory=TurnState)
    # `n > 1`: the reply is n independent choices, each run as its own turn (`agent/stages/choices.py`).
    n: int = 1
    choices: list[Turn] = field(default_factory=list)
    # The finishers that already ran on this turn (`TurnPipeline.finish`: the recording one before the last byte,
    # the rest after delivery): each runs once however often the turn is finished.
    finished: set[str] = field(default_factory=set)
    # Who asked: a client ("chat"), or the daemon itself practising ("self_play"), whose turn is graded by a
    # validator: the record then takes its `cluster`, `outcome` ("passed" / "failed", weighted as the agent's own
    # check) and `record_labels` (merged into the trajectory's `extra`) as they are.
    source: str = "chat"
    cluster: str | None = None
    outcome: str | None = None
    record_labels: JSON = field(default_factory=dict)
    # Worked examples from the experience bank may be shown to this turn (a bench or a practice turn switches
    # them off to measure without them).
    show_examples: bool = True

    def elapsed_ms(self) -> float:
        """Milliseconds since the turn started."""
        return (time.perf_counter() - self.started) * 1000.0
