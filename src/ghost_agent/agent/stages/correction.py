"""The prior-turn correction check (DESIGN §4 step 1; seed 001 "Real-time loop closure").

If the new user message corrects the previous answer — scored from lexical cues in the message, read against
the previous request and reply (`feedback/correction/detector.py`) — the previous turn is marked FAILED in the
corrections sidecar (source `user_correction`, the strongest training signal there is) and the lessons it wrote are
retracted. The previous turn is found by fingerprinting the assistant message the client sent back
(`RecentTurns`), so no client-side session state is needed. Scheduling a reflection on the failed turn is
the learning loops' job: `on_correction` hooks are called with a `CorrectionEvent` (the reflection
scheduler subscribes; see `agent/stages/reflection_scheduler.py`). Hooks run inside the correcting turn, before its
reply: they must only schedule work, never wait for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ghost_agent.agent.recent import RecentTurn
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.turn import Turn
from ghost_agent.feedback.correction.detector import CorrectionVerdict, classify_user_correction
from ghost_agent.logging import get_logger
from ghost_agent.memory.preference import stated_preference
from ghost_agent.trajectories.record import Outcome

log = get_logger("agent.correction")


@dataclass(frozen=True)
class CorrectionEvent:
    """A correction that promoted an earlier turn to FAILED: which turn (`trajectory_id`, its `session_id`,
    request and reply), the user's correcting message, the verdict, and the correcting `turn` (still running:
    hooks may leave work in its `state` for a finisher)."""

    trajectory_id: str
    session_id: str
    prior_request: str
    prior_reply: str
    correcting_message: str
    reason: str
    verdict: CorrectionVerdict
    turn: Turn


CorrectionHook = Callable[[CorrectionEvent], Awaitable[None]]


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def prior_exchange(messages: Any) -> tuple[str, str, str] | None:
    """(prior user text, prior assistant text, current user text) when the conversation ends with
    user → assistant → user; else None."""
    if not isinstance(messages, list):
        return None
    turns = [m for m in messages if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    if len(turns) < 3 or turns[-1].get("role") != "user" or turns[-2].get("role") != "assistant":
        return None
    for m in reversed(turns[:-2]):
        if m.get("role") == "user":
            return _text(m), _text(turns[-2]), _text(turns[-1])
    return None


class CorrectionStage:
    """Promote the previous turn to FAILED when this message corrects it; retract that turn's lessons.

    A reply to a correction that stated a preference is held for its session (`RecentTurns.hold_demonstration`):
    when the session's next message is anything but a correction of that reply — a thank-you, the next request,
    a new conversation — the user accepted it, and it becomes the preference lesson's demonstration
    (`memory/demonstrations.py`)."""

    name = "correction"

    def __init__(self, services: AgentServices, hooks: list[CorrectionHook] | None = None) -> None:
        self.services = services
        self.hooks = hooks if hooks is not None else []

    async def _accepted(self, recent: RecentTurn, reply: str) -> None:
        """`recent`'s reply was not corrected: keep it as its preference lesson's demonstration, if it has one."""
        memory = self.services.memory
        if recent.demonstrates is None or memory is None or not self.services.settings.learning.demonstrations:
            return
        taught_by, request = recent.demonstrates
        try:
            await asyncio.to_thread(memory.add_demonstration, taught_by, request, reply,
                                    trajectory_id=recent.trajectory_id)
        except Exception as exc:  # noqa: BLE001 - learning bookkeeping must never break the user's turn
            log.warning("demonstration_failed", trajectory_id=recent.trajectory_id, error=repr(exc))

    async def run(self, turn: Turn) -> None:
        held = self.services.recent.take_demonstration(turn.session_id)
        corrected = await self._check(turn)
        if held is not None and corrected != held[1].trajectory_id:
            # the session moved on without correcting that reply (a thank-you, a next request, a new chat)
            await self._accepted(held[1], held[0])

    async def _check(self, turn: Turn) -> str | None:
        """The correction check proper; the trajectory id of the turn this message corrected, else None."""
        exchange = prior_exchange(turn.body.get("messages"))
        if exchange is None:
            return None
        prior_user, prior_reply, current = exchange
        recent = self.services.recent.peek(prior_reply)
        if recent is None:
            return None
        verdict = classify_user_correction(prior_user or recent.user_request, current, prior_reply)
        if not verdict.is_correction:
            return None
        self.services.recent.pop(prior_reply)
        reason = f"user-correction signal: {verdict.reason}"
        turn.state.corrected_prior = recent.trajectory_id
        retracted = 0
        try:
            await asyncio.to_thread(
                self.services.collector.update_outcome,
                recent.trajectory_id, Outcome.FAILED, reason, source="user_correction",
            )
            memory = self.services.memory
            if memory is not None:
                retracted = await memory.aretract_lessons_from_trajectory(
                    recent.trajectory_id, reason="user_correction"
                )
            experience = self.services.experience
            if experience is not None and recent.examples:  # the worked examples it was shown did not help
                await experience.amark_outcome(recent.examples, False)
        except Exception as exc:  # noqa: BLE001 - learning bookkeeping must never break the user's turn
            log.warning("user_correction_failed", trajectory_id=recent.trajectory_id, error=repr(exc))
            return recent.trajectory_id
        log.info(
            "user_correction_promoted",
            trajectory_id=recent.trajectory_id,
            by_request=turn.request_id,
            signals=list(verdict.signals),
            score=verdict.score,
            jaccard=round(verdict.jaccard, 3),
            lessons_retracted=retracted,
            examples_demoted=len(recent.examples),
        )
        preference = stated_preference(prior_user or recent.user_request, current)
        if preference is not None:
            # What the user just said they want applies to this very reply too (agent/checking/preferences.py);
            # if the user accepts that reply, it demonstrates the lesson on the request it was about.
            turn.state.preferences = [preference]
            turn.state.demonstrates = (recent.trajectory_id, prior_user or recent.user_request)
        event = CorrectionEvent(
            trajectory_id=recent.trajectory_id,
            session_id=recent.session_id,
            prior_request=prior_user or recent.user_request,
            prior_reply=prior_reply,
            correcting_message=current,
            reason=reason,
            verdict=verdict,
            turn=turn,
        )
        for hook in self.hooks:
            try:
                await hook(event)
            except Exception as exc:  # noqa: BLE001
                log.warning("correction_hook_failed", hook=repr(hook), error=repr(exc))
        return recent.trajectory_id
