"""Lesson writing on recovery (issue 6): a turn that hit a tool error, recovered, and was CONFIRMED by the
verifier teaches a lesson — the mistake and the fix — with provenance `source_trajectory_id` = this turn.

A finisher: it runs after the client has the reply; a failure is logged and costs nothing else.
"""

from __future__ import annotations

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.logging import get_logger

log = get_logger("agent.learn")


class LearnOnRecovery:
    """Write `turn.state["lesson_candidate"]` into SkillMemory with this turn's trajectory id."""

    name = "learn"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        candidate = turn.state.get("lesson_candidate")
        memory = self.services.memory
        if error is not None or not isinstance(candidate, dict) or memory is None or not turn.trajectory_id:
            return
        result = await memory.alearn_lesson(
            candidate["task"], candidate["mistake"], candidate["solution"], source_trajectory_id=turn.trajectory_id
        )
        log.info(
            "lesson_from_recovery",
            trajectory_id=turn.trajectory_id,
            lesson_id=result.lesson.id,
            created=result.created,
        )
