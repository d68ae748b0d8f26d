"""The typed turn state writes the trajectory it always wrote: `data/turn_records.jsonl` holds, byte for byte
(key order included), what the record of these turns was when `turn.state` was a dict of string keys."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from ghost_agent.agent.stages.record import build_trajectory, settle_outcome
from ghost_agent.agent.strategy import CaseTally, CodeOutcome, Computed, PreferencesApplied, RunInfo, StructuredCheck
from ghost_agent.agent.turn import Turn
from ghost_agent.agent.turn_state import (
    AgentCost,
    AgentFailure,
    AgentReport,
    ChoiceState,
    ClientToolsReport,
    TurnRoute,
    TurnState,
)
from ghost_agent.agent.verifier import Verdict
from ghost_agent.llm.base import BackendError
from ghost_agent.trajectories.record import Step

GOLDEN = Path(__file__).parent / "data" / "turn_records.jsonl"
COST = AgentCost(llm_calls=3, prompt_tokens=10, completion_tokens=5, sandbox_runs=1)


def agent_turn(info: RunInfo, **report: Any) -> Turn:
    turn = Turn(body={"model": "m", "messages": [{"role": "user", "content": "What is 2+2? Answer: <n>"}],
                      "user": "u1", "metadata": {"k": "v"}}, request_id="r1", session_id="s1", trajectory_id="t" * 32)
    turn.usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    turn.timings = {"queue": 0.5, "stage_respond": 12.34567}
    turn.state.route = TurnRoute("agent", 0.91, "confident_agent", "rm1", 0.91)
    turn.state.final_response = "Answer: 4"
    answered = AgentReport(strategy="answer-first", aborted=None, llm_calls=3, native_tools=False, recovered=False,
                           ms=41.234, cost=COST, info=info)
    turn.state.agent = replace(answered, **report)
    return turn


def turns() -> Iterator[tuple[str, Turn, BaseException | None]]:
    code = agent_turn(RunInfo(
        code=CodeOutcome("revision", CaseTally(1, 2, failing=["f(1) == 2: got 3"]), CaseTally(0, 0)),
        form_fixed=["answer_line"], preferences=PreferencesApplied(1, False, "lost"), kind="code", revised=True,
        draft="Answer: 5",
    ))
    code.state.lessons_shown = [{"id": "l1", "score": 1.5, "source_trajectory_id": "x" * 32}]
    code.state.corrected_prior = "p" * 32
    code.state.steps = [Step(i=0, description="check the draft against 2 test cases", tool_name="python",
                             tool_args={"code": "print(2+2)"}, ok=True, result_preview="4", duration_ms=3.5,
                             extra={"source": "check"})]
    code.state.verifier = Verdict("REFUTED", 0.9, "the code fails 1 of the request's 2 example(s)")
    code.state.verifier_source = "execution"
    code.state.lessons_retracted = 0
    code.state.choice = ChoiceState(index=1, n=2, trajectory_ids=["a" * 32, "t" * 32], started=True)
    yield "code", code, None
    yield "computed", agent_turn(RunInfo(computed=Computed(4.0, 5.0, "program", voted=True), kind="quantitative",
                                         revised=False)), None
    yield "trusted", agent_turn(RunInfo(
        computed=Computed(4.0, 5.0, "draft", voted=True, second=4.0, trusted=True),
        form_fixed=["answer_line", "number_only"], kind="quantitative", revised=True, draft="5",
    )), None
    yield "structured", agent_turn(RunInfo(
        structured=StructuredCheck(valid=True, repaired=True, errors=["not valid JSON"]), kind="general",
        revised=True, draft="```json\n{}\n```",
    )), None
    yield "skipped", agent_turn(RunInfo(checks_skipped="bubblewrap cannot run here", kind="general",
                                        revised=False)), None
    loop = agent_turn(RunInfo(fallback="loop"), strategy="action-loop", aborted="loop", recovered=True,
                      native_tools=True)
    loop.state.verifier = Verdict("UNSURE", 0.0, "", error="timeout")
    loop.state.lessons_retracted = 2
    yield "loop", loop, None
    fast = Turn(body={"model": "m", "messages": [{"role": "user", "content": "hi"}]}, request_id="r2",
                trajectory_id="u" * 32)
    fast.response = {"choices": [{"message": {"role": "assistant", "content": "{}"}}]}
    fast.state.route = TurnRoute("fast", None, "client_tools", None, None)
    fast.state.client_tools = ClientToolsReport(native=False, calls=0, rounds=["repair"], unparsed=["bad json"])
    fast.state.structured = StructuredCheck(valid=False, repaired=False, errors=["not valid JSON"])
    yield "fast", fast, BackendError("boom", status=503)
    died = Turn(body={"messages": []}, request_id="r3", trajectory_id="v" * 32)
    died.state.route = TurnRoute("agent", None, "forced", None, None)
    died.state.agent = AgentFailure(strategy="action-loop", error="upstream down")
    yield "died", died, BackendError("upstream down")
    unrouted = Turn(body={"messages": []}, request_id="r4", trajectory_id="w" * 32)
    unrouted.state.client_tools = ClientToolsReport(native=True, calls=2)
    yield "passthrough", unrouted, None


def golden() -> dict[str, bytes]:
    rows = [orjson.loads(line) for line in GOLDEN.read_bytes().splitlines()]
    return {row["name"]: orjson.dumps(row["trajectory"]) for row in rows}


@pytest.mark.parametrize("name", list(golden()))
def test_a_typed_turn_is_recorded_byte_for_byte_as_before(name: str) -> None:
    [(turn, error)] = [(t, e) for n, t, e in turns() if n == name]
    traj = build_trajectory(turn, error)
    settle_outcome(traj, turn, error, 0.7)
    record = traj.to_dict()
    record.pop("ts")
    assert orjson.dumps(record) == golden()[name]


def test_every_recorded_fact_starts_unknown() -> None:
    state = TurnState()
    assert state.record_extra() == {} and state.verifier_json() is None
    assert state.router_json() == {"decision": "fast", "p": None, "model": None, "reason": "passthrough"}
    assert (state.memory_block, state.selfhood_prefix, state.preferences, state.steps) == ("", "", [], [])
