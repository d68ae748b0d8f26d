"""Passive skill extraction (watchdog phase 2.6): frequent tool-call sequences mined from validator-passing
trajectories into candidates with support counts; an operator promotes one into a pinned lesson.

`mining.py` (pure: tokens, n-grams, support, closed runs), `scan.py` (incremental reads of the trajectory
tree), `store.py` (SQLite: cursor, mining window, candidates and decisions), `promote.py` (candidate → pinned
lesson), `cli/skills.py` (`ghost-agent skills`). The phase itself is `watchdog/phases/skills_auto.py`.
"""

from __future__ import annotations

from ghost_agent.skills_auto.mining import Observed, Support, mine, observe, step_token
from ghost_agent.skills_auto.promote import SKILL_SOURCE, promote, reject, skill_lesson
from ghost_agent.skills_auto.store import Candidate, SkillStore, SkillStoreError, candidate_counts

__all__ = [
    "SKILL_SOURCE",
    "Candidate",
    "Observed",
    "SkillStore",
    "SkillStoreError",
    "Support",
    "candidate_counts",
    "mine",
    "observe",
    "promote",
    "reject",
    "skill_lesson",
    "step_token",
]
