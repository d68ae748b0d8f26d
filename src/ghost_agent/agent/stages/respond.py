"""The reply stage: the fast path (one backend call) or the agent path (tool loop → verifier), per the router.

Agent path, in order: the tool loop (MCTS/PRM-picked actions run in the sandbox, `agent/tool_loop/loop.py`), then on
tool-using turns the verifier; a confident REFUTED appends a note to the reply and retracts the lessons this
turn's id produced (DESIGN §4 step 5). A recovered turn the verifier CONFIRMED leaves a lesson candidate that
the `LearnOnRecovery` finisher writes after delivery (a distilled, bounded lesson scoped to this session).

Lessons and worked examples reach the model only as delimited data blocks in front of the last user message
(`TurnState.notes`: the memory bus's notes, then the experience bank's examples; `prompting.with_notes`), never as
system text, on every path: fast, answer-first and tool loop.

Streaming agent turns (`agent/compat/streaming.py`) send the role chunk at once and the answer when it exists; tool
progress is streamed as content only with `--stream-tool-progress`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ghost_agent.agent.checking.answer_first import AnswerFirst, CheckConfig
from ghost_agent.agent.compat import structured
from ghost_agent.agent.compat.client_tools import ClientToolCalls, follow_up, wants_conversion
from ghost_agent.agent.compat.notes_echo import strip_echo_stream
from ghost_agent.agent.compat.streaming import agent_chunks
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages.choices import respond_choices
from ghost_agent.agent.stages.learn import lesson_from_recovery
from ghost_agent.agent.stages.prepare import BackendCallStage
from ghost_agent.agent.stages.routing import takes_agent_path
from ghost_agent.agent.strategy import OnEvent, Strategy, StrategyContext
from ghost_agent.agent.tool_loop.loop import LoopConfig, LoopEvent, LoopResult, ToolLoop, partial_steps
from ghost_agent.agent.tool_loop.prompting import direct_messages
from ghost_agent.agent.turn import Turn
from ghost_agent.agent.turn_state import AgentCost, AgentFailure, AgentReport
from ghost_agent.agent.verifier import Evidence, Verdict, Verifier
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger
from ghost_agent.mcts import MCTSReasoner
from ghost_agent.memory.bus import strip_notes_echo
from ghost_agent.memory.sanitize import neutralize
from ghost_agent.sandbox.base import ExecLimits
from ghost_agent.text.request_kind import RequestKind, classify
from ghost_agent.tools.base import ToolContext

if TYPE_CHECKING:
    from ghost_agent.settings import AgentSettings, SandboxSettings

log = get_logger("agent")

SANDBOX_TOOLS = frozenset({"python", "bash"})


@dataclass(frozen=True)
class AgentConfig:
    """The agent path's settings as the objects that use them, built once with the pipeline: the sandbox limits
    of each tool call, the tool loop's config and answer-first's checks. A turn only names its model in them."""

    limits: ExecLimits
    loop: LoopConfig
    check: CheckConfig

    @classmethod
    def from_settings(cls, agent: AgentSettings, sandbox: SandboxSettings) -> AgentConfig:
        return cls(
            limits=ExecLimits.from_settings(sandbox),
            loop=LoopConfig(max_steps=agent.max_steps, native_tools=agent.native_tools, max_tokens=agent.max_tokens),
            check=CheckConfig(
                max_tokens=agent.max_tokens,
                model_tests=agent.check_model_tests,
                revisions=agent.check_revisions,
                samples=agent.check_samples,
                compute=agent.check_compute,
                preferences=agent.preference_rewrite,
                rules=agent.preference_rules,
            ),
        )


class RespondStage:
    """Produce the reply: `turn.response` (non-streaming) or `turn.chunks` (streaming)."""

    name = "respond"

    def __init__(self, services: AgentServices) -> None:
        self.services = services
        self.config = AgentConfig.from_settings(services.settings.agent, services.settings.sandbox)
        self.fast = BackendCallStage(services.backend)
        self.client_tools = ClientToolCalls(services.backend)

    async def run(self, turn: Turn) -> None:
        if turn.n > 1:
            # Agent turns share the session's workspace: one after the other. Fast-path calls run concurrently.
            await respond_choices(turn, self._respond_one, concurrent=not takes_agent_path(turn))
            return
        await self._respond_one(turn)

    async def _respond_one(self, turn: Turn) -> None:
        if not takes_agent_path(turn):
            await self.fast.run(turn, body=fast_body(turn))
            if turn.state.notes and not turn.body.get("tools"):  # the notes were sent: the model may echo them
                if turn.chunks is not None:
                    turn.chunks = strip_echo_stream(turn.chunks)
                elif turn.response is not None:
                    _strip_echo(turn.response)
            if wants_conversion(turn.body):
                if turn.chunks is not None:
                    turn.chunks = self.client_tools.convert_stream(turn, turn.chunks)
                else:
                    await self.client_tools.convert_response(turn)
            elif turn.response is not None and structured.kind(turn.body.get("response_format")):
                await self._structured(turn)
            return
        agent = AgentTurn(self.services, turn, self.config)
        if turn.stream:
            turn.chunks = agent_chunks(turn, agent.run, progress=self.services.settings.agent.stream_tool_progress)
        else:
            text = await agent.run(None)
            turn.response = wire.completion(
                model=str(turn.body.get("model") or ""), content=text, usage_obj=turn.usage,
                id=_completion_id(turn),
            )
            if turn.state.logprobs is not None:
                turn.response["choices"][0]["logprobs"], turn.state.logprobs = turn.state.logprobs, None


    async def _structured(self, turn: Turn) -> None:
        """Fast path under `response_format`: the reply parses and validates, after one repair round if not."""
        assert turn.response is not None
        choices = turn.response.get("choices") or [{}]
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            return
        content: str = message["content"]

        async def ask(instruction: str) -> str:
            reply = await follow_up(self.services.backend, turn, content, instruction)
            return reply["content"] if isinstance(reply.get("content"), str) else ""

        message["content"], check = await structured.ensure(content, turn.body.get("response_format"), ask)
        turn.state.structured = check
        if check is not None and not check.valid:
            log.warning("structured_output_invalid", request_id=turn.request_id, **check.to_json())


def choose_strategy(setting: str, kind: RequestKind) -> str:
    """The turn's strategy: the setting, with `auto` = answer-first unless the request is about workspace files
    (a draft cannot see them; the tool loop reads them first).

    Code asked for over data files ("a bash one-liner that counts the WARN lines in app.log", "a query for
    setup.sql's tables") is answer-first: the user wants the code, which the draft writes and the checks run in
    the workspace, where the files are; self-play saw the tool loop answer such requests with the number its own
    run printed. Code about a program file ("fix the bug in utils.py") stays in the tool loop: it edits a file
    the draft cannot see."""
    if setting != "auto":
        return setting
    if kind.files and not (kind.code and not kind.source_files):
        return "action-loop"
    return "answer-first"


def fast_body(turn: Turn) -> JSON:
    """The fast path's request: a copy of the client's body with the per-turn system text (selfhood) in front
    and the lessons and worked-examples blocks in the last user message; `turn.body` itself is never changed (it
    is what the trajectory records as the user's request). Client tools → the body as sent: the client drives
    that turn."""
    extra, notes = turn.state.selfhood_prefix, turn.state.notes
    messages = turn.body.get("messages")
    if not (extra or notes) or not isinstance(messages, list) or turn.body.get("tools"):
        return turn.body
    return {**turn.body, "messages": direct_messages(extra, messages, notes)}


def _strip_echo(response: JSON) -> None:
    """A non-streamed fast reply without a copy of the notes or examples block the model may have echoed (a streamed one
    goes through `notes_echo.strip_echo_stream`)."""
    for choice in response.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            message["content"] = strip_notes_echo(message["content"])


def _completion_id(turn: Turn) -> str:
    return f"chatcmpl-{turn.trajectory_id}" if turn.trajectory_id else wire.completion_id()


class AgentTurn:
    """One agent-path turn: tool loop, verifier, lesson candidate; results land in `turn.state` (its agent-path
    fields: request_kind, agent, steps, final_response, logprobs, verifier*, lessons_retracted, lesson_candidate)."""

    def __init__(self, services: AgentServices, turn: Turn, config: AgentConfig) -> None:
        self.services = services
        self.turn = turn
        self.config = config

    async def run(self, on_event: OnEvent | None) -> str:
        """Run the loop and the verifier; returns the reply text (also `turn.state.final_response`).

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
        with workspaces.active(turn.session_id):
            ctx = ToolContext.for_session(
                workspaces, turn.session_id, sandbox=sandbox, sandbox_error=services.sandbox_error,
                limits=self.config.limits, memory_searcher=self._searcher(),
            )
            kind = classify(user_request, ctx.workspace)
            strategy = choose_strategy(settings.agent.strategy, kind)
            if structured.kind(turn.body.get("response_format")):
                strategy = "answer-first"  # the reply must be the client's JSON, generated under its constraint
            turn.state.request_kind = kind
            given = StrategyContext(
                messages=list(turn.body.get("messages") or []), tool_ctx=ctx, user_request=user_request, kind=kind,
                extra_system=turn.state.selfhood_prefix, client_body=turn.body,
                notes=turn.state.notes_for(by_rule=strategy == "answer-first" and settings.agent.preference_rules),
                preferences=turn.state.preferences, on_event=on_event,
            )
            try:
                runner: Strategy = (
                    AnswerFirst(services.backend, services.registry, self._check_config())
                    if strategy == "answer-first" else self._loop(turn)
                )
                result = await runner.run(given)
            except BackendError as exc:
                turn.state.steps = partial_steps(exc)
                turn.state.agent = AgentFailure(strategy=strategy, error=exc.message)
                raise
        if strategy == "answer-first":
            text = self._execution_verdict(result)
        else:
            text = await self._verify(user_request, result)
        turn.state.final_response = text
        if result.logprobs is not None and text == result.final_text:
            turn.state.logprobs = result.logprobs
        turn.state.steps = result.steps
        report = AgentReport(
            strategy=strategy,
            aborted=result.aborted,
            llm_calls=result.llm_calls,
            native_tools=result.native_tools_used,
            recovered=result.recovered,
            ms=round((time.perf_counter() - started) * 1000, 3),
            cost=AgentCost(
                llm_calls=result.llm_calls + (1 if turn.state.verifier_called else 0),
                prompt_tokens=result.usage.get("prompt_tokens", 0),
                completion_tokens=result.usage.get("completion_tokens", 0),
                sandbox_runs=sum(1 for s in result.steps
                                 if s.tool_name in SANDBOX_TOOLS and not s.extra.get("loop_guard")),
            ),
            info=result.info,
        )
        turn.state.agent = report
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
            verdict=turn.state.verifier.verdict if turn.state.verifier is not None else None,
            ms=report.ms,
        )
        return text

    def _loop(self, turn: Turn) -> ToolLoop:
        return ToolLoop(
            self.services.backend,
            self.services.registry,
            replace(self.config.loop, model=turn.body.get("model") or None),
            mcts=self._mcts(turn),
            prm_scorer=self.services.prm_scorer,
        )

    def _check_config(self) -> CheckConfig:
        return replace(self.config.check, model=self.turn.body.get("model") or None)

    def _execution_verdict(self, result: LoopResult) -> str:
        """Answer-first turns are judged by what ran, not by another model call: the request's own examples
        passing is a confirmation, failing after the repairs a refutation (noted in the reply)."""
        text = result.final_text
        code = result.info.code
        if code is None or not code.user_cases.total:
            return text
        passed, total = code.user_cases.passed, code.user_cases.total
        if passed == total:
            verdict = Verdict("CONFIRMED", 0.9, f"the code passes the request's {total} example(s)")
        else:
            failing = "; ".join(str(f) for f in (code.user_cases.failing or [])[:3])
            verdict = Verdict("REFUTED", 0.9, f"the code fails {total - passed} of the request's {total} "
                              f"example(s): {failing}")
        self.turn.state.verifier, self.turn.state.verifier_source = verdict, "execution"
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
        if not settings.agent.mcts:
            return None
        if not settings.agent.mcts_simulate and not self.services.prm_scorer.has_model:
            return None  # no learned value yet and simulation is off: single-shot until the PRM is trained
        return MCTSReasoner(
            self.services.backend,
            max_candidates=settings.agent.mcts_candidates,
            prm_scorer=self.services.prm_scorer,
            expand_top=settings.agent.mcts_expand,
            model=turn.body.get("model") or None,
            max_tokens=min(settings.agent.max_tokens, 512),
        )

    def _searcher(self) -> Any:
        memory = self.services.memory
        if memory is None:
            return None

        session = self.turn.session_id

        async def search(query: str, k: int) -> list[JSON]:
            # What the memory bus may show this session, and only the lessons' text (neutralized like the notes
            # block): no other session's lessons, no session ids or provenance in the prompt.
            found = await memory.asearch(query, k, session=session)
            return [
                {"task": neutralize(s.lesson.task), "solution": neutralize(s.lesson.solution),
                 "mistake": neutralize(s.lesson.mistake), "id": s.lesson.id, "score": round(s.score, 3)}
                for s in found
            ]

        return search

    async def _verify(self, user_request: str, result: LoopResult) -> str:
        """Run the verifier on tool-using turns; returns the reply text, with a note when confidently refuted."""
        turn, services = self.turn, self.services
        text = result.final_text
        if not result.steps or not services.settings.agent.verifier:
            return text
        verifier = Verifier(
            services.backend,
            model=turn.body.get("model") or None,
            refute_confidence=services.settings.agent.verifier_refute_confidence,
        )
        evidence = [Evidence(tool=t, code=c, output=o, ok=ok) for t, c, o, ok in result.evidence]
        turn.state.verifier_called = True
        verdict = await verifier.verify(user_request, evidence, text)
        turn.state.verifier = verdict
        if verifier.should_retract(verdict):
            text += verifier.note_for_reply(verdict)
            if services.memory is not None and turn.trajectory_id:
                try:
                    removed = await services.memory.aretract_lessons_from_trajectory(
                        turn.trajectory_id, reason="verifier"
                    )
                    turn.state.lessons_retracted = removed
                except Exception as exc:  # noqa: BLE001 - never break the turn over bookkeeping
                    log.warning("retraction_failed", trajectory_id=turn.trajectory_id, error=repr(exc))
        elif verdict.verdict == "CONFIRMED" and result.recovered:
            turn.state.lesson_candidate = lesson_from_recovery(user_request, result)
        return text


__all__ = ["AgentConfig", "AgentTurn", "LoopEvent", "RespondStage", "fast_body", "lesson_from_recovery"]
