"""Recording a turn as a trajectory once the client has its reply (a pipeline finisher).

Today every turn is the fast path (one backend call, zero steps); the agent-turn stages will add steps,
router and verifier fields to `turn.state` and this finisher writes whatever the turn carries. Recording
happens after delivery and off the event loop; a failure to record is logged, never shown to the client.
"""

from __future__ import annotations

from typing import Any

from ghost_agent.agent.turn import ClientDisconnected, Turn
from ghost_agent.distill.collector import TrajectoryCollector
from ghost_agent.distill.outcome_heuristics import apply_chat_outcome_heuristics
from ghost_agent.distill.trajectory import Outcome, Source, Step, Trajectory
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError
from ghost_agent.llm.stream_fold import ChunkFolder
from ghost_agent.logging import get_logger

log = get_logger("record")

JSON = dict[str, Any]


def reply_text(turn: Turn) -> tuple[str, list[JSON]]:
    """The assistant's text and tool calls, from the completion or the folded stream."""
    folder = turn.state.get("folder")
    reply = turn.response or (folder.result() if isinstance(folder, ChunkFolder) else None)
    if not isinstance(reply, dict):
        return "", []
    choices = reply.get("choices") or [{}]
    message = choices[0].get("message") or {} if isinstance(choices[0], dict) else {}
    content = message.get("content")
    calls = message.get("tool_calls") or []
    return (content if isinstance(content, str) else ""), [c for c in calls if isinstance(c, dict)]


def build_trajectory(turn: Turn, error: BaseException | None) -> Trajectory:
    """The `ghost.trajectory.v1` record of a finished (or failed) turn."""
    assert turn.trajectory_id is not None
    content, tool_calls = reply_text(turn)
    extra: JSON = {
        "request_id": turn.request_id,
        "model": turn.body.get("model"),
        "stream": turn.stream,
        "messages": len(turn.body.get("messages") or []),
    }
    if tool_calls:
        extra["client_tool_calls"] = tool_calls  # the client runs these tools, not us
    failure_reason = None
    if isinstance(error, BackendError):
        extra["backend_error"] = {"status": error.status, "message": error.message}
        failure_reason = f"backend error {error.status}: {error.message}"
    elif isinstance(error, ClientDisconnected):
        extra["client_disconnected"] = True
    elif error is not None:
        extra["error"] = repr(error)
    steps = [s if isinstance(s, Step) else Step.from_dict(s) for s in turn.state.get("steps", [])]
    return Trajectory(
        id=turn.trajectory_id,
        session_id=turn.session_id,
        source=Source.CHAT.value,
        user_request=wire.last_user_text(turn.body),
        steps=steps,
        final_response=content,
        outcome=Outcome.UNKNOWN,
        failure_reason=failure_reason,
        router=turn.state.get("router") or {"decision": "fast", "p": None, "model": None, "reason": "passthrough"},
        usage=turn.usage,
        timing_ms={k: round(v, 3) for k, v in turn.timings.items()},
        extra=extra,
    )


class RecordTrajectory:
    """Finisher: outcome heuristics, then one append to the trajectory store (redacted inside append)."""

    name = "record"

    def __init__(self, collector: TrajectoryCollector) -> None:
        self.collector = collector

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        if turn.trajectory_id is None:
            return
        traj = apply_chat_outcome_heuristics(build_trajectory(turn, error))
        await self.collector.aappend(traj)
