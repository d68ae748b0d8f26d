"""MCTSReasoner's PRM fast path: when it engages, clamping, exception isolation, hot swap, PRM lookahead.

Real PRMScorer / StepValueModel objects whose preferences are known (weights set by feature name, or fitted on
a small synthetic matrix); duck-typed scorers are small fakes passed in. The ScriptedBackend's `.requests`
proves how many LLM calls each path made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ghost_agent.mcts import ActionCandidate, MCTSReasoner, PlanState
from ghost_agent.prm.features import PRM_FEATURE_NAMES, extract_step_features
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from tests.mcts.test_reasoner import ANSWER, PY, READ, TASK, TOOLS, as_json, backend, kinds, logs, sim

__all__ = ["logs"]  # the fixture, re-exported for pytest

STATE = PlanState(user_request=TASK)
PY_C = ActionCandidate.from_dict(PY)
READ_C = ActionCandidate.from_dict(READ)


def model(weights: dict[str, float], bias: float = 0.0) -> StepValueModel:
    """A StepValueModel with the given weights by feature name (all others 0)."""
    vector = np.zeros(len(PRM_FEATURE_NAMES))
    for name, value in weights.items():
        vector[PRM_FEATURE_NAMES.index(name)] = value
    return StepValueModel(weights=vector, bias=bias)


LIKES_LIGHT = model({"tool_is_lightweight": 2.0, "tool_is_heavyweight": -2.0})
LIKES_HEAVY = model({"tool_is_lightweight": -2.0, "tool_is_heavyweight": 2.0})


class DuckScorer:
    """A scorer that is not a PRMScorer: `score` only, returning a fixed value per tool."""

    has_model = True

    def __init__(self, by_tool: dict[str | None, Any]) -> None:
        self.by_tool = by_tool
        self.calls = 0

    def score(self, state: Any, action: ActionCandidate) -> Any:
        self.calls += 1
        return self.by_tool[action.tool_name]


class FlakyScorer(PRMScorer):
    """A real PRMScorer whose next `fail` score_batch calls raise."""

    def __init__(self, model: StepValueModel, fail: int) -> None:
        super().__init__(model)
        self.fail = fail

    def score_batch(self, state: Any, actions: Any) -> list[float]:
        if self.fail > 0:
            self.fail -= 1
            raise RuntimeError("scorer exploded")
        return super().score_batch(state, actions)


# ------------------------------------------------------------------------------------ fast-path gating


async def test_fast_path_scores_with_the_prm_and_makes_no_simulation_calls(logs: list[dict[str, Any]]) -> None:
    scorer = PRMScorer(LIKES_LIGHT)
    llm = backend(as_json([PY, READ, ANSWER]))
    result = await MCTSReasoner(llm, prm_scorer=scorer, expand_top=0).select_best_action(TASK, "", TOOLS, STATE)
    assert result.provenance == "prm" and result.action == READ_C
    assert kinds(llm.requests) == ["propose"] and result.llm_calls == 1
    assert [c.score for c in result.candidates] == scorer.score_batch(STATE, [PY_C, READ_C, ActionCandidate()])
    assert all(c.imagined_result is None for c in result.candidates)
    (event,) = [e for e in logs if e["event"] == "mcts_select"]
    assert event["provenance"] == "prm" and event["llm_calls"] == 1


async def test_fast_path_with_supplied_candidates_makes_no_llm_call_at_all() -> None:
    llm = backend()
    mcts = MCTSReasoner(llm, prm_scorer=PRMScorer(LIKES_HEAVY))  # expansion on: still pure CPU
    result = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[READ_C, PY_C])
    assert llm.requests == [] and result.llm_calls == 0
    assert result.provenance == "prm" and result.action == PY_C


@pytest.mark.parametrize(
    "scorer, state",
    [
        pytest.param(None, STATE, id="no-scorer"),
        pytest.param(PRMScorer(), STATE, id="scorer-without-model"),
        pytest.param(PRMScorer(LIKES_LIGHT), None, id="no-prm-state"),
    ],
)
async def test_fast_path_needs_all_three_conditions(scorer: PRMScorer | None, state: PlanState | None) -> None:
    llm = backend(as_json([PY, READ]), sim(9), sim(1))
    result = await MCTSReasoner(llm, prm_scorer=scorer, expand_top=0).select_best_action(TASK, "", TOOLS, state)
    assert result.provenance == "llm_sim" and kinds(llm.requests) == ["propose", "simulate", "simulate"]
    assert result.action == PY_C  # the simulation's preference, not the PRM's


@pytest.mark.parametrize("has_model", [1, "yes", property(lambda self: 1 / 0)], ids=["truthy-int", "str", "raises"])
async def test_has_model_must_be_exactly_true(has_model: Any) -> None:
    scorer = type("Odd", (DuckScorer,), {"has_model": has_model})({"python": 1.0, "read_file": 0.0})
    llm = backend(sim(2), sim(8))
    result = await MCTSReasoner(llm, prm_scorer=scorer, expand_top=0).select_best_action(
        TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C]
    )
    assert result.provenance == "llm_sim" and scorer.calls == 0 and len(llm.requests) == 2


async def test_prm_state_may_be_a_mapping() -> None:
    llm = backend()
    mcts = MCTSReasoner(llm, prm_scorer=PRMScorer(LIKES_LIGHT), expand_top=0)
    result = await mcts.select_best_action(TASK, "", TOOLS, STATE.to_dict(), candidates=[PY_C, READ_C])
    assert result.provenance == "prm" and result.action == READ_C


# ------------------------------------------------------------------------------- clamping and isolation


async def test_duck_typed_scores_are_clamped_to_unit_range() -> None:
    scorer = DuckScorer({"python": 7.0, "read_file": -3, None: 0.25})
    llm = backend()
    result = await MCTSReasoner(llm, prm_scorer=scorer, expand_top=0).select_best_action(
        TASK, "", TOOLS, STATE, candidates=[READ_C, PY_C, ActionCandidate.from_dict(ANSWER)]
    )
    assert [c.score for c in result.candidates] == [0.0, 1.0, 0.25]
    assert result.provenance == "prm" and result.action == PY_C and result.score == 1.0
    assert scorer.calls == 3 and llm.requests == []


@pytest.mark.parametrize("bad", [float("nan"), "seven", None], ids=["nan", "string", "none"])
async def test_nan_or_non_number_falls_back_to_simulation(bad: Any, logs: list[dict[str, Any]]) -> None:
    scorer = DuckScorer({"python": 0.9, "read_file": bad})
    llm = backend(sim(1), sim(6))
    result = await MCTSReasoner(llm, prm_scorer=scorer, expand_top=0).select_best_action(
        TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C]
    )
    assert result.provenance == "llm_sim" and result.action == READ_C
    assert kinds(llm.requests) == ["simulate", "simulate"]
    assert result.fallback_reason is not None and "prm scorer failed" in result.fallback_reason
    (event,) = [e for e in logs if e["event"] == "mcts_prm_fallback"]
    assert event["log_level"] == "warning" and event["error"]


async def test_scorer_exception_falls_back_for_that_call_only(logs: list[dict[str, Any]]) -> None:
    scorer = FlakyScorer(LIKES_LIGHT, fail=1)
    llm = backend(sim(9), sim(1))
    mcts = MCTSReasoner(llm, prm_scorer=scorer, expand_top=0)
    first = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert first.provenance == "llm_sim" and first.action == PY_C and len(llm.requests) == 2
    assert "scorer exploded" in (first.fallback_reason or "")
    assert [e["error"] for e in logs if e["event"] == "mcts_prm_fallback"] == ["RuntimeError: scorer exploded"]

    second = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert second.provenance == "prm" and second.action == READ_C and second.fallback_reason is None
    assert len(llm.requests) == 2  # no new LLM call


async def test_wrong_number_of_scores_falls_back() -> None:
    class Short(PRMScorer):
        def score_batch(self, state: Any, actions: Any) -> list[float]:
            return [0.9]

    llm = backend(sim(3), sim(4))
    result = await MCTSReasoner(llm, prm_scorer=Short(LIKES_LIGHT), expand_top=0).select_best_action(
        TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C]
    )
    assert result.provenance == "llm_sim" and "1 scores for 2" in (result.fallback_reason or "")


# -------------------------------------------------------------------------------- hot swap and attach


async def test_set_model_between_calls_changes_the_winner_on_the_next_call() -> None:
    scorer = PRMScorer(LIKES_LIGHT)
    mcts = MCTSReasoner(backend(), prm_scorer=scorer, expand_top=0)
    before = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    scorer.set_model(LIKES_HEAVY, source="trainer")
    after = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert (before.action, after.action) == (READ_C, PY_C)
    scorer.set_model(None)  # back to neutral: the fast path disengages
    llm = backend(sim(2), sim(3))
    mcts.llm = llm
    neutral = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert neutral.provenance == "llm_sim" and len(llm.requests) == 2


async def test_assigning_a_scorer_after_construction_engages_the_fast_path() -> None:
    llm = backend(sim(8), sim(2))
    mcts = MCTSReasoner(llm, expand_top=0)
    first = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    mcts.prm_scorer = PRMScorer(LIKES_LIGHT)
    second = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert (first.provenance, first.action) == ("llm_sim", PY_C)
    assert (second.provenance, second.action) == ("prm", READ_C)
    assert len(llm.requests) == 2  # only the first call simulated


async def test_a_model_fitted_on_synthetic_steps_steers_selection() -> None:
    rng = np.random.default_rng(7)
    tools = ["python", "read_file", "web_search", "bash", "grep", "fetch"]
    rows: list[Sequence[float]] = []
    labels: list[float] = []
    for _ in range(60):
        tool = tools[int(rng.integers(len(tools)))]
        action = ActionCandidate(f"use {tool}", tool, {"x": "y" * int(rng.integers(1, 20))})
        rows.append(extract_step_features(PlanState(user_request="q", steps_so_far=int(rng.integers(3))), action))
        labels.append(1.0 if tool in ("read_file", "grep") else 0.0)  # lightweight tools succeed here
    fitted = StepValueModel()
    fitted.fit_rows(rows, labels)
    mcts = MCTSReasoner(backend(), prm_scorer=PRMScorer(fitted), expand_top=0)
    result = await mcts.select_best_action(TASK, "", TOOLS, STATE, candidates=[PY_C, READ_C])
    assert result.action == READ_C and result.score > 0.8 > result.candidates[0].score


# -------------------------------------------------------------------------------------- PRM lookahead


# First level: python with 1 arg ≈ read_file with 3 args (the args-count weight evens out the tool weights), so
# python wins narrowly. After python, the best next step is poor (python again is "already used", read_file
# and answering are weak); after read_file, python is still fresh and strong. Lookahead must flip the winner.
LOOKAHEAD = model(
    {"tool_is_heavyweight": 3.0, "tool_is_lightweight": -3.0, "cross_tool_already_used_this_turn": -20.0,
     "act_args_count": 2.9},
    bias=-1.0,
)
PY_1 = ActionCandidate("run it", "python", {"code": "print(1)"})
READ_3 = ActionCandidate("read it", "read_file", {"path": "data.csv", "start": 0, "end": 100})
TWO_TOOLS = TOOLS[:2]


@pytest.mark.parametrize("expand_top, winner", [(0, PY_1), (1, READ_3), (2, READ_3)])
async def test_prm_lookahead_changes_the_winner_when_a_child_looks_bad(
    expand_top: int, winner: ActionCandidate
) -> None:
    llm = backend()
    scorer = PRMScorer(LOOKAHEAD)
    mcts = MCTSReasoner(llm, prm_scorer=scorer, expand_top=expand_top, gamma=0.9)
    result = await mcts.select_best_action(TASK, "", TWO_TOOLS, STATE, candidates=[PY_1, READ_3])
    assert result.provenance == "prm" and result.action == winner and llm.requests == []
    py, read = result.candidates
    assert py.score > read.score  # the setup: python wins on first-level score alone
    if expand_top == 0:
        assert py.child_score is None and read.child_score is None
        return
    children = [
        ActionCandidate("next: use python", "python", {}),
        ActionCandidate("next: use read_file", "read_file", {}),
        ActionCandidate("next: answer directly", None, {}),
    ]
    assert py.child_score == max(scorer.score_batch(STATE.after(PY_1), children))
    assert py.value == pytest.approx((py.score + 0.9 * py.child_score) / 1.9)
    if expand_top == 2:
        assert read.child_score == max(scorer.score_batch(STATE.after(READ_3), children))
        assert read.child_action == children[0]  # python, still unused after reading


async def test_prm_ties_go_to_the_earliest_candidate() -> None:
    scorer = DuckScorer({"python": 0.5, "read_file": 0.5, None: 0.5})
    for _ in range(3):
        result = await MCTSReasoner(backend(), prm_scorer=scorer, expand_top=2).select_best_action(
            TASK, "", TWO_TOOLS, STATE, candidates=[READ_C, PY_C]
        )
        assert result.winner_index == 0 and result.action == READ_C
