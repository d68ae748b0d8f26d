"""The tool loop end to end: a scripted model, the real tool registry and the real sandbox.

Every test scripts the ScriptedBackend call by call (an unscripted extra call fails with a 500) and asserts
on `.requests`, so what the loop sent the model, and how many times, is part of what is tested.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from ghost_agent.agent.strategy import StrategyContext
from ghost_agent.agent.tool_loop import prompting
from ghost_agent.agent.tool_loop.loop import LOOP_MARKER, LoopConfig, LoopEvent, LoopResult, ToolLoop, partial_steps
from ghost_agent.llm.base import BackendError
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from ghost_agent.mcts import MCTSReasoner
from ghost_agent.prm.features import PRM_FEATURE_NAMES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.text.request_kind import classify
from ghost_agent.tools import ToolContext, ToolRegistry, default_registry

JSON = dict[str, Any]
REQUEST = "use python to compute the sum of the squares of 1..100"
SQUARES = "print(sum(i * i for i in range(1, 101)))"
USER = [{"role": "user", "content": REQUEST}]


def backend(*replies: ScriptedReply) -> ScriptedBackend:
    return ScriptedBackend(replies=list(replies), default="error", model="scripted-model")


def say(content: str, **kw: Any) -> ScriptedReply:
    return ScriptedReply(content=content, **kw)


def act(tool: str, **args: Any) -> ScriptedReply:
    return say(json.dumps({"tool": tool, "args": args}))


def messages(request: JSON) -> list[JSON]:
    return list(request["messages"])


def last(request: JSON) -> JSON:
    return dict(request["messages"][-1])


def kind(request: JSON, prefix: str) -> str:
    """What a recorded request was: the loop's own call, or which MCTS prompt."""
    system = str(request["messages"][0]["content"])
    if system.startswith(prefix):
        return "agent"
    return "propose" if "Propose" in system else "simulate" if "predict" in system else "expand"


async def run(loop: ToolLoop, ctx: ToolContext, msgs: list[JSON] | None = None, **kw: Any) -> LoopResult:
    request = kw.pop("user_request", REQUEST)
    given = StrategyContext(messages=msgs if msgs is not None else list(USER), tool_ctx=ctx, user_request=request,
                            kind=classify(request, ctx.workspace), **kw)
    return await loop.run(given)


# ------------------------------------------------------------------------------------ the basic turn


async def test_tool_turn_end_to_end(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(act("python", code=SQUARES), say("The sum is 338350."))
    events: list[LoopEvent] = []

    async def on_event(event: LoopEvent) -> None:
        events.append(event)

    loop = ToolLoop(llm, registry, LoopConfig(model="m1", temperature=0.1, max_tokens=256))
    result = await run(loop, ctx, on_event=on_event)

    assert result.final_text == "The sum is 338350."
    assert (result.aborted, result.llm_calls, result.recovered, result.native_tools_used) == (None, 2, False, False)
    [step] = result.steps
    assert (step.i, step.tool_name, step.tool_args, step.ok, step.error) == (0, "python", {"code": SQUARES}, True, None)
    assert step.description == "python call" and step.result_preview == "338350" and step.duration_ms > 0
    assert step.extra["prm_state"] == {"pending_count": 0, "plan_depth": 1} and step.extra["source"] == "json"
    assert step.prm_score is None
    assert result.evidence == [("python", SQUARES, "338350", True)]

    first, second = llm.requests
    assert (first["model"], first["temperature"], first["max_tokens"], first["stream"]) == ("m1", 0.1, 256, False)
    assert [t["function"]["name"] for t in first["tools"]] == registry.names  # "auto": native tools offered
    assert messages(first)[1:] == USER
    # the action and the sandbox's real output went back to the model
    assert messages(second)[-2:] == [
        {"role": "assistant", "content": json.dumps({"tool": "python", "args": {"code": SQUARES}})},
        {"role": "user", "content": "Tool result (python):\n338350"},
    ]
    assert [e.kind for e in events] == ["step_start", "step_end", "answer"]
    assert events[1].step is step and "python ok" in events[1].text and events[2].step is None


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"tool": "python", "args": {"code": "print(6 * 7)"}}\n```',
        'I will compute it.\n{"description": "multiply", "tool": "python", "args": {"code": "print(6 * 7)"}}\nOK?',
        '{"name": "python", "arguments": "{\\"code\\": \\"print(6 * 7)\\"}"}',
        '{"action": "python", "action_input": {"code": "print(6 * 7)"}}',
        '{"tool": "python", "args": "print(6 * 7)"}',
    ],
)
async def test_protocol_variants_run_the_tool(ctx: ToolContext, registry: ToolRegistry, reply: str) -> None:
    llm = backend(say(reply), say('{"answer": "42"}'))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert result.final_text == "42"
    assert [(s.tool_name, s.tool_args, s.ok) for s in result.steps] == [("python", {"code": "print(6 * 7)"}, True)]
    assert messages(llm.requests[1])[-2:] == [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "Tool result (python):\n42"},
    ]
    expected = "multiply" if "multiply" in reply else "python call"
    assert result.steps[0].description == expected


async def test_plain_text_answer_needs_one_call(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(say("Paris is the capital of France."))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert (result.final_text, result.steps, result.llm_calls, result.evidence) == (
        "Paris is the capital of France.", [], 1, [])


async def test_broken_reply_is_retried_once_with_a_reminder(ctx: ToolContext, registry: ToolRegistry) -> None:
    broken = '{"tool": "python", "args": {"code": "print(6 * 7)"'
    llm = backend(say(broken), act("python", code="print(6 * 7)"), say("42"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert result.final_text == "42" and result.llm_calls == 3
    assert [s.ok for s in result.steps] == [True]
    bad, reminder = messages(llm.requests[1])[-2:]
    assert bad == {"role": "assistant", "content": broken}
    assert reminder["role"] == "user"
    assert "not valid JSON" in reminder["content"]
    assert "bash, file_system, memory_search, python" in reminder["content"]
    assert reminder["content"] == prompting.format_reminder(
        "the reply looks like a JSON action but is not valid JSON (check quotes, braces and commas)", registry.names
    )


async def test_broken_twice_falls_back_to_a_direct_answer(ctx: ToolContext, registry: ToolRegistry) -> None:
    second = 'I think {"tool": "nope", "args": {}} is it'
    llm = backend(say('{"tool": "python" "args"}'), say(second), say("The answer is 42."))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx, extra_system="Lessons: none")
    # the broken action never reaches the user: the bare model's answer to the client's messages does
    assert (result.final_text, result.steps, result.llm_calls, result.aborted) == ("The answer is 42.", [], 3, None)
    assert result.info.fallback == "protocol"
    assert "unknown tool" not in str(messages(llm.requests[1])[-1])  # the first reason was about the JSON
    assert messages(llm.requests[2]) == [{"role": "system", "content": "Lessons: none"}, *USER]
    assert "tools" not in llm.requests[2]


# ----------------------------------------------------------------------------------------- native tools


async def test_native_tool_calls(ctx: ToolContext, registry: ToolRegistry) -> None:
    call = tool_call("python", json.dumps({"code": "print(6 * 7)"}), id="call_7")
    extra_call = tool_call("bash", json.dumps({"command": "echo never"}), id="call_8")
    llm = backend(ScriptedReply(tool_calls=[call, extra_call]), say("42"))
    result = await run(ToolLoop(llm, registry, LoopConfig(native_tools="on")), ctx)
    assert result.final_text == "42" and result.native_tools_used
    [step] = result.steps
    assert (step.tool_name, step.tool_args, step.extra["source"]) == ("python", {"code": "print(6 * 7)"}, "native")
    assert messages(llm.requests[1])[-2:] == [
        {"role": "assistant", "content": None, "tool_calls": [call]},  # only the call that ran
        {"role": "tool", "tool_call_id": "call_7", "content": "42"},
    ]
    assert "tools" in llm.requests[1]


async def test_native_malformed_arguments_reach_the_model_as_an_error(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(ScriptedReply(tool_calls=[tool_call("python", "{code: oops", id="c1")]), say("sorry"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    [step] = result.steps
    assert not step.ok and step.tool_args == {"value": "{code: oops"}
    tool_msg = last(llm.requests[1])
    assert tool_msg["role"] == "tool" and tool_msg["content"].startswith("ERROR: python: arguments are not valid JSON")


async def test_auto_mode_drops_native_tools_when_the_backend_rejects_them(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(
        ScriptedReply(error=(400, "tools are not supported by this server")),
        act("python", code="print(6 * 7)"),
        say("42"),
        say("again"),
    )
    loop = ToolLoop(llm, registry, LoopConfig(native_tools="auto"))
    result = await run(loop, ctx)
    assert result.final_text == "42" and result.llm_calls == 3 and not result.native_tools_used
    rejected, retried, after = llm.requests
    assert "tools" in rejected and "tools" not in retried and "tools" not in after
    assert {k: v for k, v in rejected.items() if k != "tools"} == retried  # the same call, minus tools
    assert loop.native_rejected and not loop.native_enabled
    await run(loop, ctx)  # remembered for this ToolLoop: the next turn does not offer them either
    assert "tools" not in llm.requests[-1]


async def test_on_mode_propagates_the_rejection_and_off_never_sends_tools(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(ScriptedReply(error=(400, "no tools here")))
    with pytest.raises(BackendError) as info:
        await run(ToolLoop(llm, registry, LoopConfig(native_tools="on")), ctx)
    assert info.value.status == 400 and len(llm.requests) == 1
    llm = backend(say("hi"))
    await run(ToolLoop(llm, registry, LoopConfig(native_tools="off")), ctx)
    assert "tools" not in llm.requests[0]


# ---------------------------------------------------------------------------------- guards and limits


async def test_loop_guard_stops_a_repeated_failing_call(ctx: ToolContext, registry: ToolRegistry) -> None:
    failing = act("bash", command="ls /definitely/not/here")
    llm = backend(failing, failing, say("The folder does not exist."))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    # the turn stops acting and answers directly: no apology about the loop, no marker, no third tool call
    assert result.aborted == "loop" and result.final_text == "The folder does not exist."
    assert LOOP_MARKER not in result.final_text and result.info.fallback == "loop"
    assert len(llm.requests) == 3 and result.llm_calls == 3 and messages(llm.requests[2]) == USER
    first, repeat = result.steps
    assert not first.ok and first.error == "bash: exited with code 2"
    assert not repeat.ok and repeat.extra["loop_guard"] == {"repeats_step": 0} and repeat.duration_ms == 0
    assert len(result.evidence) == 1  # the repeat was not run
    assert not result.recovered


async def test_repeating_a_failed_call_after_a_fix_is_allowed(ctx: ToolContext, registry: ToolRegistry) -> None:
    run_it = act("bash", command="cat fix.txt")
    llm = backend(run_it, act("bash", command="echo fixed > fix.txt"), run_it, say("fixed"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert result.aborted is None and result.final_text == "fixed"
    assert [s.ok for s in result.steps] == [False, True, True]
    assert result.recovered
    assert result.evidence[-1] == ("bash", "cat fix.txt", "fixed", True)


async def test_max_steps_forces_a_tool_less_answer(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(act("python", code="print(1)"), act("python", code="print(2)"), say("I got 1 and 2."))
    result = await run(ToolLoop(llm, registry, LoopConfig(max_steps=2)), ctx)
    assert (result.aborted, result.final_text, result.llm_calls) == ("max_steps", "I got 1 and 2.", 3)
    assert [s.result_preview for s in result.steps] == ["1", "2"]
    forced = llm.requests[2]
    assert "tools" not in forced and "tools" in llm.requests[1]
    assert last(forced) == {"role": "user", "content": prompting.final_nudge("max_steps")}
    assert messages(forced)[-2] == {"role": "user", "content": "Tool result (python):\n2"}


async def test_max_steps_never_shows_a_tool_call_reply_as_the_answer(ctx: ToolContext, registry: ToolRegistry) -> None:
    again = json.dumps({"tool": "python", "args": {"code": "print(3)"}})
    llm = backend(act("python", code="print(1)"), say(again), say("It prints 1."))
    result = await run(ToolLoop(llm, registry, LoopConfig(max_steps=1)), ctx)
    assert (result.aborted, result.final_text, len(result.steps)) == ("max_steps", "It prints 1.", 1)
    assert result.info.fallback == "no_answer"


async def test_failure_then_success_is_recovered_and_results_are_capped(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(act("python", code="1 / 0"), act("python", code="print('x' * 3000)"), say("done"))
    result = await run(ToolLoop(llm, registry, LoopConfig(result_chars=500)), ctx)
    assert [s.ok for s in result.steps] == [False, True] and result.recovered
    assert "ZeroDivisionError" in result.steps[0].result_preview
    assert result.steps[0].error == "python: exited with code 1"
    shown = last(llm.requests[2])["content"]
    assert shown.startswith("Tool result (python):\nxxx") and "[... truncated" in shown
    assert len(shown) < 600 and result.steps[1].extra["truncated"] is True
    assert len(result.steps[1].result_preview) <= 560


async def test_usage_is_summed_over_every_call(ctx: ToolContext, registry: ToolRegistry) -> None:
    def usage(p: int, c: int) -> JSON:
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    llm = backend(
        ScriptedReply(content='{"tool": "python" "args"}', usage=usage(100, 5)),
        ScriptedReply(content=json.dumps({"tool": "python", "args": {"code": "print(1)"}}), usage=usage(120, 9)),
        ScriptedReply(content="1", usage=usage(150, 1)),
    )
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert result.usage == {"prompt_tokens": 370, "completion_tokens": 15, "total_tokens": 385}


# ------------------------------------------------------------------------------------ the system prompt


async def test_system_prefix_is_byte_identical_across_turns(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(say("a"), say("b"))
    loop = ToolLoop(llm, registry, LoopConfig())
    client_a = [{"role": "system", "content": "You are terse."}, *USER]
    client_b = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}, *USER]
    notes = "<ghost-notes>\n1. check first\n</ghost-notes>"
    await run(loop, ctx, client_a, extra_system="Selfhood: awake", notes=notes)
    await run(loop, ctx, client_b)
    prefix = prompting.system_prefix(default_registry())  # a fresh registry with the same tools: same bytes
    sys_a, sys_b = (str(r["messages"][0]["content"]) for r in llm.requests)
    assert sys_a.startswith(prefix) and sys_b == prefix
    assert sys_a == prefix + "\n\nSelfhood: awake\n\nInstructions from the client:\nYou are terse."
    # lessons are never system text: they lead the last user message, after the whole cacheable prefix
    assert messages(llm.requests[0])[-1] == {"role": "user", "content": notes + "\n\n" + REQUEST}
    for name in registry.names:
        assert f"- {name}(" in prefix
    assert '{"tool": "<tool name>", "args":' in prefix
    # the client's system message is folded in, not repeated; the rest of the history follows in order
    assert [m["role"] for m in messages(llm.requests[0])] == ["system", "user"]
    assert messages(llm.requests[1])[1:] == client_b


async def test_client_system_content_parts_are_included(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(say("ok"))
    system = {"role": "developer", "content": [{"type": "text", "text": "Answer in French."}]}
    await run(ToolLoop(llm, registry, LoopConfig()), ctx, [system, *USER])
    assert str(llm.requests[0]["messages"][0]["content"]).endswith("Instructions from the client:\nAnswer in French.")


# ------------------------------------------------------------------------------------------------ MCTS


def proposal(*actions: JSON) -> ScriptedReply:
    return say(json.dumps(list(actions)))


PY_ACTION = {"description": "compute with python", "tool": "python", "args": {"code": SQUARES}}
BASH_ACTION = {"description": "compute with bash", "tool": "bash", "args": {"command": "echo 338350"}}
ANSWER_ACTION = {"description": "answer with the result", "tool": None, "args": {}}


def heavy_liking_scorer() -> PRMScorer:
    """A loaded PRM that prefers heavyweight tools (python) to answering while nothing has run yet."""
    weights = np.zeros(len(PRM_FEATURE_NAMES))
    weights[PRM_FEATURE_NAMES.index("tool_is_heavyweight")] = 2.0
    return PRMScorer(StepValueModel(weights=weights))


async def test_mcts_with_a_prm_model_scores_without_simulation(ctx: ToolContext, registry: ToolRegistry) -> None:
    scorer = heavy_liking_scorer()
    llm = backend(act("python", code=SQUARES), proposal(ANSWER_ACTION, BASH_ACTION), say("The sum is 338350."))
    mcts = MCTSReasoner(llm, max_candidates=2, prm_scorer=scorer)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts, prm_scorer=scorer), ctx)

    prefix = prompting.system_prefix(registry)
    # the model's own action competes with one proposed alternative, scored by the PRM: no simulate/expand
    assert [kind(r, prefix) for r in llm.requests] == ["agent", "propose", "agent"]
    assert result.final_text == "The sum is 338350." and result.llm_calls == 3
    [step] = result.steps
    assert (step.tool_name, step.tool_args, step.ok, step.result_preview) == ("python", {"code": SQUARES}, True,
                                                                              "338350")
    assert step.extra["source"] == "json"
    assert step.extra["mcts"] == {"provenance": "prm", "candidates": 2, "winner_index": 0, "llm_calls": 1}
    assert step.prm_score is not None and step.prm_score > 0.8
    assert step.extra["prm_state"] == {"pending_count": 0, "plan_depth": 1}
    # the proposal saw the request; the final call saw the action's result
    assert REQUEST in str(llm.requests[1]["messages"])
    assert messages(llm.requests[2])[-1] == {"role": "user", "content": "Tool result (python):\n338350"}


async def test_mcts_without_a_prm_model_simulates(ctx: ToolContext, registry: ToolRegistry) -> None:
    scorer = PRMScorer()  # attached but neutral: no PlanState is passed, LLM simulation ranks
    llm = backend(
        act("python", code=SQUARES),
        proposal(ANSWER_ACTION, BASH_ACTION),  # a proposed direct answer is dropped: the model chose to act
        say('{"imagined_result": "prints 338350", "score": 9}'),  # the model's own python action
        say('{"imagined_result": "echoes a guess", "score": 2}'),  # the bash alternative
        say("338350"),
    )
    mcts = MCTSReasoner(llm, max_candidates=2, prm_scorer=scorer, expand_top=0)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts, prm_scorer=scorer), ctx)
    prefix = prompting.system_prefix(registry)
    assert [kind(r, prefix) for r in llm.requests] == ["agent", "propose", "simulate", "simulate", "agent"]
    [step] = result.steps
    assert step.extra["mcts"] == {"provenance": "llm_sim", "candidates": 2, "winner_index": 0, "llm_calls": 3}
    assert step.prm_score == pytest.approx(0.9)
    assert result.final_text == "338350" and result.llm_calls == 5


async def test_the_searchs_token_usage_counts_in_the_turns_usage(ctx: ToolContext, registry: ToolRegistry) -> None:
    def used(reply: ScriptedReply, prompt: int, completion: int) -> ScriptedReply:
        reply.usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return reply

    llm = backend(
        used(act("python", code=SQUARES), 100, 10),
        used(proposal(BASH_ACTION), 200, 20),
        used(say('{"imagined_result": "prints 338350", "score": 9}'), 300, 30),
        used(say('{"imagined_result": "echoes a guess", "score": 2}'), 400, 40),
        used(say("338350"), 500, 50),
    )
    mcts = MCTSReasoner(llm, max_candidates=2, prm_scorer=PRMScorer(), expand_top=0)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts, prm_scorer=PRMScorer()), ctx)
    assert result.usage == {"prompt_tokens": 1500, "completion_tokens": 150, "total_tokens": 1650}


async def test_mcts_alternative_can_beat_the_models_own_action(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(
        act("bash", command="rm -rf /workspace/*"),
        proposal(PY_ACTION),
        say('{"imagined_result": "deletes the files", "score": 1}'),
        say('{"imagined_result": "prints 338350", "score": 9}'),
        say("The sum is 338350."),
    )
    mcts = MCTSReasoner(llm, max_candidates=2, expand_top=0)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts), ctx)
    [step] = result.steps
    assert (step.tool_name, step.extra["source"], step.extra["mcts"]["winner_index"]) == ("python", "mcts", 1)
    assert step.result_preview == "338350"
    # the rejected action never reached the conversation; the chosen one did, in the JSON protocol
    final = messages(llm.requests[4])
    assert "rm -rf" not in str(final)
    assert final[-2] == {"role": "assistant", "content": json.dumps(
        {"description": "compute with python", "tool": "python", "args": {"code": SQUARES}})}


async def test_mcts_costs_nothing_when_the_model_answers_directly(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(say("Hello! How can I help?"))
    mcts = MCTSReasoner(llm, max_candidates=3)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts), ctx)
    assert result.final_text == "Hello! How can I help?" and result.llm_calls == 1 and len(llm.requests) == 1


async def test_mcts_without_a_usable_proposal_runs_the_models_own_action(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(act("python", code="print(6 * 7)"), say("no idea"), say("still no json"), say("42"))
    mcts = MCTSReasoner(llm, max_candidates=2)
    result = await run(ToolLoop(llm, registry, LoopConfig(), mcts=mcts), ctx)
    prefix = prompting.system_prefix(registry)
    assert [kind(r, prefix) for r in llm.requests] == ["agent", "propose", "propose", "agent"]
    [step] = result.steps
    assert step.extra["source"] == "json" and "mcts" not in step.extra and step.result_preview == "42"
    assert result.final_text == "42" and result.llm_calls == 4


# ------------------------------------------------------------------------------------------ failures


async def test_backend_error_mid_loop_carries_the_steps(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(act("python", code="print(6 * 7)"), ScriptedReply(error=(502, "upstream fell over")))
    with pytest.raises(BackendError) as info:
        await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert info.value.status == 502 and info.value.message == "upstream fell over"
    [step] = partial_steps(info.value)
    assert (step.tool_name, step.ok, step.result_preview) == ("python", True, "42")
    assert info.value.partial_llm_calls == 2  # type: ignore[attr-defined]
    assert partial_steps(RuntimeError("unrelated")) == []


async def test_a_broken_event_handler_does_not_break_the_turn(ctx: ToolContext, registry: ToolRegistry) -> None:
    seen: list[str] = []

    async def broken(event: LoopEvent) -> None:
        seen.append(event.kind)
        raise ConnectionResetError("client went away")

    llm = backend(act("python", code="print(6 * 7)"), say("42"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx, on_event=broken)
    assert result.final_text == "42" and seen == ["step_start", "step_end", "answer"]


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="native_tools"):
        LoopConfig(native_tools="sometimes")
    with pytest.raises(ValueError, match="max_steps"):
        LoopConfig(max_steps=-1)


async def test_no_tools_means_no_tools_array(ctx: ToolContext) -> None:
    llm = backend(say("hi"))
    await run(ToolLoop(llm, ToolRegistry(), LoopConfig(native_tools="on")), ctx)
    assert "tools" not in llm.requests[0]
    assert "(no tools are available: answer directly)" in str(llm.requests[0]["messages"][0]["content"])


async def test_an_immediate_repeat_of_a_successful_call_is_not_rerun(ctx: ToolContext, registry: ToolRegistry) -> None:
    again = act("python", code="print(6 * 7)")
    llm = backend(again, again, again, say("42"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert len(result.steps) == 1 and result.steps[0].result_preview == "42"
    # the repeats got a reminder with the earlier result instead of a second run, then the answer was asked for
    assert "You already made exactly this call in step 1" in str(messages(llm.requests[2]))
    assert result.aborted == "repeat" and result.final_text == "42" and len(llm.requests) == 4
    assert "tools" not in llm.requests[3]


async def test_the_same_call_after_other_work_runs_again(ctx: ToolContext, registry: ToolRegistry) -> None:
    look = act("bash", command="ls")
    llm = backend(look, act("bash", command="touch new.txt"), look, say("new.txt is there"))
    result = await run(ToolLoop(llm, registry, LoopConfig()), ctx)
    assert [s.tool_args["command"] for s in result.steps] == ["ls", "touch new.txt", "ls"]
    assert "new.txt" in result.steps[2].result_preview and result.aborted is None
