"""Recording a turn as a trajectory once the client has its reply (a pipeline finisher).

The record carries what the stages left in `turn.state`: the router decision, the agent's steps, the
verifier's verdict, the lessons shown (`TurnState.router_json`, `verifier_json`, `record_extra`: the shape on
disk). Outcome: the mechanical heuristics first (an abort marker, repeated tool errors → FAILED); a turn still
UNKNOWN takes a confident verifier verdict (REFUTED → FAILED, CONFIRMED → PASSED, both weighted as the agent's
own check); an agent turn that died on a backend error is FAILED.
Recording runs just before the reply's last byte is sent (`before_delivery`: a turn the client saw succeed is
on disk before it could see it) and off the event loop; a failure to record is logged, never shown to the
client. The reply is then stashed (by fingerprint) for the next turn's correction check.
"""

from __future__ import annotations

from ghost_agent.agent.checking.preferences import FOLLOWED
from ghost_agent.agent.recent import RecentTurn, RecentTurns
from ghost_agent.agent.turn import ClientDisconnected, Turn
from ghost_agent.agent.turn_state import AgentReport
from ghost_agent.feedback.outcome_heuristics import apply_chat_outcome_heuristics
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import redact_text
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Source, Trajectory

log = get_logger("record")


def reply_text(turn: Turn) -> tuple[str, list[JSON]]:
    """The assistant's text and tool calls: the agent's answer, else the completion or the folded stream."""
    final = turn.state.final_response
    if final is not None:
        return final, []
    folder = turn.state.folder
    reply = turn.response or (folder.result() if folder is not None else None)
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
    for key in ("user", "metadata"):  # the client's own labels for the request, kept with its record
        if turn.body.get(key) is not None:
            extra[key] = turn.body[key]
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
    extra.update(turn.state.record_extra())
    extra.update(turn.record_labels)
    return Trajectory(
        id=turn.trajectory_id,
        session_id=turn.session_id,
        source=Source(turn.source).value,
        cluster=turn.cluster,
        user_request=wire.last_user_text(turn.body),
        steps=list(turn.state.steps),
        final_response=content,
        outcome=Outcome.UNKNOWN,
        failure_reason=failure_reason,
        router=turn.state.router_json(),
        verifier=turn.state.verifier_json(),
        usage=turn.usage,
        timing_ms={k: round(v, 3) for k, v in turn.timings.items()},
        extra=extra,
    )


def settle_outcome(traj: Trajectory, turn: Turn, error: BaseException | None, refute_confidence: float) -> None:
    """Outcome after the heuristics: a validator's verdict (self-play) decides outright; else backend death of
    an agent turn → FAILED; else a confident verifier verdict."""
    if turn.outcome is not None:
        traj.outcome = Outcome(turn.outcome)
        traj.extra["outcome_source"] = "self"
        return
    if traj.outcome is not Outcome.UNKNOWN:
        return
    agent_turn = turn.state.route is not None and turn.state.route.agent
    if agent_turn and isinstance(error, BackendError):
        traj.outcome = Outcome.FAILED
        traj.extra["outcome_source"] = "heuristic"
        return
    verdict = traj.verifier or {}
    confidence = verdict.get("confidence")
    if not isinstance(confidence, (int, float)) or confidence < refute_confidence:
        return
    if verdict.get("verdict") == "REFUTED":
        traj.outcome = Outcome.FAILED
        traj.failure_reason = redact_text(f"verifier: {verdict.get('note') or 'refuted'}")[:500]  # redact, then cut
        traj.extra["outcome_source"] = "self"
    elif verdict.get("verdict") == "CONFIRMED":
        traj.outcome = Outcome.PASSED
        traj.extra["outcome_source"] = "self"


def follows_preference(turn: Turn) -> bool:
    """Whether this turn's reply was checked to follow the preference it was asked to (judged so, or repaired
    after it was not). Only such a reply may become the lesson's demonstration, and only once the user accepts
    it (the session's next message does not correct it). Not also "the rewrite changed it": a correcting turn's
    draft usually follows the preference already (the correction states it), and that gate stored no
    demonstration at all on the transfer run; the judge alone, blind to date formats on the 1.5B, once let an
    unchanged "December 25, 2025" through — the user's next message is what stops that."""
    agent = turn.state.agent
    applied = agent.info.preferences if isinstance(agent, AgentReport) else None
    if applied is None or applied.followed is None:
        return False
    return applied.followed >= FOLLOWED or applied.repaired is True


class RecordTrajectory:
    """Finisher: outcome heuristics and verdict, one append (redacted inside append), then the stash."""

    name = "record"
    before_delivery = True  # written before the reply's last byte: a turn the client saw succeed is on disk

    def __init__(
        self, collector: TrajectoryCollector, recent: RecentTurns | None = None, *, refute_confidence: float = 0.7
    ) -> None:
        self.collector = collector
        self.recent = recent
        self.refute_confidence = refute_confidence

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        if turn.trajectory_id is None:
            return
        traj = apply_chat_outcome_heuristics(build_trajectory(turn, error))
        settle_outcome(traj, turn, error, self.refute_confidence)
        await self.collector.aappend(traj)
        if self.recent is not None and error is None and traj.final_response:
            recent = RecentTurn(traj.id, traj.user_request, traj.session_id, tuple(turn.state.examples_ids),
                                demonstrates=turn.state.demonstrates)
            self.recent.remember(traj.final_response, recent)
            if turn.state.demonstrates is not None and follows_preference(turn):
                # accepted or not: the session's next message tells
                self.recent.hold_demonstration(turn.session_id, traj.final_response, recent)
