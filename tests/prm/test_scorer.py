"""PRMScorer: neutral without a model, clamping, batches, the uncertainty contract, hot-swap under threads."""

from __future__ import annotations

import math
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.learned.linear import LogisticModel
from ghost_agent.prm.features import PRM_FEATURE_NAMES, ActionCandidate, PlanState
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import NEUTRAL, PRMScorer, clamp_unit
from ghost_agent.router.features import ROUTER_FEATURE_NAMES

STATE = PlanState(user_request="count the lines in data.csv", steps_so_far=1, tools_used=frozenset({"bash"}))
ACTIONS = [
    ActionCandidate("count with wc", "bash", {"cmd": "wc -l data.csv"}),
    ActionCandidate("count in python", "python", {"code": "print(sum(1 for _ in open('data.csv')))"}),
    ActionCandidate("search the web", "web_search", {"q": "how to count lines"}),
    ActionCandidate("just answer"),
]


def constant(p: float) -> StepValueModel:
    """A model that predicts exactly `p` for everything (zero weights, bias = logit p)."""
    return StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES)), bias=math.log(p / (1 - p)))


def varied(seed: int, bias: float = 0.0) -> StepValueModel:
    """A model whose score depends on the inputs."""
    return StepValueModel(weights=np.random.default_rng(seed).normal(scale=0.5, size=25), bias=bias)


@pytest.fixture
def logs() -> Any:
    structlog.reset_defaults()  # whatever an earlier test configured, capture sees info and warnings
    with capture_logs() as captured:
        yield captured


def events(captured: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in captured if e["event"] == name]


# --------------------------------------------------------------------------------------------- neutral


def test_no_model_is_neutral() -> None:
    scorer = PRMScorer()
    assert not scorer.has_model and scorer.model is None and scorer.model_id is None
    assert scorer.score(STATE, ACTIONS[0]) == NEUTRAL == 0.5
    assert scorer.score_batch(STATE, ACTIONS) == [0.5] * 4
    assert scorer.score_pairs([(STATE, a) for a in ACTIONS]) == [0.5] * 4


def test_unfitted_model_is_treated_as_none() -> None:
    scorer = PRMScorer(StepValueModel())
    assert not scorer.has_model and scorer.score(STATE, ACTIONS[0]) == 0.5


def test_has_model_and_id() -> None:
    model = varied(1)
    scorer = PRMScorer(model, source="unit")
    assert scorer.has_model and scorer.model is model
    assert scorer.model_id == model.model_id and scorer.source == "unit"


# --------------------------------------------------------------------------------------------- scoring


def test_score_is_the_model_prediction() -> None:
    model = varied(2)
    scorer = PRMScorer(model)
    for action in ACTIONS:
        assert scorer.score(STATE, action) == model.predict_step(STATE, action)
        assert 0.0 < scorer.score(STATE, action) < 1.0


def test_score_accepts_mappings() -> None:
    scorer = PRMScorer(varied(3))
    for action in ACTIONS:
        assert scorer.score(STATE.to_dict(), action.to_dict()) == scorer.score(STATE, action)


def test_score_batch_and_pairs_equal_per_item_scores() -> None:
    scorer = PRMScorer(varied(4))
    singles = [scorer.score(STATE, a) for a in ACTIONS]
    assert scorer.score_batch(STATE, ACTIONS) == pytest.approx(singles, rel=1e-12, abs=1e-15)
    assert scorer.score_batch(STATE, iter(ACTIONS)) == pytest.approx(singles, rel=1e-12, abs=1e-15)
    states = [STATE, STATE.after(ACTIONS[0]), STATE.after(ACTIONS[1], ok=False), PlanState()]
    pairs = list(zip(states, ACTIONS, strict=True))
    expected = [scorer.score(s, a) for s, a in pairs]
    assert scorer.score_pairs(pairs) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert len(set(expected)) > 1  # the model really distinguishes these


def test_empty_batches() -> None:
    for scorer in (PRMScorer(), PRMScorer(varied(5))):
        assert scorer.score_batch(STATE, []) == []
        assert scorer.score_pairs([]) == []
        assert scorer.score_batch(STATE, iter(())) == []


def test_large_batch() -> None:
    scorer = PRMScorer(varied(6))
    actions = [ActionCandidate(f"candidate {i}", ("bash", "python", "grep", None)[i % 4], {"i": i})
               for i in range(1000)]
    scores = scorer.score_batch(STATE, actions)
    assert len(scores) == 1000 and all(0.0 <= s <= 1.0 for s in scores)
    assert scores[:7] == pytest.approx([scorer.score(STATE, a) for a in actions[:7]], rel=1e-12)


def test_scores_at_the_rails_stay_in_the_unit_interval() -> None:
    for bias in (-1e6, 1e6):
        scorer = PRMScorer(StepValueModel(weights=np.zeros(25), bias=bias))
        for value in [scorer.score(STATE, ACTIONS[0]), *scorer.score_batch(STATE, ACTIONS)]:
            assert 0.0 <= value <= 1.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.3, 0.3),
        (0.0, 0.0),
        (1.0, 1.0),
        (-0.2, 0.0),
        (1.5, 1.0),
        (-1e308, 0.0),
        (math.inf, 1.0),
        (-math.inf, 0.0),
        (math.nan, 0.5),
        (np.float64(math.nan), 0.5),
        (Decimal("NaN"), 0.5),
        (np.float32(0.25), 0.25),
        (True, 1.0),
        (None, 0.5),
        ("high", 0.5),
        (object(), 0.5),
        ([0.3], 0.5),
        (10**400, 1.0),  # too big for a float, but still clearly above 1
        (-(10**400), 0.0),
    ],
)
def test_clamp_unit(value: Any, expected: float) -> None:
    out = clamp_unit(value)
    assert type(out) is float and out == expected


# ------------------------------------------------------------------------------------------ uncertainty


def test_uncertainty_untrained_is_one() -> None:
    assert PRMScorer().uncertainty(STATE, ACTIONS[0]) == 1.0


@pytest.mark.parametrize("bias", [-1e3, -60.0, 60.0, 1e3])
def test_uncertainty_at_the_rails_is_zero(bias: float) -> None:
    u = PRMScorer(StepValueModel(weights=np.zeros(25), bias=bias)).uncertainty(STATE, ACTIONS[0])
    assert u == pytest.approx(0.0, abs=1e-12) and u >= 0.0


def test_uncertainty_at_one_half_is_one() -> None:
    assert PRMScorer(constant(0.5)).uncertainty(STATE, ACTIONS[0]) == 1.0


@pytest.mark.parametrize("p", [0.25, 0.75])
def test_uncertainty_at_the_quarter_points_is_one_half(p: float) -> None:
    assert PRMScorer(constant(p)).uncertainty(STATE, ACTIONS[0]) == pytest.approx(0.5, abs=1e-12)


def test_uncertainty_is_symmetric_and_monotone() -> None:
    us = [PRMScorer(constant(p)).uncertainty(STATE, ACTIONS[0]) for p in (0.05, 0.2, 0.35, 0.5)]
    assert us == sorted(us)
    for p in (0.1, 0.3, 0.45):
        mirrored = PRMScorer(constant(1 - p)).uncertainty({}, {})
        assert PRMScorer(constant(p)).uncertainty({}, {}) == pytest.approx(mirrored)


def test_uncertainty_with_nan_inputs_is_finite() -> None:
    scorer = PRMScorer(varied(7))
    state = {"user_request": math.nan, "steps_so_far": math.nan, "tools_used": [math.nan]}
    action = {"description": math.nan, "tool_name": math.nan, "tool_args": {"x": math.nan, "y": math.inf}}
    u = scorer.uncertainty(state, action)
    assert 0.0 <= u <= 1.0 and math.isfinite(u)
    assert 0.0 <= scorer.score(state, action) <= 1.0


class BrokenState:
    """A caller object whose attribute access raises (not data: a bug on the caller's side)."""

    @property
    def user_request(self) -> str:
        raise RuntimeError("state exploded")


def test_uncertainty_isolates_exceptions(logs: list[dict[str, Any]]) -> None:
    scorer = PRMScorer(varied(8))
    assert scorer.uncertainty(BrokenState(), ACTIONS[0]) == 1.0
    [event] = events(logs, "prm_uncertainty_error")
    assert event["log_level"] == "warning" and "state exploded" in event["error"]


def test_score_propagates_a_broken_caller_object() -> None:
    # The honest contract: score does not hide a caller's bug behind a plausible number; MCTS catches it and
    # falls back to LLM simulation, and uncertainty (above) maps it to 1.0. Without a model nothing is read.
    with pytest.raises(RuntimeError, match="state exploded"):
        PRMScorer(varied(9)).score(BrokenState(), ACTIONS[0])
    assert PRMScorer().score(BrokenState(), ACTIONS[0]) == 0.5
    assert PRMScorer().uncertainty(BrokenState(), ACTIONS[0]) == 1.0


def test_uncertainty_never_raises_on_hostile_data() -> None:
    class Hostile:
        def __str__(self) -> str:
            raise RuntimeError("no")

    scorer = PRMScorer(varied(10))
    u = scorer.uncertainty({"user_request": Hostile(), "steps_so_far": Hostile()},
                           {"description": Hostile(), "tool_name": Hostile(), "tool_args": Hostile()})
    assert 0.0 <= u <= 1.0


# ------------------------------------------------------------------------------------------- hot-swap


def test_set_model_is_picked_up_by_the_next_score(logs: list[dict[str, Any]]) -> None:
    scorer = PRMScorer()
    low, high = constant(0.2), constant(0.9)
    scorer.set_model(low, source="trainer")
    assert scorer.score(STATE, ACTIONS[0]) == pytest.approx(0.2)
    assert scorer.has_model and scorer.source == "trainer" and scorer.swaps == 1
    scorer.set_model(high)
    assert scorer.score(STATE, ACTIONS[0]) == pytest.approx(0.9)
    scorer.set_model(None)
    assert scorer.score(STATE, ACTIONS[0]) == 0.5 and not scorer.has_model and scorer.model_id is None
    swaps = events(logs, "prm_swapped")
    assert [(e["previous"], e["model_id"]) for e in swaps] == [
        (None, low.model_id), (low.model_id, high.model_id), (high.model_id, None)
    ]


def test_set_model_of_an_unfitted_model_raises() -> None:
    scorer = PRMScorer(constant(0.3))
    with pytest.raises(ValueError, match="unfitted"):
        scorer.set_model(StepValueModel())
    assert scorer.score(STATE, ACTIONS[0]) == pytest.approx(0.3) and scorer.swaps == 0


def test_thousand_swaps_each_picked_up() -> None:
    models = [constant(0.1), constant(0.8), varied(11)]
    expected = [m.predict_step(STATE, ACTIONS[1]) for m in models]
    scorer = PRMScorer()
    with capture_logs():  # 1000 swap events: keep them off stdout
        for i in range(1000):
            scorer.set_model(models[i % 3])
            assert scorer.score(STATE, ACTIONS[1]) == expected[i % 3]
    assert scorer.swaps == 1000


def test_concurrent_score_during_swaps() -> None:
    a, b = varied(12, bias=-1.0), varied(13, bias=2.0)
    allowed = {
        "score": {a.predict_step(STATE, ACTIONS[0]), b.predict_step(STATE, ACTIONS[0])},
        "batch": {tuple(PRMScorer(m).score_batch(STATE, ACTIONS)) for m in (a, b)},
    }
    assert len(allowed["score"]) == 2
    scorer = PRMScorer(a)
    stop = threading.Event()
    errors: list[BaseException] = []
    bad: list[Any] = []
    reads = [0] * 4

    def reader(k: int) -> None:
        try:
            while not stop.is_set():
                if scorer.score(STATE, ACTIONS[0]) not in allowed["score"]:
                    bad.append("score")
                if tuple(scorer.score_batch(STATE, ACTIONS)) not in allowed["batch"]:
                    bad.append("batch")
                if not 0.0 <= scorer.uncertainty(STATE, ACTIONS[0]) <= 1.0:
                    bad.append("uncertainty")
                reads[k] += 1
        except BaseException as exc:
            errors.append(exc)

    def swapper() -> None:
        try:
            i = 0
            while not stop.is_set():
                scorer.set_model(b if i % 2 == 0 else a)
                i += 1
        except BaseException as exc:
            errors.append(exc)

    with capture_logs():
        threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
        threads.append(threading.Thread(target=swapper))
        for t in threads:
            t.start()
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=10)
    assert errors == [] and bad == []
    assert all(n > 0 for n in reads)
    assert scorer.swaps > 10


# ---------------------------------------------------------------------------------------- load/settings


def test_load_logs_prm_loaded(tmp_path: Path, logs: list[dict[str, Any]]) -> None:
    model = varied(14)
    model.metadata = {"trained_at": "2026-04-26T10:00:00+00:00"}
    path = model.save(tmp_path / "prm.json")
    scorer = PRMScorer.load(path)
    assert scorer.has_model and scorer.model_id == model.model_id and scorer.source == str(path)
    assert scorer.score(STATE, ACTIONS[2]) == model.predict_step(STATE, ACTIONS[2])
    [event] = events(logs, "prm_loaded")
    assert event["model_id"] == model.model_id and event["path"] == str(path)
    assert event["trained_at"] == "2026-04-26T10:00:00+00:00" and event["log_level"] == "info"


@pytest.mark.parametrize("setting", [None, ""])
def test_from_setting_without_a_path_is_neutral(setting: Any, logs: list[dict[str, Any]]) -> None:
    scorer = PRMScorer.from_setting(setting)
    assert not scorer.has_model and scorer.score(STATE, ACTIONS[0]) == 0.5
    assert logs == []


def test_from_setting_missing_file_warns(tmp_path: Path, logs: list[dict[str, Any]]) -> None:
    path = tmp_path / "absent" / "prm.json"
    scorer = PRMScorer.from_setting(path)
    assert not scorer.has_model
    [event] = events(logs, "prm_model_missing")
    assert event["log_level"] == "warning" and event["path"] == str(path)


@pytest.mark.parametrize(
    "content",
    [
        b"{ this is not json",
        b"",
        orjson.dumps({"schema": "ghost.prm.logreg.v0", "weights": [], "bias": 0}),
        orjson.dumps(LogisticModel(kind="router", feature_names=ROUTER_FEATURE_NAMES, weights=np.ones(11)).to_dict()),
        orjson.dumps(constant(0.4).to_dict() | {"weights": [[0.0]] * 25}),
    ],
)
def test_from_setting_unusable_file_warns(tmp_path: Path, content: bytes, logs: list[dict[str, Any]]) -> None:
    path = tmp_path / "prm.json"
    path.write_bytes(content)
    scorer = PRMScorer.from_setting(str(path))
    assert not scorer.has_model and scorer.score(STATE, ACTIONS[0]) == 0.5
    [event] = events(logs, "prm_model_unusable")
    assert event["log_level"] == "warning" and str(path) in event["error"]


def test_from_setting_loads_a_good_checkpoint(tmp_path: Path) -> None:
    model = varied(15)
    path = model.save(tmp_path / "prm.json")
    scorer = PRMScorer.from_setting(str(path))
    assert scorer.has_model and scorer.model_id == model.model_id
