"""Promotion: an operator-approved candidate becomes a pinned lesson (source `skill`) in the lesson store.

A promoted skill is shown to the model exactly like a pinned lesson, because it is one: retrieved by the
memory bus for requests similar to its sample request (BM25 with the relevance floor), rendered inside the
delimited, untrusted notes block in front of the last user message (`memory/bus.py`) — data, not
instructions, bounded by the block's caps — and shown to every session (pinned). Its text goes through the
lesson store's write-time cleaning like every lesson. Pinning is what makes a skill cross sessions, so only
the operator promotes (`ghost-agent skills promote ID`); the phase never does.

Rejecting a promoted skill retracts its lesson (kept for the record, never shown again).
"""

from __future__ import annotations

from ghost_agent.memory.store import SkillMemory
from ghost_agent.skills_auto.store import Candidate, SkillStore

SKILL_SOURCE = "skill"
FALLBACK_TASK = "a request that needs several tool steps"
RETRACT_REASON = "skill_rejected"


def skill_lesson(candidate: Candidate) -> tuple[str, str, str]:
    """The lesson a candidate becomes: (task = its sample request, mistake = "", solution = the sequence)."""
    task = candidate.samples[0] if candidate.samples else FALLBACK_TASK
    solution = (
        f"tool steps that passed validation on {candidate.support} similar requests: {candidate.text}. "
        "Use them as a guide when they fit this request; adapt the arguments."
    )
    return task, "", solution


def promote(store: SkillStore, memory: SkillMemory, candidate: Candidate) -> Candidate:
    """Write the candidate's pinned lesson and mark it promoted (idempotent: promoting again strengthens the
    same lesson). Returns the updated candidate."""
    task, mistake, solution = skill_lesson(candidate)
    source = candidate.trajectory_ids[0] if candidate.trajectory_ids else ""
    try:
        learned = memory.learn_lesson(task, mistake, solution, source_trajectory_id=source, pinned=True,
                                      source=SKILL_SOURCE)
    except ValueError:  # the sample request was nothing but markup: the sequence still says what to do
        learned = memory.learn_lesson(FALLBACK_TASK, mistake, solution, source_trajectory_id=source, pinned=True,
                                      source=SKILL_SOURCE)
    updated = store.decide(candidate.id, "promoted", lesson_id=learned.lesson.id)
    assert updated is not None  # the row exists: the caller resolved it
    return updated


def reject(store: SkillStore, memory: SkillMemory | None, candidate: Candidate, reason: str = "") -> Candidate:
    """Mark the candidate rejected (never proposed again); a promoted one's lesson is retracted."""
    if candidate.lesson_id and memory is not None:
        memory.retract(candidate.lesson_id, reason=RETRACT_REASON)
    updated = store.decide(candidate.id, "rejected", reason=reason)
    assert updated is not None
    return updated


__all__ = ["FALLBACK_TASK", "SKILL_SOURCE", "promote", "reject", "skill_lesson"]
