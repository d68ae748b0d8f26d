"""MCTSReasoner on the LLM-simulation path: proposal parsing, simulation scoring, expansion, fallbacks.

Every test scripts the real ScriptedBackend call by call and asserts on `.requests`, so the number and the
content of the LLM calls are part of what is tested. Helpers here are shared with test_mcts_prm.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from ghost_agent.mcts import ActionCandidate, MCTSError, MCTSReasoner, ToolSpec
from ghost_agent.mcts.parse import parse_candidates, parse_rating
from ghost_agent.text.lenient_json import iter_json

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "python",
            "description": "Run Python code in the sandbox.",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
        },
    },
    {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
    {"name": "web_search", "description": "Search the web.", "parameters": {}},
]
TASK = "How many lines does data.csv have?"

PY = {"description": "count with python", "tool": "python", "args": {"code": "print(len(open('data.csv').read()))"}}
READ = {"description": "read the file", "tool": "read_file", "args": {"path": "data.csv"}}
SEARCH = {"description": "search how to count lines", "tool": "web_search", "args": {"query": "count lines csv"}}
ANSWER = {"description": "say it cannot be known without reading", "tool": None, "args": {}}


def text(content: str) -> ScriptedReply:
    return ScriptedReply(content=content)


def as_json(value: Any) -> ScriptedReply:
    return ScriptedReply(content=json.dumps(value))


def sim(score: Any, imagined: str = "it works") -> ScriptedReply:
    return as_json({"imagined_result": imagined, "score": score})


def expansion(score: Any, tool: str | None = None) -> ScriptedReply:
    return as_json({"next_action": {"description": "then", "tool": tool, "args": {}}, "score": score})


def backend(*replies: ScriptedReply) -> ScriptedBackend:
    # default="error": an unscripted extra call fails loudly (and shows up in `.requests`)
    return ScriptedBackend(replies=list(replies), default="error")


def system_of(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def user_of(request: dict[str, Any]) -> str:
    return str(request["messages"][1]["content"])


def kinds(requests: list[dict[str, Any]]) -> list[str]:
    """What each recorded request was, read off its system prompt."""
    out = []
    for r in requests:
        s = system_of(r)
        out.append("propose" if "Propose" in s else "simulate" if "predict" in s else "expand" if "ahead" in s else "?")
    return out


def tools_of(result: Any) -> list[str | None]:
    return [c.action.tool_name for c in result.candidates]


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    structlog.reset_defaults()  # an earlier test may have configured a level that drops info events
    with capture_logs() as captured:
        yield captured


# --------------------------------------------------------------------------------------- happy path


async def test_simulation_scores_pick_the_highest_and_requests_carry_the_context() -> None:
    llm = backend(as_json([PY, READ, SEARCH]), sim(3), sim(9, "prints 120"), sim(5))
    mcts = MCTSReasoner(llm, expand_top=0, model="m1", temperature=0.2, max_tokens=99)
    result = await mcts.select_best_action(TASK, "nothing done", TOOLS)

    assert result.provenance == "llm_sim"
    assert result.action.tool_name == "read_file" and result.winner_index == 1
    assert [c.score for c in result.candidates] == [0.3, 0.9, 0.5]
    assert result.score == 0.9 and result.candidates[1].imagined_result == "prints 120"
    assert result.llm_calls == 4 and len(llm.requests) == 4 and llm.pending == 0
    assert kinds(llm.requests) == ["propose", "simulate", "simulate", "simulate"]
    first = llm.requests[0]
    assert first["model"] == "m1" and first["temperature"] == 0.2 and first["max_tokens"] == 99
    assert "Propose 3 " in system_of(first)
    assert TASK in user_of(first) and "nothing done" in user_of(first)
    assert all(name in user_of(first) for name in ("python", "read_file", "web_search"))
    # each simulation names its own candidate, in proposal order
    for request, action in zip(llm.requests[1:], (PY, READ, SEARCH), strict=True):
        assert json.dumps(action["args"]) in user_of(request)


@pytest.mark.parametrize(
    "content, expected",
    [
        pytest.param(
            "Here are my ideas:\n```json\n" + json.dumps([READ, PY]) + "\n```\nHope that helps!",
            [("read_file", READ["args"]), ("python", PY["args"])],
            id="fenced-with-prose",
        ),
        pytest.param(
            "I would do this: " + json.dumps([SEARCH]) + " and nothing else.",
            [("web_search", SEARCH["args"])],
            id="leading-and-trailing-prose",
        ),
        pytest.param("```\n" + json.dumps(READ) + "\n```", [("read_file", READ["args"])], id="single-object"),
        pytest.param(
            json.dumps({"actions": [PY, ANSWER]}), [("python", PY["args"]), (None, {})], id="wrapped-array"
        ),
        pytest.param(
            "[see below] first the notes [1, 2] then: " + json.dumps([READ]),
            [("read_file", READ["args"])],
            id="brackets-in-prose-before-the-array",
        ),
        pytest.param(
            json.dumps([{"description": "read", "tool": "read_file", "args": '{"path": "x"}'},
                        {"description": "run", "tool": "python", "args": "print(1)"},
                        {"description": "run again", "tool": "python", "args": ["a", "b"]}]),
            [("read_file", {"path": "x"}), ("python", {"value": "print(1)"}), ("python", {"value": ["a", "b"]})],
            id="args-string-json-and-non-object",
        ),
    ],
)
async def test_proposal_parsing_variants(content: str, expected: list[tuple[str | None, Any]]) -> None:
    llm = backend(text(content), *[sim(5) for _ in expected])
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert [(c.action.tool_name, c.action.tool_args) for c in result.candidates] == expected
    # a lone candidate has nothing to be ranked against, so it is not simulated
    assert len(llm.requests) == 1 + (len(expected) if len(expected) > 1 else 0)


async def test_unknown_tools_and_duplicates_are_dropped() -> None:
    proposal = [
        {"description": "delete everything", "tool": "rm_rf", "args": {}},
        READ,
        {"description": "read it again, worded differently", "tool": "read_file", "args": {"path": "data.csv"}},
        PY,
        ANSWER,
    ]
    llm = backend(as_json(proposal), sim(5), sim(5), sim(5))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert tools_of(result) == ["read_file", "python", None]
    assert len(llm.requests) == 4


async def test_native_tool_calls_reply_is_read_as_a_proposal() -> None:
    reply = ScriptedReply(tool_calls=[tool_call("read_file", '{"path": "data.csv"}')])
    llm = backend(reply, sim(7))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert result.action == ActionCandidate("call read_file", "read_file", {"path": "data.csv"})


async def test_only_max_candidates_are_scored() -> None:
    llm = backend(as_json([PY, READ, SEARCH, ANSWER]), sim(1), sim(2))
    result = await MCTSReasoner(llm, max_candidates=2, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert tools_of(result) == ["python", "read_file"]
    assert "Propose 2 " in system_of(llm.requests[0]) and len(llm.requests) == 3


# ------------------------------------------------------------------------------------ proposal failure


async def test_garbage_proposal_is_retried_once_with_a_format_reminder(logs: list[dict[str, Any]]) -> None:
    llm = backend(text("I think reading the file is best."), as_json([READ, PY]), sim(6), sim(2))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert result.action.tool_name == "read_file"
    assert kinds(llm.requests) == ["propose", "propose", "simulate", "simulate"]
    retry = llm.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "I think reading the file is best."
    assert "ONLY the JSON array" in retry[3]["content"]
    assert any(e["event"] == "mcts_proposal_retry" for e in logs)


async def test_garbage_twice_raises_mcts_error_after_exactly_two_calls() -> None:
    llm = backend(text("no idea"), as_json([{"description": "x", "tool": "not_a_tool", "args": {}}]))
    with pytest.raises(MCTSError) as info:
        await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    assert len(llm.requests) == 2 and "not_a_tool" in info.value.response


async def test_backend_error_on_the_proposal_propagates_unchanged() -> None:
    llm = backend(ScriptedReply(error=(503, "busy"), retry_after=2.0))
    with pytest.raises(BackendError) as info:
        await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    assert info.value.status == 503 and info.value.retry_after == 2.0 and len(llm.requests) == 1


# ---------------------------------------------------------------------------------- simulation scoring


async def test_unparseable_simulation_scores_neutral_and_is_noted() -> None:
    llm = backend(as_json([PY, READ]), text("It would probably work fine."), sim(4))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    first, second = result.candidates
    assert first.score == 0.5 and first.note is not None and "no rating" in first.note
    assert second.score == 0.4 and second.note is None
    assert result.winner_index == 0 and result.provenance == "llm_sim"


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"imagined_result": "the "quoted" bit breaks JSON", "score": 9}', 0.9),
        ('{"imagined_result": "ok", "score": "7/10"}', 0.7),
        ('{"imagined_result": "ok", "rating": 6}', 0.6),
        ('{"imagined_result": "ok", "score": 15}', 1.0),
        ('{"imagined_result": "ok", "score": -2}', 0.0),
        ('Score: 8 out of 10', 0.8),
        ('{"imagined_result": "ok", "score": NaN}', None),
        ('{"imagined_result": "ok", "score": true}', None),
    ],
)
def test_rating_parsing_is_lenient_and_clamped(content: str, expected: float | None) -> None:
    rating = parse_rating(content)
    assert (None if rating is None else rating[0]) == expected


async def test_failed_simulation_scores_neutral_and_others_still_rank() -> None:
    llm = backend(as_json([PY, READ]), ScriptedReply(error=(500, "boom")), sim(8))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert result.provenance == "llm_sim" and result.action.tool_name == "read_file"
    assert result.candidates[0].score == 0.5 and "boom" in (result.candidates[0].note or "")
    assert result.fallback_reason is None


async def test_every_simulation_failing_degrades_to_the_first_proposal(logs: list[dict[str, Any]]) -> None:
    llm = backend(as_json([SEARCH, READ]), ScriptedReply(error=(502, "down")), ScriptedReply(error=(502, "down")))
    result = await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    assert result.provenance == "fallback" and result.action.tool_name == "web_search"
    assert result.fallback_reason is not None and "down" in result.fallback_reason
    assert len(llm.requests) == 3  # no expansion after dead simulations
    assert [e["event"] for e in logs if e["event"].startswith("mcts_")] == ["mcts_sim_unavailable", "mcts_select"]


async def test_supplied_candidates_skip_the_proposal_call() -> None:
    llm = backend(sim(2), sim(6))
    supplied = [ActionCandidate.from_dict(PY), ActionCandidate.from_dict(READ)]
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS, candidates=supplied)
    assert kinds(llm.requests) == ["simulate", "simulate"]
    assert result.action == supplied[1] and result.llm_calls == 2


async def test_cancelling_the_search_cancels_the_simulations() -> None:
    llm = backend(as_json([PY, READ]), ScriptedReply(content="{}", delay_s=30), ScriptedReply(content="{}", delay_s=30))
    task = asyncio.create_task(MCTSReasoner(llm).select_best_action(TASK, "", TOOLS))
    while len(llm.requests) < 3:
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert llm.cancelled == 2


async def test_empty_supplied_candidates_is_an_error() -> None:
    llm = backend()
    with pytest.raises(MCTSError):
        await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS, candidates=[])
    assert llm.requests == []


# ------------------------------------------------------------------------------------------- expansion


async def test_expand_top_zero_makes_no_expansion_calls() -> None:
    llm = backend(as_json([PY, READ]), sim(8), sim(7))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
    assert kinds(llm.requests) == ["propose", "simulate", "simulate"]
    assert all(c.child_score is None and c.value == c.score for c in result.candidates)
    assert result.action.tool_name == "python"


async def test_expansion_looks_ahead_from_the_imagined_result_and_backs_up() -> None:
    llm = backend(as_json([PY, READ]), sim(8, "prints 120"), sim(7), expansion(10))
    result = await MCTSReasoner(llm, gamma=0.5).select_best_action(TASK, "", TOOLS)  # expand_top=1 default
    assert kinds(llm.requests) == ["propose", "simulate", "simulate", "expand"]
    assert "prints 120" in user_of(llm.requests[3]) and json.dumps(PY["args"]) in user_of(llm.requests[3])
    expanded = result.candidates[0]
    assert expanded.child_score == 1.0 and expanded.child_action == ActionCandidate("then", None, {})
    assert expanded.value == pytest.approx((0.8 + 0.5 * 1.0) / 1.5)
    assert result.candidates[1].child_score is None and result.score == expanded.value


async def test_expansion_changes_the_winner_when_the_next_step_looks_bad() -> None:
    script = (as_json([PY, READ]), sim(8), sim(7))
    shallow = await MCTSReasoner(backend(*script), expand_top=0).select_best_action(TASK, "", TOOLS)
    assert shallow.action.tool_name == "python"

    llm = backend(*script, expansion(1), expansion(9))
    deep = await MCTSReasoner(llm, expand_top=2).select_best_action(TASK, "", TOOLS)
    assert kinds(llm.requests) == ["propose", "simulate", "simulate", "expand", "expand"]
    assert deep.action.tool_name == "read_file"
    assert [c.child_score for c in deep.candidates] == [0.1, 0.9]


async def test_direct_answers_and_failed_simulations_are_not_expanded() -> None:
    llm = backend(as_json([ANSWER, SEARCH, READ]), sim(9), ScriptedReply(error=(500, "x")), sim(4), expansion(5))
    result = await MCTSReasoner(llm, expand_top=1).select_best_action(TASK, "", TOOLS)
    assert kinds(llm.requests) == ["propose", "simulate", "simulate", "simulate", "expand"]
    assert json.dumps(READ["args"]) in user_of(llm.requests[4])  # the best *expandable* candidate
    assert [c.child_score for c in result.candidates] == [None, None, 0.5]


async def test_unparseable_expansion_keeps_the_own_score() -> None:
    llm = backend(as_json([READ, PY]), sim(6), sim(2), text("hard to say"))
    result = await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    assert result.score == 0.6 and result.candidates[0].child_score is None
    assert "not backed up" in (result.candidates[0].note or "")


async def test_a_lone_candidate_is_returned_without_simulation() -> None:
    llm = backend(as_json([READ]))
    result = await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    assert result.provenance == "single" and result.action.tool_name == "read_file"
    assert result.llm_calls == 1 and kinds(llm.requests) == ["propose"]
    assert result.score == 0.5 and "not simulated" in (result.candidates[0].note or "")


# ------------------------------------------------------------------------------------ ties and records


async def test_ties_go_to_the_earliest_proposal_every_time() -> None:
    for _ in range(3):
        llm = backend(as_json([SEARCH, PY, READ]), sim(4), sim(6), sim(6))
        result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", TOOLS)
        assert result.winner_index == 1 and result.action.tool_name == "python"
    # a backed-up value equal to an own score ties too: (0.3 + 0.9·0.3)/1.9 is 0.30000000000000004 in floats,
    # and that rounding must not beat the earlier direct answer's 0.3
    llm = backend(as_json([ANSWER, READ]), sim(3), sim(3), expansion(3))
    result = await MCTSReasoner(llm, expand_top=1, gamma=0.9).select_best_action(TASK, "", TOOLS)
    assert result.candidates[1].child_score == 0.3 and result.winner_index == 0


async def test_result_record_and_select_log(logs: list[dict[str, Any]]) -> None:
    llm = backend(as_json([PY, READ]), sim(2), sim(7), expansion(8))
    result = await MCTSReasoner(llm).select_best_action(TASK, "", TOOLS)
    record = orjson.loads(orjson.dumps(result.to_dict()))
    assert record["provenance"] == "llm_sim" and record["winner_index"] == 1 and record["llm_calls"] == 4
    assert record["action"] == {"description": READ["description"], "tool_name": "read_file",
                                "tool_args": READ["args"]}
    assert [c["score"] for c in record["candidates"]] == [0.2, 0.7]
    assert record["candidates"][1]["child_score"] == 0.8 and record["duration_ms"] >= 0
    (event,) = [e for e in logs if e["event"] == "mcts_select"]
    assert event["provenance"] == "llm_sim" and event["n_candidates"] == 2 and event["winner"] == 1
    assert event["scores"] == [0.2, 0.7] and event["llm_calls"] == 4 and "ms" in event


# ----------------------------------------------------------------------------------- inputs and parsing


async def test_tool_specs_in_every_accepted_shape() -> None:
    tools = [TOOLS[0], {"name": "read_file"}, ToolSpec("web_search", "find things"), {"description": "nameless"}]
    llm = backend(as_json([READ, SEARCH, PY]), sim(1), sim(2), sim(3))
    result = await MCTSReasoner(llm, expand_top=0).select_best_action(TASK, "", tools)
    assert tools_of(result) == ["read_file", "web_search", "python"]
    assert "- web_search: find things" in user_of(llm.requests[0]) and "nameless" not in user_of(llm.requests[0])


async def test_no_tools_allows_only_direct_answers() -> None:
    llm = backend(as_json([READ, ANSWER]), sim(5))
    result = await MCTSReasoner(llm).select_best_action(TASK, "", [])
    assert tools_of(result) == [None] and "answer directly" in user_of(llm.requests[0])


def test_iter_json_yields_outer_values_before_nested_ones() -> None:
    found = list(iter_json('note {"a": {"b": 1}} and [1, [2]]'))
    assert found == [{"a": {"b": 1}}, [1, [2]]]
    assert parse_candidates("nothing here", frozenset({"python"}), 3) == []


@pytest.mark.parametrize(
    "kwargs", [{"max_candidates": 0}, {"expand_top": -1}, {"gamma": 1.5}, {"gamma": float("nan")},
               {"temperature": -1.0}, {"max_tokens": 0}],
)
def test_constructor_rejects_bad_settings(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        MCTSReasoner(backend(), **kwargs)


async def test_seed_candidates_come_first_and_the_proposal_fills_the_rest() -> None:
    own = ActionCandidate("read it", "read_file", {"path": "data.csv"})
    llm = backend(as_json([READ, PY, SEARCH]), sim(3), sim(8), expansion(5))
    result = await MCTSReasoner(llm, max_candidates=2).select_best_action(TASK, "", TOOLS, seed=[own])
    # the proposal's copy of the seed is dropped as a duplicate; one alternative fills the second slot
    assert [c.action for c in result.candidates][0] == own
    assert [c.action.tool_name for c in result.candidates] == ["read_file", "python"]
    assert result.winner_index == 1


async def test_a_full_seed_skips_the_proposal_call() -> None:
    seeds = [ActionCandidate("a", "python", {"code": "1"}), ActionCandidate("b", "python", {"code": "2"})]
    llm = backend(sim(2), sim(7))
    result = await MCTSReasoner(llm, max_candidates=2, expand_top=0).select_best_action(TASK, "", TOOLS, seed=seeds)
    assert kinds(llm.requests) == ["simulate", "simulate"] and result.winner_index == 1


async def test_proposed_direct_answers_can_be_excluded() -> None:
    own = ActionCandidate("read it", "read_file", {"path": "data.csv"})
    answer = {"description": "just answer", "tool": None, "args": {}}
    llm = backend(as_json([answer, PY]), sim(3), sim(8))
    result = await MCTSReasoner(llm, max_candidates=3, expand_top=0).select_best_action(
        TASK, "", TOOLS, seed=[own], allow_answer=False
    )
    assert [c.action.tool_name for c in result.candidates] == ["read_file", "python"]
