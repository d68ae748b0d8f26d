"""The memory bus (DESIGN §4 step 2): lessons relevant to this request, shown to the model in a bounded block.

Which lessons were shown is recorded in the trajectory (`extra["lessons_shown"]`), so a later analysis can
credit or blame them, and their `uses` are bumped. The selfhood wake-up prefix has its slot here too
(`turn.state["selfhood_prefix"]`, empty until the selfhood phase exists). A broken lesson store costs the
turn its lessons, never the turn.
"""

from __future__ import annotations

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.llm import wire
from ghost_agent.logging import get_logger
from ghost_agent.memory.bus import build_lessons_block, lesson_refs

log = get_logger("agent.memory")


class MemoryStage:
    """Retrieve the top-k lessons for the request into `turn.state["memory_block"]`."""

    name = "memory"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def run(self, turn: Turn) -> None:
        turn.state["selfhood_prefix"] = ""
        turn.state["memory_block"] = ""
        memory, k = self.services.memory, self.services.settings.memory_top_k
        query = wire.last_user_text(turn.body)
        if memory is None or k <= 0 or not query.strip():
            return
        try:
            found = await memory.asearch(query, k)
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
        turn.state["memory_block"] = block.text
        turn.state["lessons_shown"] = lesson_refs(shown)
        log.info("lessons_shown", request_id=turn.request_id, ids=[s.lesson.id for s in shown])


def system_extra(turn: Turn) -> str:
    """The per-turn part of the system prompt: selfhood prefix, then the lessons block (either may be empty)."""
    parts = [turn.state.get("selfhood_prefix") or "", turn.state.get("memory_block") or ""]
    return "\n\n".join(p for p in parts if p)
