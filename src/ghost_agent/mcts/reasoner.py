"""MCTSReasoner: propose K candidate actions, score them (PRM fast path or LLM simulation), look one step
deeper on the best M, and return the best action with its score and provenance (seed 000, DESIGN §4 step 4).

The PRM fast path engages only when all three hold: a scorer is attached (`self.prm_scorer`, assignable at
any time), it has a model (`has_model is True`), and the caller passed `prm_state`. Otherwise the LLM
simulation path runs, exactly as it would without a PRM. A scorer that raises or returns NaN makes this one
call fall back to LLM simulation (logged `mcts_prm_fallback`); the next call tries the PRM again.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.llm.base import BackendError, LLMBackend
from ghost_agent.llm.wire import reply_text
from ghost_agent.logging import get_logger
from ghost_agent.mcts.parse import ToolSpec, candidate_from, normalize_tools, parse_candidates, parse_rating
from ghost_agent.mcts.render import render_action, render_tools
from ghost_agent.mcts.result import CandidateRecord, MCTSError, MCTSResult, Provenance
from ghost_agent.privacy.redact import redact_text
from ghost_agent.prm.features import ActionCandidate, PlanState
from ghost_agent.prm.scorer import clamp_unit
from ghost_agent.text import prompts

log = get_logger("mcts")

NEUTRAL = 0.5
RESPONSE_PREVIEW_CHARS = 500
_TIE_DIGITS = 12  # values equal to 12 decimals are a tie (the backup formula must not break ties by rounding)


def _preview(text: str) -> str:
    """A model reply as logged or recorded: redacted, then cut (a cut first can split a secret)."""
    return redact_text(text)[:RESPONSE_PREVIEW_CHARS]


def _clamp_unit_score(value: Any) -> float:
    """Any scorer output as a float in [0, 1] — the same rule as `prm.scorer.clamp_unit`, applied to every
    scorer MCTS is given (duck-typed ones included), so an out-of-range score cannot outrank a real one."""
    return clamp_unit(value)


class _ScorerFailure(Exception):
    """The PRM scorer raised, returned NaN or a non-number, or returned the wrong number of scores."""


@dataclass
class _Context:
    """The per-call prompt fields shared by every LLM call of one search, and the call counter."""

    task: str
    plan_state: str
    tools: list[ToolSpec]
    rendered_tools: str
    calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)  # summed `usage` of the search's calls (the turn's cost)


def _has_model(scorer: Any) -> bool:
    if scorer is None:
        return False
    try:
        return getattr(scorer, "has_model", False) is True
    except Exception:  # a broken duck-typed scorer is "no model", not a crash
        return False


def _as_state(state: Any) -> PlanState | None:
    if state is None or isinstance(state, PlanState):
        return state
    if isinstance(state, Mapping):
        return PlanState.from_dict(state)
    raise TypeError(f"prm_state must be a PlanState or a mapping, not {type(state).__name__}")


def _as_candidate(candidate: Any) -> ActionCandidate:
    if isinstance(candidate, ActionCandidate):
        return candidate
    if isinstance(candidate, Mapping):
        return ActionCandidate.from_dict(candidate)
    raise TypeError(f"candidates must be ActionCandidate objects or mappings, not {type(candidate).__name__}")


def _score_with(scorer: Any, state: PlanState, actions: Sequence[ActionCandidate]) -> list[float]:
    """Clamped scores for `actions` in `state`; raises _ScorerFailure on any scorer misbehaviour."""
    try:
        batch = getattr(scorer, "score_batch", None)
        if callable(batch):
            raw = list(batch(state, list(actions)))
        else:  # a duck-typed scorer with only `score`
            raw = [scorer.score(state, action) for action in actions]
    except Exception as exc:
        raise _ScorerFailure(f"{type(exc).__name__}: {exc}") from exc
    if len(raw) != len(actions):
        raise _ScorerFailure(f"scorer returned {len(raw)} scores for {len(actions)} candidates")
    out: list[float] = []
    for value in raw:
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise _ScorerFailure(f"scorer returned a non-number: {value!r}") from exc
        if math.isnan(number):
            raise _ScorerFailure("scorer returned NaN")
        out.append(_clamp_unit_score(number))
    return out


def _same_action_key(action: ActionCandidate) -> str:
    """Two candidates calling the same tool with the same arguments are one action, however described."""
    try:
        args = json.dumps(action.tool_args, sort_keys=True, default=str)
    except (TypeError, ValueError):
        args = repr(action.tool_args)
    return f"{action.tool_name}\x00{args}"


def _best(values: Sequence[float]) -> int:
    """Index of the highest value; ties go to the earliest (proposal order), so selection is deterministic."""
    return max(range(len(values)), key=lambda i: (round(values[i], _TIE_DIGITS), -i))


class MCTSReasoner:
    """One-ply search with optional one-step lookahead over LLM-proposed actions.

    `prm_scorer` is public: assign a scorer after construction (hot attach) and the next call uses it.
    `expand_top` (M) candidates are looked at one step deeper (0 disables); `gamma` weighs the child's value
    in the backed-up value `(own + γ·child) / (1 + γ)`. `model`, `temperature` and `max_tokens` go into
    every LLM request this reasoner makes.
    """

    def __init__(
        self,
        llm: LLMBackend,
        max_candidates: int = 3,
        prm_scorer: Any = None,
        *,
        expand_top: int = 1,
        model: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 512,
        gamma: float = 0.9,
    ) -> None:
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be at least 1, got {max_candidates}")
        if expand_top < 0:
            raise ValueError(f"expand_top must be 0 or more, got {expand_top}")
        if not (math.isfinite(gamma) and 0.0 <= gamma <= 1.0):
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        if not (math.isfinite(temperature) and temperature >= 0.0):
            raise ValueError(f"temperature must be a finite non-negative number, got {temperature}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.llm = llm
        self.max_candidates = max_candidates
        self.prm_scorer = prm_scorer
        self.expand_top = expand_top
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.gamma = gamma

    async def select_best_action(
        self,
        task: str,
        plan_state: str,
        available_tools: Sequence[Any],
        prm_state: PlanState | Mapping[str, Any] | None = None,
        *,
        candidates: Sequence[ActionCandidate | Mapping[str, Any]] | None = None,
        seed: Sequence[ActionCandidate | Mapping[str, Any]] = (),
        allow_answer: bool = True,
    ) -> MCTSResult:
        """Pick the best next action for `task`.

        `plan_state` is the progress so far as text (for the LLM prompts); `available_tools` are OpenAI tool
        schemas, plain `{name, description, parameters}` dicts or ToolSpecs; `prm_state` opts into the PRM
        fast path (a mapping is read with `PlanState.from_dict`); `candidates` (ActionCandidates or their
        dicts) skips the proposal call; `seed` candidates are kept first and the proposal adds alternatives up to
        `max_candidates` (ties then favour the seed); `allow_answer=False` drops proposed direct answers (the
        caller already decided to act). Raises MCTSError when the model proposes no usable action twice; a
        BackendError on the proposal call propagates unchanged (the caller maps it to a status). Simulation
        failures never raise: they score 0.5, and if every one fails the first proposal is returned with
        provenance `fallback`. A lone candidate without the PRM path is returned unsimulated (provenance
        `single`).
        """
        started = time.perf_counter()
        tools = normalize_tools(available_tools)
        progress = plan_state.strip() if isinstance(plan_state, str) else ""
        ctx = _Context(
            task=task,
            plan_state=progress or prompts.NOTHING_YET,
            tools=tools,
            rendered_tools=render_tools(tools),
        )
        if candidates is None:
            own = [_as_candidate(c) for c in seed]
            if len(own) >= self.max_candidates:
                actions = own[: self.max_candidates]
            else:
                # The caller's own candidates (e.g. the action the model just chose) come first and always
                # compete; the proposal fills the remaining slots with alternatives.
                proposed = await self._propose(ctx)
                if not allow_answer:
                    proposed = [a for a in proposed if a.tool_name is not None]
                taken = {_same_action_key(a) for a in own}
                fresh = [a for a in proposed if _same_action_key(a) not in taken]
                actions = own + fresh[: self.max_candidates - len(own)]
        else:
            actions = [_as_candidate(c) for c in candidates]
            if not actions:
                raise MCTSError("select_best_action was given an empty candidate list")

        scorer = self.prm_scorer  # read once: a concurrent re-assignment cannot split one call across two
        state = _as_state(prm_state)
        records: list[CandidateRecord] | None = None
        reasons: list[str] = []
        provenance: Provenance = "prm"
        if state is not None and _has_model(scorer):
            try:
                records = self._score_prm(scorer, state, actions, tools)
            except _ScorerFailure as exc:
                log.warning("mcts_prm_fallback", error=str(exc), n_candidates=len(actions))
                reasons.append(f"prm scorer failed ({exc}); used LLM simulation")
        if records is None and len(actions) == 1:
            # Nothing to choose between: a simulation call would cost seconds on a local model and change
            # nothing. The lone candidate keeps the neutral score and says why.
            records = [CandidateRecord(action=actions[0], score=NEUTRAL, note="only candidate; not simulated")]
            provenance = "single"
        if records is None:
            records, provenance, reason = await self._score_llm(ctx, actions)
            if reason:
                reasons.append(reason)

        for record in records:
            record.value = self._backed_up(record)
        winner = _best([r.value for r in records])
        result = MCTSResult(
            action=records[winner].action,
            score=records[winner].value,
            provenance=provenance,
            candidates=records,
            winner_index=winner,
            llm_calls=ctx.calls,
            usage=dict(ctx.usage),
            duration_ms=round((time.perf_counter() - started) * 1000.0, 3),
            fallback_reason="; ".join(reasons) or None,
        )
        log.info(
            "mcts_select",
            provenance=provenance,
            n_candidates=len(records),
            scores=[round(r.score, 4) for r in records],
            values=[round(r.value, 4) for r in records],
            winner=winner,
            tool=result.action.tool_name,
            llm_calls=ctx.calls,
            ms=result.duration_ms,
        )
        return result

    # ------------------------------------------------------------------------------------------ proposal

    async def _propose(self, ctx: _Context) -> list[ActionCandidate]:
        names = frozenset(t.name for t in ctx.tools)
        fields = self._fields(ctx, k=self.max_candidates)
        text = await self._complete(ctx, prompts.messages("mcts_propose", **fields))
        found = parse_candidates(text, names, self.max_candidates)
        if found:
            return found
        log.info("mcts_proposal_retry", response=_preview(text))
        text = await self._complete(ctx, prompts.messages("mcts_propose", retry_after=text, **fields))
        found = parse_candidates(text, names, self.max_candidates)
        if found:
            return found
        raise MCTSError(
            "the model proposed no usable action (a JSON array of {description, tool, args} naming available "
            "tools) in two attempts",
            response=_preview(text),
            usage=ctx.usage,
        )

    # --------------------------------------------------------------------------------------- PRM scoring

    def _score_prm(
        self, scorer: Any, state: PlanState, actions: list[ActionCandidate], tools: list[ToolSpec]
    ) -> list[CandidateRecord]:
        """First-level PRM scores, then each of the best M tool actions expanded over generic next steps
        (one per tool, plus answering) in its imagined next state. Pure CPU: no LLM call."""
        scores = _score_with(scorer, state, actions)
        records = [CandidateRecord(action=a, score=s) for a, s in zip(actions, scores, strict=True)]
        children = [ActionCandidate(f"next: use {t.name}", t.name, {}) for t in tools]
        children.append(ActionCandidate("next: answer directly", None, {}))
        for i in self._to_expand(records, need_imagined=False):
            child_scores = _score_with(scorer, state.after(records[i].action), children)
            best = _best(child_scores)
            records[i].child_score = child_scores[best]
            records[i].child_action = children[best]
        return records

    # -------------------------------------------------------------------------------- LLM simulation

    async def _score_llm(
        self, ctx: _Context, actions: list[ActionCandidate]
    ) -> tuple[list[CandidateRecord], Provenance, str | None]:
        """Simulate every candidate concurrently, then expand the best M. Returns records, provenance and
        the fallback reason (set only when every simulation call failed)."""
        outcomes = await asyncio.gather(*(self._simulate(ctx, a) for a in actions))
        records = [record for record, _ in outcomes]
        errors = [error for _, error in outcomes if error is not None]
        if len(errors) == len(records):
            # The proposal call just worked, so the candidates are real; failing the turn because ranking
            # them failed would throw that away. The model lists its best action first, so the first
            # candidate is the least-bad unranked pick, and `fallback` tells the caller it is unranked.
            log.warning("mcts_sim_unavailable", error=errors[0], n_candidates=len(records))
            return records, "fallback", f"every simulation call failed ({errors[0]}); took the first proposal"
        expand = self._to_expand(records, need_imagined=True)
        if expand:
            await asyncio.gather(*(self._expand(ctx, records[i]) for i in expand))
        return records, "llm_sim", None

    async def _simulate(self, ctx: _Context, action: ActionCandidate) -> tuple[CandidateRecord, str | None]:
        """One simulation call → (record, backend error text or None). Never raises a BackendError."""
        record = CandidateRecord(action=action, score=NEUTRAL)
        msgs = prompts.messages("mcts_simulate", action=render_action(action), **self._fields(ctx))
        try:
            text = await self._complete(ctx, msgs)
        except BackendError as exc:
            record.note = f"simulation failed: {exc.message}"
            return record, exc.message
        rating = parse_rating(text)
        if rating is None:
            record.note = "simulation reply had no rating; scored neutral 0.5"
            return record, None
        record.score, reply = rating
        imagined = reply.get("imagined_result", reply.get("result"))
        # no imagined_result field (a bare rating, broken JSON): the reply itself is the best description
        record.imagined_result = (
            imagined if isinstance(imagined, str) and imagined.strip() else _preview(text.strip())
        )
        return record, None

    async def _expand(self, ctx: _Context, record: CandidateRecord) -> None:
        """One lookahead call: the best next action after `record`'s imagined result and its rating."""
        msgs = prompts.messages(
            "mcts_expand",
            action=render_action(record.action),
            imagined_result=record.imagined_result or "",
            **self._fields(ctx),
        )
        try:
            text = await self._complete(ctx, msgs)
        except BackendError as exc:
            record.note = f"expansion failed: {exc.message}"
            return
        rating = parse_rating(text)
        if rating is None:
            record.note = "expansion reply had no rating; not backed up"
            return
        record.child_score, reply = rating
        names = frozenset(t.name for t in ctx.tools)
        record.child_action = candidate_from(reply.get("next_action"), names)

    # ------------------------------------------------------------------------------------------ helpers

    def _to_expand(self, records: Sequence[CandidateRecord], *, need_imagined: bool) -> list[int]:
        """The best `expand_top` candidates worth a lookahead, by first-level score (ties: proposal order).

        A direct answer ends the turn, so it has no next step; on the LLM path a candidate whose simulation
        failed has no imagined result to look ahead from (`need_imagined`). Both keep their own score.
        """
        if self.expand_top == 0:
            return []
        eligible = [
            i for i, r in enumerate(records)
            if r.action.tool_name is not None and (r.imagined_result is not None or not need_imagined)
        ]
        eligible.sort(key=lambda i: (-round(records[i].score, _TIE_DIGITS), i))
        return eligible[: self.expand_top]

    def _backed_up(self, record: CandidateRecord) -> float:
        if record.child_score is None:
            return record.score
        return _clamp_unit_score((record.score + self.gamma * record.child_score) / (1.0 + self.gamma))

    def _fields(self, ctx: _Context, **extra: Any) -> dict[str, Any]:
        return {"task": ctx.task, "plan_state": ctx.plan_state, "tools": ctx.rendered_tools, **extra}

    async def _complete(self, ctx: _Context, messages: list[prompts.Message]) -> str:
        body: dict[str, Any] = {
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if self.model:
            body["model"] = self.model
        ctx.calls += 1  # counted before the await: a failed call still cost a round trip
        reply = await self.llm.complete(body)
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict):
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    ctx.usage[key] = ctx.usage.get(key, 0) + value
        return reply_text(reply)


__all__ = ["MCTSReasoner"]
