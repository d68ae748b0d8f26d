"""The experience bank in the turn (DESIGN §8): worked examples shown before the reply, and what followed them.

`ExperienceStage` (after the memory bus) retrieves the `experience_top_k` examples most similar to the request
(`selfplay/experience.py`: lexical, by what is asked, with a similarity floor: an unrelated request gets none)
and renders them as the delimited examples block (`memory/examples.py`), which the respond stage puts in front
of the last user message with the lessons notes (`TurnState.notes`), never in a system message. Self-play
examples hold no user text, so every session may see them. What the block showed is recorded in the
trajectory (`extra["examples_shown"]`) and, after delivery, counted as shown in the bank.

A practice turn is never shown an example of its own task (the same request, whitespace and case aside): that
would be its answer. Another seed of the same template may be shown (its data differs: that is the payoff). A
turn with `show_examples` off (a bench measuring without the bank) is shown none.

`ExperienceOutcome` (a finisher) tells the bank what followed: a turn that was shown examples and ended FAILED
by a validator's verdict (self-play) or a confident verifier REFUTED demotes them; PASSED or a confident
CONFIRMED credits them. A user correction of such a turn demotes them too (`CorrectionStage`, through the
stashed `RecentTurn.examples`). A broken bank costs the turn its examples, never the turn.
"""

from __future__ import annotations

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.llm import wire
from ghost_agent.logging import get_logger
from ghost_agent.memory.examples import build_examples_block
from ghost_agent.trajectories.record import Source

log = get_logger("agent.experience")


class ExperienceStage:
    """Retrieve the top-k worked examples for the request into `turn.state.examples_block`."""

    name = "experience"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def run(self, turn: Turn) -> None:
        turn.state.examples_block = ""
        bank, k = self.services.experience, self.services.settings.learning.experience_top_k
        if bank is None or k <= 0 or not turn.show_examples or turn.body.get("tools"):
            return  # client tools: the client drives that turn, and its body goes out as sent
        query = wire.last_user_text(turn.body)
        if not query.strip():
            return
        try:
            found = await bank.asearch(query, k, exclude_same=turn.source == Source.SELF_PLAY.value)
        except Exception as exc:  # noqa: BLE001 - examples are a bonus; the turn goes on without them
            log.warning("experience_search_failed", request_id=turn.request_id, error=repr(exc))
            return
        block = build_examples_block(found)
        shown = found[: block.shown]  # only what fit in the bounded block counts as shown
        if not shown:
            return
        turn.state.examples_block = block.text
        turn.state.examples_shown = [e.ref() for e in shown]
        log.info("examples_shown", request_id=turn.request_id, ids=[e.id for e in shown],
                 scores=[round(e.score, 3) for e in shown])


def shown_outcome(turn: Turn, refute_confidence: float) -> bool | None:
    """What followed the shown examples: the validator's verdict (self-play), else a confident verifier verdict;
    None when nothing is known (most chat turns, until a correction says otherwise)."""
    if turn.outcome in ("passed", "failed"):
        return turn.outcome == "passed"
    verdict = turn.state.verifier
    if verdict is None or verdict.confidence < refute_confidence:
        return None
    return {"CONFIRMED": True, "REFUTED": False}.get(verdict.verdict)


class ExperienceOutcome:
    """Finisher: count the examples a turn was shown as shown, then credit or demote them by how the turn ended
    (see the module doc). After delivery: the bank's writes never delay a reply."""

    name = "experience"

    def __init__(self, services: AgentServices) -> None:
        self.services = services

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        bank, ids = self.services.experience, turn.state.examples_ids
        if bank is None or not ids:
            return
        await bank.amark_shown(ids)
        passed = shown_outcome(turn, self.services.settings.agent.verifier_refute_confidence)
        if passed is None:
            return
        await bank.amark_outcome(ids, passed)
        log.info("examples_outcome", request_id=turn.request_id, ids=ids, passed=passed)


__all__ = ["ExperienceOutcome", "ExperienceStage", "shown_outcome"]
