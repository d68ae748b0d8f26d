"""Selfhood (watchdog phase 2.8): a diary of notable events, a self-state summary per task kind, and a short
model-written narrative injected as the wake-up prefix of every turn.

`diary.py` (append-only events, facts only), `self_state.py` (pure tallies from the trajectory store),
`narrative.py` (the facts prompt, sanitising and capping the model's note, the wake-up prefix), `service.py`
(`Selfhood`: the files of one home and the narrative in force). The phase is `watchdog/phases/selfhood.py`.
"""

from __future__ import annotations

from ghost_agent.selfhood.diary import Diary, DiaryEntry
from ghost_agent.selfhood.narrative import (
    NARRATIVE_CHARS,
    PREFIX_CHARS,
    WAKE_HEADER,
    Narrative,
    render_facts,
    sanitize_narrative,
    wake_up_prefix,
)
from ghost_agent.selfhood.self_state import SelfStateBuilder, task_kind
from ghost_agent.selfhood.service import Selfhood

__all__ = [
    "NARRATIVE_CHARS",
    "PREFIX_CHARS",
    "WAKE_HEADER",
    "Diary",
    "DiaryEntry",
    "Narrative",
    "SelfStateBuilder",
    "Selfhood",
    "render_facts",
    "sanitize_narrative",
    "task_kind",
    "wake_up_prefix",
]
