"""The reply stage: the fast path (one backend call) or the agent path (tool loop → verifier), per the router.

Agent path, in order: the tool loop (MCTS/PRM-picked actions run in the sandbox, `agent/loop.py`), then on
tool-using turns the verifier; a confident REFUTED appends a note to the reply and retracts the lessons this
turn's id produced (DESIGN §4 step 5). A recovered turn the verifier CONFIRMED leaves a lesson candidate that
the `LearnOnRecovery` finisher writes after delivery.

Streaming agent turns (`agent/streaming.py`) send the role chunk at once and the answer when it exists; tool
progress is streamed as content only with `--stream-tool-progress`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ghost_agent.agent.answer_first import AnswerFirst, CheckConfig
from ghost_agent.agent.loop import LoopConfig, LoopEvent, LoopResult, ToolLoop
from ghost_agent.agent.memory_bus import system_extra
from ghost_agent.agent.request_kind import RequestKind, classify
from ghost_agent.agent.routing import takes_agent_path
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages import BackendCallStage
from ghost_agent.agent.streaming import agent_chunks
from ghost_agent.agent.turn import Turn
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger
from ghost_agent.mcts import MCTSReasoner
from ghost_agent.sandbox.base import ExecLimits
from ghost_agent.tools.base import ToolContext
from ghost_agent.verifier import Evidence, Verdict, Verifier

log = get_logger("agent")

JSON = dict[str, Any]
SANDBOX_TOOLS = frozenset({"python", "bash"})


class RespondStage:
    """Produce the reply: `turn.response` (non-streaming) or `turn.chunks` (streaming)."""

    name = "respond"

    def __init__(self, services: AgentServices) -> None:
        self.services = services
        self.fast = BackendCallStage(services.backend)

    async def run(self, turn: Turn) -> None:
        if not takes_agent_path(turn):
            inject_lessons(turn)
            await self.fast.run(turn)
            return
        agent = AgentTurn(self.services, turn)
        if turn.stream:
            turn.chunks = agent_chunks(turn, agent.run, progress=self.services.settings.stream_tool_progress)
        else:
            text = await agent.run(None)
            turn.response = wire.completion(
                model=str(turn.body.get("model") or ""), content=text, usage_obj=turn.usage,
                id=_completion_id(turn),
            )


def choose_strategy(setting: str, kind: RequestKind) -> str:
    """The turn's strategy: the setting, with `auto` = answer-first unless the request is about workspace files
    (a draft cannot see them; the tool loop reads them first)."""
    if setting != "auto":
        return setting
    return "action-loop" if kind.files else "answer-first"


def inject_lessons(turn: Turn) -> None:
    """Fast path: put the per-turn system block (lessons, selfhood) in front of the client's messages."""
    extra = system_extra(turn)
    messages = turn.body.get("messages")
    if extra and isinstance(messages, list) and not turn.body.get("tools"):
        turn.body["messages"] = [{"role": "system", "content": extra}, *messages]


def _completion_id(turn: Turn) -> str:
    return f"chatcmpl-{turn.trajectory_id}" if turn.trajectory_id else wire.completion_id()


class AgentTurn:
    """One agent-path turn: tool loop, verifier, lesson candidate; results land in `turn.state`."""

    def __init__(self, services: AgentServices, turn: Turn) -> None:
        self.services = services
        self.turn = turn

    async def run(self, on_event: Any) -> str:
        """Run the loop and the verifier; returns the reply text (also `turn.state["final_response"]`).

        A BackendError propagates after the steps done so far are stored on the turn (the trajectory records
        them and is marked FAILED).
        """
        turn, services, settings = self.turn, self.services, self.services.settings
        started = time.perf_counter()
        user_request = wire.last_user_text(turn.body)
        sandbox = await self._sandbox()
        workspaces = services.workspaces
        if workspaces is None:
            raise RuntimeError("workspaces are not initialised (the lifespan sets them up)")
        limits = ExecLimits(
            timeout_s=settings.sandbox_timeout_s,
            memory_mb=settings.sandbox_memory_mb,
            max_procs=settings.sandbox_max_procs,
            max_output_bytes=settings.sandbox_max_output_kb * 1024,
        )
        with workspaces.active(turn.session_id):
            ctx = ToolContext.for_session(
                workspaces, turn.session_id, sandbox=sandbox, limits=limits, memory_searcher=self._searcher()
            )
            kind = classify(user_request, ctx.workspace)
            strategy = choose_strategy(settings.agent_strategy, kind)
            turn.state["request_kind"] = kind.label
            try:
                if strategy == "answer-first":
                    result = await AnswerFirst(services.backend, services.registry, self._check_config()).run(
                        list(turn.body.get("messages") or []), ctx, user_request=user_request,
                        extra_system=system_extra(turn), client_body=turn.body, on_event=on_event, kind=kind,
                    )
                else:
                    result = await self._loop(turn).run(
                        list(turn.body.get("messages") or []), ctx, user_request=user_request,
                        extra_system=system_extra(turn), on_event=on_event,
                    )
            except BackendError as exc:
                turn.state["steps"] = list(getattr(exc, "partial_steps", []) or [])
                turn.state["agent"] = {"strategy": strategy, "error": exc.message}
                raise
        if strategy == "answer-first":
            text = self._execution_verdict(result)
        else:
            text = await self._verify(user_request, result)
        turn.state["final_response"] = text
        turn.state["steps"] = result.steps
        turn.state["agent"] = {
            "strategy": strategy,
            "aborted": result.aborted,
            "llm_calls": result.llm_calls,
            "native_tools": result.native_tools_used,
            "recovered": result.recovered,
            "ms": round((time.perf_counter() - started) * 1000, 3),
            "cost": {
                "llm_calls": result.llm_calls + (1 if turn.state.get("verifier_called") else 0),
                "prompt_tokens": result.usage.get("prompt_tokens", 0),
                "completion_tokens": result.usage.get("completion_tokens", 0),
                "sandbox_runs": sum(1 for s in result.steps
                                    if s.tool_name in SANDBOX_TOOLS and not s.extra.get("loop_guard")),
            },
            **result.info,
        }
        turn.usage = wire.usage(result.usage.get("prompt_tokens", 0), result.usage.get("completion_tokens", 0))
        turn.finish_reason = "stop"
        log.info(
            "agent_turn",
            request_id=turn.request_id,
            trajectory_id=turn.trajectory_id,
            strategy=strategy,
            kind=kind.label,
            steps=len(result.steps),
            aborted=result.aborted,
            llm_calls=result.llm_calls,
            verdict=(turn.state.get("verifier") or {}).get("verdict"),
            ms=turn.state["agent"]["ms"],
        )
        return text

    def _loop(self, turn: Turn) -> ToolLoop:
        settings = self.services.settings
        return ToolLoop(
            self.services.backend,
            self.services.registry,
            LoopConfig(
                max_steps=settings.max_steps,
                native_tools=settings.native_tools,
                model=turn.body.get("model") or None,
                max_tokens=settings.agent_max_tokens,
            ),
            mcts=self._mcts(turn),
            prm_scorer=self.services.prm_scorer,
        )

    def _check_config(self) -> CheckConfig:
        settings = self.services.settings
        return CheckConfig(
            model=self.turn.body.get("model") or None,
            max_tokens=settings.agent_max_tokens,
            model_tests=settings.check_model_tests,
            revisions=settings.check_revisions,
            samples=settings.check_samples,
            compute=settings.check_compute,
        )

    def _execution_verdict(self, result: LoopResult) -> str:
        """Answer-first turns are judged by what ran, not by another model call: the request's own examples
        passing is a confirmation, failing after the repairs a refutation (noted in the reply)."""
        text = result.final_text
        user = result.info.get("user_cases")
        if not isinstance(user, dict) or not user.get("total"):
            return text
        passed, total = int(user.get("passed", 0)), int(user["total"])
        if passed == total:
            verdict = Verdict("CONFIRMED", 0.9, f"the code passes the request's {total} example(s)")
        else:
            failing = "; ".join(str(f) for f in user.get("failing", [])[:3])
            verdict = Verdict("REFUTED", 0.9, f"the code fails {total - passed} of the request's {total} "
                              f"example(s): {failing}")
        self.turn.state["verifier"] = {**verdict.to_dict(), "source": "execution"}
        if verdict.verdict == "REFUTED":
            text += Verifier.note_for_reply(verdict)
        log.info("verifier_verdict", verdict=verdict.verdict, confidence=verdict.confidence, source="execution")
        return text

    async def _sandbox(self) -> Any:
        services = self.services
        if services.sandbox is None and services.sandbox_error is None:
            # The startup probe may still be running: wait for it (the detection cache serializes callers).
            from ghost_agent.sandbox.base import SandboxError
            from ghost_agent.sandbox.detect import get_detection

            try:
                services.sandbox = (await asyncio.to_thread(get_detection, services.settings)).backend
            except SandboxError as exc:
                services.sandbox_error = str(exc)
        return services.sandbox

    def _mcts(self, turn: Turn) -> MCTSReasoner | None:
        settings = self.services.settings
        if not settings.mcts:
            return None
        if not settings.mcts_simulate and not self.services.prm_scorer.has_model:
            return None  # no learned value yet and simulation is off: single-shot until the PRM is trained
        return MCTSReasoner(
            self.services.backend,
            max_candidates=settings.mcts_candidates,
            prm_scorer=self.services.prm_scorer,
            expand_top=settings.mcts_expand,
            model=turn.body.get("model") or None,
            max_tokens=min(settings.agent_max_tokens, 512),
        )

    def _searcher(self) -> Any:
        memory = self.services.memory
        if memory is None:
            return None

        async def search(query: str, k: int) -> list[JSON]:
            found = await memory.asearch(query, k)
            return [{**s.lesson.to_dict(), "score": s.score} for s in found]

        return search

    async def _verify(self, user_request: str, result: LoopResult) -> str:
        """Run the verifier on tool-using turns; returns the reply text, with a note when confidently refuted."""
        turn, services = self.turn, self.services
        text = result.final_text
        if not result.steps or not services.settings.verifier:
            return text
        verifier = Verifier(
            services.backend,
            model=turn.body.get("model") or None,
            refute_confidence=services.settings.verifier_refute_confidence,
        )
        evidence = [Evidence(tool=t, code=c, output=o, ok=ok) for t, c, o, ok in result.evidence]
        turn.state["verifier_called"] = True
        verdict = await verifier.verify(user_request, evidence, text)
        turn.state["verifier"] = verdict.to_dict()
        if verifier.should_retract(verdict):
            text += verifier.note_for_reply(verdict)
            if services.memory is not None and turn.trajectory_id:
                try:
                    removed = await services.memory.aretract_lessons_from_trajectory(turn.trajectory_id)
                    turn.state["lessons_retracted"] = removed
                except Exception as exc:  # noqa: BLE001 - never break the turn over bookkeeping
                    log.warning("retraction_failed", trajectory_id=turn.trajectory_id, error=repr(exc))
        elif verdict.verdict == "CONFIRMED" and result.recovered:
            turn.state["lesson_candidate"] = lesson_from_recovery(user_request, result)
        return text


def lesson_from_recovery(user_request: str, result: LoopResult) -> dict[str, str] | None:
    """The mistake (the first failed step) and the fix (the first successful step after it), or None."""
    steps = result.steps
    for i, failed in enumerate(steps):
        if failed.ok:
            continue
        for fixed in steps[i + 1:]:
            if fixed.ok:
                return {
                    "task": user_request[:300],
                    "mistake": f"{failed.tool_name} failed ({_failure_line(failed)}) "
                    f"{_args_summary(failed.tool_args)}"[:600],
                    "solution": f"{fixed.tool_name} {_args_summary(fixed.tool_args)}"[:600],
                }
        return None
    return None


def _failure_line(step: Any) -> str:
    """The most telling line of a failure: the last line of the output (a traceback's exception), else the error."""
    lines = [ln.strip() for ln in (step.result_preview or "").splitlines() if ln.strip() and "[exit code" not in ln]
    return (lines[-1] if lines else step.error or "error")[:200]


def _args_summary(args: Any) -> str:
    if isinstance(args, dict):
        for key in ("code", "command", "cmd"):
            if isinstance(args.get(key), str):
                return f"with {key}:\n{args[key][:500]}"
    return str(args)[:500]


__all__ = ["AgentTurn", "LoopEvent", "RespondStage", "inject_lessons", "lesson_from_recovery"]
