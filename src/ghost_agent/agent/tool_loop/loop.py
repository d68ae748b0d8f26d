"""The tool loop: the heart of an agent turn (DESIGN §4 step 4).

Each step the model (or, with MCTS, the best of K proposed candidates) chooses a tool call or the final
answer; calls run through `ToolRegistry.call` (sandboxed, never raising) and their results, capped with a
marker, go back into the conversation. The loop ends on a final answer, on a repeated failing call (loop
guard) or after `max_steps` tool calls (one forced tool-less answer call). Protocol text never becomes the
reply: when the tool phase fails (the loop guard, a reply that is neither a usable action nor an answer, a
forced answer that still acts) the turn falls back to the bare model's answer to the client's messages.

Failure contract: a `BackendError` from any model call propagates unchanged, carrying what the turn did so
far as attributes (`partial_steps`, `partial_llm_calls`, `partial_usage`; read them with `partial_steps()`)
so the caller can still record a FAILED trajectory with its steps. Everything the model does wrong (broken
JSON, unknown tools, bad arguments, an MCTS search with no usable proposal) is handled in-band and logged.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ghost_agent.agent.strategy import (
    LoopEvent,
    LoopResult,
    LoopRun,
    StrategyContext,
    arguments_text,
    call_key,
    evidence_of,
    has_model,
    message_of,
    primary_args,
)
from ghost_agent.agent.tool_loop import prompting
from ghost_agent.agent.tool_loop.protocol import parse_action, render_action
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError, LLMBackend
from ghost_agent.logging import get_logger
from ghost_agent.mcts import MCTSError, MCTSReasoner, MCTSResult, PlanState
from ghost_agent.prm.features import ActionCandidate
from ghost_agent.tools.base import cap_text, one_line, preview_text
from ghost_agent.tools.registry import ToolRegistry, parse_arguments
from ghost_agent.trajectories.record import Step

log = get_logger("agent.loop")

LOOP_MARKER = "[ATTEMPT_ABORTED_LOOP]"
NATIVE_MODES = ("auto", "on", "off")
# Statuses with which an OpenAI-compatible server refuses a request it cannot handle (here: `tools`).
TOOLS_REJECTED_STATUSES = frozenset({400, 404, 422})
# `select_best_action` raises MCTSError after its proposal call and one retry, both spent.
MCTS_FAILED_PROPOSAL_CALLS = 2
# What the PRM labels read back from each step (labels.PRM_STATE_KEY): the loop keeps no plan queue, so
# nothing is pending and every decision is one level deep.
PRM_STATE = {"pending_count": 0, "plan_depth": 1}


@dataclass
class LoopConfig:
    """How one tool loop runs.

    `native_tools`: "on" always sends the OpenAI `tools` list, "off" never does, "auto" sends it until the
    backend rejects a request carrying it (400/404/422), then retries without and stops sending it.
    `result_chars` caps each tool result the model sees (a marker replaces the middle).
    """

    max_steps: int = 6
    native_tools: str = "auto"
    model: str | None = None
    temperature: float = 0.2
    max_tokens: int = 1024
    result_chars: int = 4000

    def __post_init__(self) -> None:
        if self.native_tools not in NATIVE_MODES:
            raise ValueError(f"native_tools must be one of {', '.join(NATIVE_MODES)}, got {self.native_tools!r}")
        if self.max_steps < 0:
            raise ValueError(f"max_steps must be 0 or more, got {self.max_steps}")
        if self.result_chars < 1:
            raise ValueError(f"result_chars must be at least 1, got {self.result_chars}")


MAX_REPEATS = 2  # identical repeats of a successful call before the loop asks for the answer


def partial_steps(exc: BaseException) -> list[Step]:
    """The steps a loop had completed when `exc` (a BackendError it raised) interrupted it; [] otherwise."""
    steps = getattr(exc, "partial_steps", None)
    return list(steps) if isinstance(steps, list) else []


class ToolLoop:
    """Runs agent turns over `backend` with the tools of `registry`.

    With `mcts`, each step's action is chosen by `mcts.select_best_action`; the PRM fast path is requested
    (a PlanState passed) whenever `prm_scorer` has a model at that moment. An MCTSError falls back to a
    single-shot step for that iteration. One instance may serve concurrent turns: the only state it keeps
    across runs is whether the backend rejected native `tools` ("auto" mode).
    """

    def __init__(
        self,
        backend: LLMBackend,
        registry: ToolRegistry,
        config: LoopConfig,
        *,
        mcts: MCTSReasoner | None = None,
        prm_scorer: Any = None,
    ) -> None:
        self.backend = backend
        self.registry = registry
        self.config = config
        self.mcts = mcts
        self.prm_scorer = prm_scorer
        self.native_rejected = False

    @property
    def native_enabled(self) -> bool:
        """Whether the next single-shot model call carries the OpenAI `tools` list."""
        mode = self.config.native_tools
        return mode == "on" or (mode == "auto" and not self.native_rejected)

    async def run(self, ctx: StrategyContext) -> LoopResult:
        """One agent turn over the client's messages (see the module docstring for the contract).

        Of `ctx` the loop uses the messages, the tool context, the request text, the per-turn system text and
        the lessons block (`notes`), and awaits `on_event` at each step start/end and at the answer.
        """
        started = time.perf_counter()
        conversation = prompting.build_conversation(
            prompting.system_prefix(self.registry), ctx.extra_system, ctx.messages, ctx.notes
        )
        run = LoopRun(conversation=conversation, tool_ctx=ctx.tool_ctx, user_request=ctx.user_request,
                      on_event=ctx.on_event)
        run.direct_messages = prompting.direct_messages(ctx.extra_system, ctx.messages, ctx.notes)
        try:
            await self._drive(run)
        except BackendError as exc:
            # Named attributes on the exception the caller already handles: no wrapper type to unwrap.
            setattr(exc, "partial_steps", list(run.steps))  # noqa: B010 - BackendError does not declare them
            setattr(exc, "partial_llm_calls", run.llm_calls)  # noqa: B010
            setattr(exc, "partial_usage", dict(run.usage))  # noqa: B010
            log.warning("agent_loop_backend_error", status=exc.status, error=exc.message,
                        steps=len(run.steps), llm_calls=run.llm_calls)
            raise
        result = run.result()
        log.info("agent_loop_done", steps=len(result.steps), aborted=result.aborted, llm_calls=result.llm_calls,
                 recovered=result.recovered, native=result.native_tools_used,
                 ms=round((time.perf_counter() - started) * 1000.0, 1))
        return result

    # ------------------------------------------------------------------------------------------ driving

    async def _drive(self, run: LoopRun) -> None:
        while run.final_text is None:
            if len(run.steps) >= self.config.max_steps:
                await self._forced_final(run)
                return
            if run.repeats >= MAX_REPEATS:
                await self._forced_final(run, reason="repeat")
                return
            await self._single_step(run)

    async def _single_step(self, run: LoopRun) -> None:
        """One model call (plus at most one format retry) → one tool call or the final answer."""
        retried = False
        while True:
            reply = await self._complete(run, tools=self.native_enabled)
            message = message_of(reply)
            calls = message.get("tool_calls")
            if isinstance(calls, list) and calls and isinstance(calls[0], Mapping):
                await self._native_call(run, message, calls[0])
                return
            content = prompting.content_text(message.get("content"))
            parsed = parse_action(content, self.registry.names, primary_args=primary_args(self.registry))
            if parsed.kind == "invalid":
                if not retried:
                    retried = True
                    log.info("agent_protocol_retry", error=parsed.error, reply=one_line(content, 300))
                    run.conversation.append({"role": "assistant", "content": content})
                    reminder = prompting.format_reminder(parsed.error or "unusable reply", self.registry.names)
                    run.conversation.append({"role": "user", "content": reminder})
                    continue
                log.warning("agent_protocol_invalid", error=parsed.error, reply=one_line(content, 300))
                await self._fallback(run, "protocol")
                return
            if parsed.kind == "answer":
                await self._finish(run, parsed.answer or "")
                return
            tool = parsed.tool or ""
            own = ActionCandidate(parsed.description, tool, parsed.args)
            search = await self._search(run, own)
            if search is not None and search.winner_index != 0:
                await self._act_on_search(run, search)
                return
            run.conversation.append({"role": "assistant", "content": content})
            text = await self._act(run, tool, parsed.args, parsed.args, parsed.description, source="json",
                                   **_search_fields(search))
            if text is not None:
                run.conversation.append({"role": "user", "content": prompting.tool_result_message(tool, text)})
            return

    async def _native_call(self, run: LoopRun, message: Mapping[str, Any], call: Mapping[str, Any]) -> None:
        """Execute the first native tool call; the assistant message and a `tool` result go back."""
        fn = call.get("function")
        fn = fn if isinstance(fn, Mapping) else {}
        name = str(fn.get("name") or "")
        raw_args = fn.get("arguments")
        args, _problem = parse_arguments(raw_args)
        search = await self._search(run, ActionCandidate("", name, args if args is not None else {}))
        if search is not None and search.winner_index != 0:
            await self._act_on_search(run, search)
            return
        call_id = str(call.get("id") or f"call_{len(run.steps)}")
        # Only the call we execute goes back: every tool_call in an assistant message needs a tool reply.
        run.conversation.append({
            "role": "assistant",
            "content": message.get("content") or None,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": arguments_text(raw_args)}}],
        })
        run.native_used = True
        recorded = args if args is not None else {"value": raw_args}
        text = await self._act(run, name, recorded, raw_args, "", source="native", **_search_fields(search))
        if text is not None:
            run.conversation.append({"role": "tool", "tool_call_id": call_id, "content": text})

    async def _search(self, run: LoopRun, own: ActionCandidate) -> MCTSResult | None:
        """With MCTS on, let the model's own tool action compete with proposed alternatives (PRM fast path
        when a model is loaded). None when MCTS is off or found nothing usable (the own action then runs).

        The search only starts once the model wants to act: a turn the model answers directly costs one call,
        as on the fast path."""
        mcts = self.mcts
        if mcts is None:
            return None
        try:
            result = await mcts.select_best_action(
                task=run.user_request,
                plan_state=prompting.plan_summary(run.steps),
                available_tools=self.registry.schemas_openai(),
                prm_state=self._prm_state(run) if has_model(self.prm_scorer) else None,
                seed=[own],
                # the model chose to act: the search picks WHICH action, not whether to skip acting (measured:
                # a 1.5B model's simulations rate "answer from memory" highly and then answers wrong)
                allow_answer=False,
            )
        except MCTSError as exc:
            run.llm_calls += MCTS_FAILED_PROPOSAL_CALLS
            run.add_usage(exc.usage)
            log.warning("agent_mcts_fallback", error=str(exc), response=one_line(exc.response, 300))
            return None
        run.llm_calls += result.llm_calls
        run.add_usage(result.usage)
        return result

    async def _act_on_search(self, run: LoopRun, result: MCTSResult) -> None:
        """Run the alternative MCTS preferred over the model's own action (or answer, if that won)."""
        action = result.action
        if action.tool_name is None:
            run.conversation.append({"role": "user", "content": prompting.final_nudge("answer")})
            await self._final_answer(run, await self._complete(run, tools=False))
            return
        raw = action.tool_args
        args: JSON = dict(raw) if isinstance(raw, Mapping) else {} if raw is None else {"value": raw}
        run.conversation.append({"role": "assistant",
                                 "content": render_action(action.tool_name, args, action.description)})
        text = await self._act(run, action.tool_name, args, args, action.description, source="mcts",
                               **_search_fields(result))
        if text is not None:
            run.conversation.append(
                {"role": "user", "content": prompting.tool_result_message(action.tool_name, text)}
            )

    async def _forced_final(self, run: LoopRun, reason: str = "max_steps") -> None:
        """The step budget is spent (or the model keeps repeating itself): one tool-less call for the answer,
        whatever it says."""
        run.aborted = reason
        log.info("agent_max_steps" if reason == "max_steps" else "agent_repeats", steps=len(run.steps))
        run.conversation.append({"role": "user", "content": prompting.final_nudge("max_steps")})
        await self._final_answer(run, await self._complete(run, tools=False))

    # ----------------------------------------------------------------------------------------- acting

    async def _act(
        self,
        run: LoopRun,
        tool: str,
        args: JSON,
        call_args: Any,
        description: str,
        *,
        source: str,
        prm_score: float | None = None,
        extra: JSON | None = None,
    ) -> str | None:
        """Run one tool call and record its step; returns the result text for the model, or None when the
        loop guard stopped the turn instead. `call_args` is what the registry gets (a native call's raw
        string, so a malformed one earns the registry's own error message); `args` what the step records."""
        step = Step(
            i=len(run.steps),
            description=description.strip() or f"{tool} call",
            tool_name=tool,
            tool_args=args,
            extra={"prm_state": dict(PRM_STATE), "source": source, **(extra or {})},
            prm_score=prm_score,
        )
        key = call_key(tool, args)
        repeated = run.failing.get(key)
        if repeated is not None:
            await self._loop_guard(run, step, repeated)
            return None
        done = run.succeeded.get(key)
        if done is not None:
            # The exact call already succeeded: its result is in the conversation. Running it again cannot
            # say anything new (small models loop here), so remind the model instead, and stop on a 2nd time.
            run.repeats += 1
            log.info("agent_repeat_call", tool=tool, step=done, repeats=run.repeats)
            return prompting.repeat_reminder(done + 1, run.steps[done].result_preview)
        await run.emit("step_start", step, f"step {step.i + 1}: {step.description}")
        t0 = time.perf_counter()
        result = await self.registry.call(tool, call_args, run.tool_ctx)
        step.duration_ms = round((time.perf_counter() - t0) * 1000.0, 3)
        message = result.to_message()
        text, _ = cap_text(message, self.config.result_chars)
        step.ok, step.error = result.ok, result.error
        step.result_preview = preview_text(message)
        if result.truncated or len(text) < len(message):
            step.extra["truncated"] = True
        run.steps.append(step)
        run.evidence.append(evidence_of(tool, args, text, result.ok))
        if result.ok:
            run.failing.clear()  # something worked since: re-running an old failing call may now be a fix
            # only an immediate repeat is pointless; after other calls the same call may see new state
            run.succeeded = {key: step.i}
        else:
            run.succeeded = {}
            run.failing[call_key(tool, args)] = step.i
        log.info("agent_step", i=step.i, tool=tool, ok=result.ok, source=source, ms=round(step.duration_ms, 1))
        outcome = "ok" if result.ok else f"failed: {one_line(result.error or 'error', 120)}"
        await run.emit("step_end", step, f"step {step.i + 1}: {tool} {outcome} ({step.duration_ms:.0f} ms)")
        return text

    async def _loop_guard(self, run: LoopRun, step: Step, repeated: int) -> None:
        """The model re-issued a call that failed (nothing succeeded since): record it unexecuted, stop."""
        step.ok = False
        step.error = f"loop guard: identical to failing step {repeated + 1}; not run again"
        step.extra["loop_guard"] = {"repeats_step": repeated}
        run.steps.append(step)
        run.aborted = "loop"
        log.warning("agent_loop_guard", tool=step.tool_name, repeats_step=repeated, steps=len(run.steps))
        await run.emit("step_end", step, f"step {step.i + 1}: {step.tool_name} repeated a failing call; stopping")
        await self._fallback(run, "loop")

    async def _finish(self, run: LoopRun, text: str) -> None:
        run.final_text = text
        await run.emit("answer", None, one_line(text, 200))

    # -------------------------------------------------------------------------------------- model calls

    async def _complete(self, run: LoopRun, *, tools: bool, messages: list[JSON] | None = None) -> JSON:
        """One model call over the conversation so far (or over `messages`); in "auto" mode a request refused
        because of its `tools` is retried once without them, and they are not sent again by this ToolLoop."""
        body: JSON = {
            # a snapshot: the conversation keeps growing after the call
            "messages": list(run.conversation if messages is None else messages),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "stream": False,
        }
        if self.config.model:
            body["model"] = self.config.model
        schemas = self.registry.schemas_openai() if tools else []
        tools = bool(schemas)  # an empty `tools` array is itself rejected by some servers: send none
        if tools:
            body["tools"] = schemas
        run.llm_calls += 1
        try:
            reply = await self.backend.complete(body)
        except BackendError as exc:
            if tools and self.config.native_tools == "auto" and exc.status in TOOLS_REJECTED_STATUSES:
                self.native_rejected = True
                log.warning("agent_native_tools_unsupported", status=exc.status, error=one_line(exc.message, 300))
                return await self._complete(run, tools=False, messages=messages)
            raise
        run.add_usage(reply.get("usage") if isinstance(reply, Mapping) else None)
        return reply

    async def _final_answer(self, run: LoopRun, reply: JSON) -> None:
        """The answer in a reply to a "no more tools" nudge; a reply that still acts (or says nothing) is no
        answer for the user: the turn falls back to a direct one."""
        content = prompting.content_text(message_of(reply).get("content")).strip()
        parsed = parse_action(content)
        if parsed.kind == "answer" and parsed.answer:
            await self._finish(run, parsed.answer)
        else:
            await self._fallback(run, "no_answer")

    async def _fallback(self, run: LoopRun, reason: str) -> None:
        """The tool phase failed (a repeated failing call, replies that are neither an action nor an answer):
        the user gets what the bare model answers to their messages — never a protocol fragment or an apology
        about the loop. The tool work stays in the steps (and `aborted`) for the record."""
        run.info.fallback = reason
        log.info("agent_direct_fallback", reason=reason, steps=len(run.steps))
        reply = await self._complete(run, tools=False, messages=run.direct_messages)
        await self._finish(run, prompting.content_text(message_of(reply).get("content")).strip())

    @staticmethod
    def _prm_state(run: LoopRun) -> PlanState:
        return PlanState(
            user_request=run.user_request,
            steps_so_far=len(run.steps),
            failures_so_far=sum(1 for s in run.steps if not s.ok),
            pending_count=PRM_STATE["pending_count"],
            plan_depth=PRM_STATE["plan_depth"],
            tools_used=frozenset(s.tool_name for s in run.steps if s.tool_name),
            tools_failed=frozenset(s.tool_name for s in run.steps if s.tool_name and not s.ok),
        )


__all__ = ["LOOP_MARKER", "LoopConfig", "LoopEvent", "LoopResult", "ToolLoop", "partial_steps"]


def _search_fields(result: MCTSResult | None) -> dict[str, Any]:
    """The `_act` keywords recording an MCTS choice on the step (nothing without a search)."""
    if result is None:
        return {}
    search: JSON = {"provenance": result.provenance, "candidates": len(result.candidates),
                    "winner_index": result.winner_index, "llm_calls": result.llm_calls}
    if result.fallback_reason:
        search["fallback_reason"] = result.fallback_reason
    return {"prm_score": result.score, "extra": {"mcts": search}}
