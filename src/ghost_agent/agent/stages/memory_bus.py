"""The memory bus (DESIGN §4 step 2): lessons relevant to this request, shown to the model in a bounded block.

Only lessons this turn's session may see are retrieved: the ones it wrote and the pinned ones
(`SkillMemory.search(..., session=turn.session_id)`). The block is untrusted data (`lesson_notes`): the
respond stage puts it in front of the last user message, never in a system message. Which lessons were shown
is recorded in the trajectory (`extra["lessons_shown"]`), so a later analysis can credit or blame them, and
their `uses` are bumped. A broken lesson store costs the turn its lessons, never the turn. Shown lessons that
are a user's stated preference (`memory/preference.py`) are also kept as their quoted words
(`turn.state.preferences`): the router sends such a turn to the agent and the answer-first turn applies them to
its finished reply (`agent/checking/preferences.py`).

The selfhood wake-up prefix (`turn.state.selfhood_prefix`, per-turn system text) is set here too: the narrative
the selfhood phase wrote, one capped line that goes in as system text after the byte-identical system prefix
(see docs/skills-and-selfhood.md for why there and not in the notes block). It is the same bytes on every
turn until the phase rewrites it, so the prompt cache keeps it; empty when `--no-selfhood` or
`--no-selfhood-narrative`, or before the first narrative.
"""

from __future__ import annotations

import asyncio

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.llm import wire
from ghost_agent.logging import get_logger
from ghost_agent.memory.bus import build_lessons_block, lesson_refs
from ghost_agent.memory.demonstrations import build_demonstrations_block
from ghost_agent.memory.preference import LESSON_SOURCE as PREFERENCE_SOURCE
from ghost_agent.memory.preference import preference_text
from ghost_agent.memory.sanitize import neutralize
from ghost_agent.text.format_rules import rule_for

log = get_logger("agent.memory")


class MemoryStage:
    """Retrieve the top-k lessons for the request into `turn.state.memory_block`."""

    name = "memory"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def run(self, turn: Turn) -> None:
        turn.state.selfhood_prefix = wake_up_prefix(self.services)
        turn.state.memory_block = ""
        memory, k = self.services.memory, self.services.settings.agent.memory_top_k
        query = wire.last_user_text(turn.body)
        if memory is None or k <= 0 or not query.strip():
            return
        try:
            found = await memory.asearch(query, k, session=turn.session_id)
            block = build_lessons_block(found)
            shown = found[: len(block.shown)]  # the block keeps the given order and cuts at the end
            if shown:
                await memory.amark_used([s.lesson.id for s in shown])
        except Exception as exc:  # noqa: BLE001 - lessons are a bonus; the turn goes on without them
            log.warning("memory_search_failed", request_id=turn.request_id, error=repr(exc))
            return
        if not shown:
            return
        # only what fit in the bounded block counts as shown (credit and blame go to what the model saw)
        turn.state.memory_block = block.text
        turn.state.lessons_shown = lesson_refs(shown)
        # the user's own words of each preference lesson shown; those a rule applies are left out of the
        # answer-first draft's notes (`TurnState.notes_for`) and get no demonstrations
        stated = {s.lesson.id: text for s in shown if s.lesson.source == PREFERENCE_SOURCE
                  and (text := preference_text(neutralize(s.lesson.solution)))}
        ruled = {i for i, text in stated.items() if self._by_rule(text)}
        if ruled:
            turn.state.memory_block_by_rule = build_lessons_block([s for s in shown if s.lesson.id not in ruled]).text
        preferences = list(stated.values())
        if preferences:  # after any the correction stage found in this very message
            turn.state.preferences = list(dict.fromkeys([*turn.state.preferences, *preferences]))
            await self._demonstrations(turn, [s.lesson.id for s in shown
                                              if s.lesson.source == PREFERENCE_SOURCE and s.lesson.id not in ruled])
        log.info("lessons_shown", request_id=turn.request_id, ids=[s.lesson.id for s in shown],
                 preferences=len(preferences), by_rule=len(ruled))

    def _by_rule(self, preference: str) -> bool:
        """A preference of a kind the answer-first turn applies by rule after the draft (`text/format_rules.py`):
        kept out of that draft's notes, so it answers as it would without the lesson (with "temperatures in
        kelvin" in its notes the 1.5B wrote "Water freezes at 0 Kelvin"), and the rule converts the answer it
        gives. Such a lesson gets no demonstrations (a demonstration's "14:30" was copied into the answer to
        another question); the fast path, which applies no rule, sees it in its notes."""
        return self.services.settings.agent.preference_rules and rule_for(preference) is not None

    async def _demonstrations(self, turn: Turn, lesson_ids: list[str]) -> None:
        """The shown preference lessons' demonstrations, as a block next to the notes (none when switched off)."""
        memory = self.services.memory
        if memory is None or not self.services.settings.learning.demonstrations:
            return
        try:
            demos = await asyncio.to_thread(memory.demonstrations, lesson_ids)
        except Exception as exc:  # noqa: BLE001 - a bonus, like the lessons
            log.warning("demonstrations_failed", request_id=turn.request_id, error=repr(exc))
            return
        block = build_demonstrations_block(demos)
        if block.shown:
            turn.state.demos_block = block.text
            turn.state.demonstrations_shown = [{"lesson_id": d.lesson_id, "trajectory_id": d.trajectory_id}
                                               for d in demos[: block.shown]]


def wake_up_prefix(services: AgentServices) -> str:
    """The selfhood narrative as the turn's system text ("" when switched off or not written yet). No I/O."""
    selfhood, settings = services.selfhood, services.settings
    if selfhood is None or not settings.learning.selfhood or not settings.learning.selfhood_narrative:
        return ""
    return selfhood.wake_up_prefix()
