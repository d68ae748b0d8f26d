"""The answer-first turn's last step: the finished reply made to follow the user's stated preferences.

Preferences of a known kind (`text/format_rules.py`) are applied by rule, last. The others go to the model: one
rewrite call, kept only when `preferences.accept` finds nothing it broke (the answer the turn computed or checked
still stated, code and requested forms intact); then one short call judges whether the reply follows them, and
when it does not the rewrite is asked once more, under the same rules. What happened is recorded in
`run.info.preferences`. The model calls go through the turn's own primitives (`text`, `complete`), so they count
in its `llm_calls`, `usage` and timed `calls` like every other call of the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ghost_agent.agent.checking import preferences
from ghost_agent.agent.strategy import LoopRun, PreferencesApplied
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger
from ghost_agent.text import dates, format_rules
from ghost_agent.tools.base import one_line

log = get_logger("agent.answer_first")


class TextCall(Protocol):
    async def __call__(self, purpose: str, run: LoopRun, messages: list[JSON], **params: Any) -> str: ...


class CompleteCall(Protocol):
    async def __call__(self, purpose: str, run: LoopRun, body: JSON) -> Any: ...


@dataclass
class PreferenceFollower:
    """`text` / `complete`: the turn's model-call primitives; `reply_bounds`: the bounds of a reply-sized call;
    `rules`: apply the preferences of a known kind by rule (else they go to the model with the others)."""

    text: TextCall
    complete: CompleteCall
    reply_bounds: Callable[[], JSON]
    rules: bool = True

    async def follow(self, run: LoopRun, text: str, wanted: Sequence[str],
                     answer: float | dates.CalendarAnswer | None, *, request: str) -> str:
        """`text` following `wanted`; `answer`: what the turn computed or checked, which any rewrite must still
        state; `request`: the request without its form instructions (what the rewrite and the judge are shown)."""
        rules, rest = format_rules.rules_for(wanted) if self.rules else ([], list(wanted))
        final = await self._rewrite(run, text, rest, answer, request) if rest else text
        if not rules:
            return final
        ruled = format_rules.apply_rules(final, rules, preferences.request_alone(run.user_request, wanted))
        run.info.preferences = replace(
            run.info.preferences or PreferencesApplied(count=0, applied=ruled != final, reason="by rule"),
            count=len(wanted), rules=tuple(r.describe() for r in rules))
        log.info("preferences_by_rule", rules=[r.describe() for r in rules], changed=ruled != final)
        return ruled

    async def _rewrite(self, run: LoopRun, text: str, wanted: Sequence[str],
                       answer: float | dates.CalendarAnswer | None, request: str) -> str:
        """The model's rewrite, its check and the one repair the check may call for."""
        rewrite = preferences.clean_rewrite(await self.text(
            "preference rewrite", run, preferences.preference_messages(request, text, wanted), temperature=0.0,
            **self.reply_bounds()))
        refused = preferences.accept(text, rewrite, run.user_request, wanted, answer)
        final = text if refused is not None else rewrite
        run.info.preferences = PreferencesApplied(count=len(wanted), applied=refused is None, reason=refused or "")
        followed: float | None = None
        repaired: bool | None = None
        try:  # the check and its repair are a bonus: a backend failure keeps the reply as it stands
            followed = await self._judge(run, request, final, wanted)
            if followed is not None and followed < preferences.FOLLOWED:
                retry = preferences.clean_rewrite(await self.text(
                    "preference repair", run,
                    preferences.preference_messages(request, final, wanted, retry_after=rewrite or final),
                    temperature=0.0, **self.reply_bounds()))
                repaired = preferences.accept(text, retry, run.user_request, wanted, answer) is None \
                    and retry != final
                final = retry if repaired else final
        except BackendError as exc:
            log.warning("preference_check_failed", status=exc.status, error=one_line(exc.message, 200))
        run.info.preferences = replace(run.info.preferences, followed=followed, repaired=repaired)
        log.info("preferences_applied", applied=refused is None, reason=refused or "", count=len(wanted),
                 followed=followed, repaired=repaired)
        return final

    async def _judge(self, run: LoopRun, request: str, reply: str, wanted: Sequence[str]) -> float | None:
        """P(the reply follows the preferences): one token, yes or no, read through its logprobs."""
        body: JSON = {"messages": preferences.judge_messages(request, reply, wanted), "max_tokens": 1,
                      "temperature": 0.0, "logprobs": True, "top_logprobs": 5, "stream": False}
        return preferences.p_yes(await self.complete("preference check", run, body))


__all__ = ["PreferenceFollower"]
