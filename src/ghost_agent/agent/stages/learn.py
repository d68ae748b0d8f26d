"""Lesson writing on recovery (issue 6): a turn that hit a tool error, recovered, and was CONFIRMED by the
verifier teaches a lesson — the mistake and the fix — with provenance `source_trajectory_id` = this turn.

A lesson is data, not instructions (issue 12, item 3): the candidate is distilled from the turn's steps (what
failed, one line of why, what fixed it) with an excerpt of the request as its task, and the store cleans and
bounds every field (`memory/sanitize.py`: inert, redacted, then cut). It is scoped to the session that taught
it (`session_id`): other sessions see it only once the operator pins it (`ghost-agent lessons pin ID`).

A finisher: it runs after the client has the reply; a failure is logged and costs nothing else.
"""

from __future__ import annotations

from typing import Any

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.strategy import LoopResult
from ghost_agent.agent.turn import Turn
from ghost_agent.logging import get_logger

log = get_logger("agent.learn")

SOURCE = "recovery"


def lesson_from_recovery(user_request: str, result: LoopResult) -> dict[str, str] | None:
    """The mistake (the first failed step: the tool, the last line of its failure, the call) and the fix (the
    first successful step after it: the tool and the call), or None.

    Nothing is cut here: the store redacts the whole text first and only then cuts each field to its cap, so
    no cut can split a secret the redactor would have recognised.
    """
    steps = result.steps
    for i, failed in enumerate(steps):
        if failed.ok:
            continue
        for fixed in steps[i + 1:]:
            if fixed.ok:
                return {
                    "task": user_request,
                    "mistake": f"{failed.tool_name} failed ({_failure_line(failed)}) {_args_summary(failed.tool_args)}",
                    "solution": f"{fixed.tool_name} {_args_summary(fixed.tool_args)}",
                }
        return None
    return None


def _failure_line(step: Any) -> str:
    """The most telling line of a failure: the last line of the output (a traceback's exception), else the error."""
    lines = [ln.strip() for ln in (step.result_preview or "").splitlines() if ln.strip() and "[exit code" not in ln]
    return lines[-1] if lines else step.error or "error"


def _args_summary(args: Any) -> str:
    if isinstance(args, dict):
        for key in ("code", "command", "cmd"):
            if isinstance(args.get(key), str):
                return f"with {key}:\n{args[key]}"
    return str(args)


class LearnOnRecovery:
    """Write `turn.state.lesson_candidate` into SkillMemory with this turn's trajectory id and session."""

    name = "learn"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        candidate = turn.state.lesson_candidate
        memory = self.services.memory
        if error is not None or candidate is None or memory is None or not turn.trajectory_id:
            return
        result = await memory.alearn_lesson(
            candidate["task"], candidate["mistake"], candidate["solution"],
            source_trajectory_id=turn.trajectory_id, session_id=turn.session_id, source=SOURCE,
        )
        log.info(
            "lesson_from_recovery",
            trajectory_id=turn.trajectory_id,
            lesson_id=result.lesson.id,
            created=result.created,
        )


__all__ = ["SOURCE", "LearnOnRecovery", "lesson_from_recovery"]
