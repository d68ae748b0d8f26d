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

from dataclasses import replace

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.agent.turn_state import TurnRoute
from ghost_agent.llm import content_parts
from ghost_agent.logging import get_logger

log = get_logger("agent.router")


class RouterStage:
    """Decide the route: `turn.state.route` (recorded in the trajectory as {decision, p, reason, model,
    confidence}; `confidence` is None unless the learned model chose the route, see `RouterDecision`)."""

    name = "router"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def run(self, turn: Turn) -> None:
        if turn.body.get("tools"):
            route = TurnRoute("fast", None, "client_tools", None, None)
        elif content_parts.has_non_text(turn.body):
            # Images, audio, files: only the model itself can read them; the agent's checks would lose them.
            route = TurnRoute("fast", None, "non_text_content", None, None)
        else:
            decided = self.services.router.dispatch(turn.body)
            route = TurnRoute(decided.route, decided.p, decided.reason, decided.model_id, decided.confidence)
            if route.decision == "fast" and route.reason != "forced" and turn.state.preferences:
                # A stated preference of this user applies: only the agent path can make the reply follow it.
                route = replace(route, decision="agent", reason="user_preference", confidence=None)
        turn.state.route = route
        log.info(
            "router_decision",
            request_id=turn.request_id,
            trajectory_id=turn.trajectory_id,
            route=route.decision,
            p=route.p,
            reason=route.reason,
            model=route.model,
            confidence=route.confidence,
        )


def takes_agent_path(turn: Turn) -> bool:
    """True when the router sent this turn to the tool loop."""
    return turn.state.route is not None and turn.state.route.agent
