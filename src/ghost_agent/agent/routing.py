"""The router stage (DESIGN §4 step 3): fast path (one backend call) or the full agent, decided per request.

Requests carrying the client's own `tools` are passed through (the client runs those tools itself, DESIGN §4),
so they take the fast path with reason `client_tools`; so do requests with image, audio or file parts (reason
`non_text_content`: only the model can read them). Otherwise the learned router decides, fail-safe to the
agent when it is unsure; untrained, its prior decides (`router/prior.py`: conversation and facts fast, code,
numbers and files to the agent); `--router always-agent|always-fast` forces a route and still reports p. Unless
forced, a turn shown one of this user's stated preferences goes to the agent (reason `user_preference`): the
answer-first turn is what applies it to the reply.
"""

from __future__ import annotations

from ghost_agent.agent.memory_bus import turn_preferences
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.llm import content_parts
from ghost_agent.logging import get_logger

log = get_logger("agent.router")


class RouterStage:
    """Decide the route; `turn.state["router"]` = {decision, p, reason, model, confidence} (recorded in the
    trajectory; `confidence` is None unless the learned model chose the route, see `RouterDecision`)."""

    name = "router"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def run(self, turn: Turn) -> None:
        if turn.body.get("tools"):
            decision = {"decision": "fast", "p": None, "reason": "client_tools", "model": None, "confidence": None}
        elif content_parts.has_non_text(turn.body):
            # Images, audio, files: only the model itself can read them; the agent's checks would lose them.
            decision = {
                "decision": "fast", "p": None, "reason": "non_text_content", "model": None, "confidence": None
            }
        else:
            decision = self.services.router.dispatch(turn.body).to_dict()
            if decision["decision"] == "fast" and decision["reason"] != "forced" and turn_preferences(turn):
                # A stated preference of this user applies: only the agent path can make the reply follow it.
                decision = {**decision, "decision": "agent", "reason": "user_preference", "confidence": None}
        turn.state["router"] = decision
        log.info(
            "router_decision",
            request_id=turn.request_id,
            trajectory_id=turn.trajectory_id,
            route=decision["decision"],
            p=decision["p"],
            reason=decision["reason"],
            model=decision["model"],
            confidence=decision.get("confidence"),
        )


def takes_agent_path(turn: Turn) -> bool:
    """True when the router sent this turn to the tool loop."""
    router = turn.state.get("router")
    return isinstance(router, dict) and router.get("decision") == "agent"
