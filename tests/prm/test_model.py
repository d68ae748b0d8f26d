"""StepValueModel: the shared core bound to the PRM's kind and frozen features; checkpoints and drift."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from ghost_agent.learned.linear import CheckpointError, LogisticModel, roc_auc
from ghost_agent.prm.features import PRM_FEATURE_NAMES, ActionCandidate, PlanState, extract_step_features
from ghost_agent.prm.model import KIND, SCHEMA, StepValueModel
from ghost_agent.router.features import ROUTER_FEATURE_NAMES

TOOLS = ("bash", "python", "read_file", "web_search", "memory_search", "frobnicate")


def step_samples(seed: int, n: int) -> tuple[list[tuple[PlanState, ActionCandidate]], list[float]]:
    """(state, action) pairs whose success depends on known features: re-firing a failed tool is bad."""
    rng = random.Random(seed)
    pairs: list[tuple[PlanState, ActionCandidate]] = []
    labels: list[float] = []
    for _ in range(n):
        tool = rng.choice(TOOLS)
        failed = frozenset(rng.sample(TOOLS, rng.randint(0, 2)))
        state = PlanState(user_request=rng.choice(["list files", "fix the bug in main.py", "what is 2+2?"]),
                          steps_so_far=rng.randint(0, 6), failures_so_far=len(failed), tools_failed=failed,
                          tools_used=failed | {rng.choice(TOOLS)})
        action = ActionCandidate(f"use {tool}", tool, {"arg": "x" * rng.randint(0, 30)})
        good = tool not in failed and state.steps_so_far < 5
        labels.append(1.0 if (good if rng.random() < 0.9 else not good) else 0.0)
        pairs.append((state, action))
    return pairs, labels


def trained(seed: int = 0, n: int = 600) -> StepValueModel:
    pairs, labels = step_samples(seed, n)
    m = StepValueModel()
    m.fit_rows([extract_step_features(s, a) for s, a in pairs], labels)
    return m


def constant(p: float) -> StepValueModel:
    return StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES)), bias=math.log(p / (1 - p)))


def test_defaults_bind_the_prm_layout() -> None:
    m = StepValueModel()
    assert m.kind == KIND == "prm" and m.schema == SCHEMA == "ghost.prm.logreg.v1"
    assert m.feature_names == PRM_FEATURE_NAMES and m.n_features == 25
    assert isinstance(m, LogisticModel) and not m.is_fitted


def test_unfitted_predict_step_is_neutral() -> None:
    assert StepValueModel().predict_step(PlanState(), ActionCandidate("x", "bash")) == 0.5


def test_fit_learns_the_known_rule() -> None:
    m = trained()
    pairs, labels = step_samples(seed=99, n=400)
    scores = [m.predict_step(s, a) for s, a in pairs]
    auc = roc_auc(scores, labels)
    assert auc is not None and auc > 0.85
    ranked = [name for name, _, _ in m.ranked_weights()[:3]]
    assert "cross_tool_failed_this_turn" in ranked


def test_refiring_a_failed_tool_scores_lower() -> None:
    m = trained()
    state = PlanState(user_request="list files", steps_so_far=1, failures_so_far=1,
                      tools_used=frozenset({"bash"}), tools_failed=frozenset({"bash"}))
    retry = m.predict_step(state, ActionCandidate("retry", "bash"))
    assert retry < m.predict_step(state, ActionCandidate("alt", "python"))


def test_predict_step_equals_predict_one_on_extracted_features() -> None:
    m = trained()
    for state, action in step_samples(seed=5, n=30)[0]:
        assert m.predict_step(state, action) == m.predict_one(extract_step_features(state, action))
        assert m.predict_step(state.to_dict(), action.to_dict()) == m.predict_step(state, action)


def test_fit_rows_passes_weights_and_options() -> None:
    pairs, labels = step_samples(seed=1, n=300)
    rows = [extract_step_features(s, a) for s, a in pairs]
    plain = StepValueModel()
    plain.fit_rows(rows, labels)
    weighted = StepValueModel()
    weighted.fit_rows(rows, labels, [3.0 if y else 1.0 for y in labels])
    shrunk = StepValueModel()
    stats = shrunk.fit_rows(rows, labels, None, l2=100.0)
    assert weighted.bias > plain.bias  # upweighted positives raise the prior
    assert stats.l2 == 100.0
    assert np.linalg.norm(shrunk.weights) < np.linalg.norm(plain.weights)  # type: ignore[arg-type]


def test_soft_mc_labels_keep_their_order() -> None:
    # Monte Carlo values γ^(N-i-1): later steps of a winning rollout are worth more.
    rows, labels = [], []
    for _ in range(40):
        for i, value in enumerate([0.729, 0.81, 0.9, 1.0]):
            rows.append(extract_step_features(PlanState(steps_so_far=i), ActionCandidate("s", "bash")))
            labels.append(value)
        rows.append(extract_step_features(PlanState(steps_so_far=0), ActionCandidate("s", "frobnicate")))
        labels.append(0.0)
    m = StepValueModel()
    m.fit_rows(rows, labels)
    p = [m.predict_step(PlanState(steps_so_far=i), ActionCandidate("s", "bash")) for i in range(4)]
    assert p == sorted(p) and p[0] < p[3]
    assert m.predict_step(PlanState(), ActionCandidate("s", "frobnicate")) < 0.1


def test_nan_rows_score_like_zeros() -> None:
    m = trained()
    row = list(extract_step_features(PlanState(steps_so_far=2), ActionCandidate("x", "bash")))
    dirty = list(row)
    dirty[8] = math.nan
    clean = list(row)
    clean[8] = 0.0
    assert m.predict_one(dirty) == pytest.approx(m.predict_one(clean), abs=1e-15)


def test_extreme_weights_stay_inside_the_unit_interval() -> None:
    huge = StepValueModel(weights=np.full(25, 1e9), bias=0.0)
    tiny = StepValueModel(weights=np.full(25, -1e9), bias=0.0)
    state, action = PlanState(steps_so_far=3), ActionCandidate("x", "bash", {"a": 1})
    assert 0.5 < huge.predict_step(state, action) < 1.0
    assert 0.0 < tiny.predict_step(state, action) < 0.5


def test_save_load_round_trip(tmp_path: Path) -> None:
    m = trained()
    m.metadata = {"trained_at": "2026-04-26T10:00:00+00:00", "samples": 600, "metrics": {"auc": 0.9}}
    path = m.save(tmp_path / "prm.json")
    loaded = StepValueModel.load(path)
    assert type(loaded) is StepValueModel
    assert loaded.model_id == m.model_id and loaded.metadata == m.metadata
    for state, action in step_samples(seed=7, n=50)[0]:
        assert loaded.predict_step(state, action) == m.predict_step(state, action)
    assert orjson.loads(path.read_bytes())["schema"] == "ghost.prm.logreg.v1"


def test_atomic_replace_keeps_the_old_checkpoint(tmp_path: Path) -> None:
    path = trained().save(tmp_path / "prm.json")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="unfitted"):
        StepValueModel().save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["prm.json"]
    assert StepValueModel.load(path).is_fitted


def test_router_checkpoint_is_not_a_prm(tmp_path: Path) -> None:
    router = LogisticModel(kind="router", feature_names=ROUTER_FEATURE_NAMES, weights=np.ones(11))
    with pytest.raises(CheckpointError, match="ghost.router.logreg.v1"):
        StepValueModel.load(router.save(tmp_path / "router.json"))
    disguised = LogisticModel(kind="router", feature_names=PRM_FEATURE_NAMES, weights=np.ones(25))
    with pytest.raises(CheckpointError, match="schema"):
        StepValueModel.load(disguised.save(tmp_path / "disguised.json"))


def _saved(tmp_path: Path, **changes: Any) -> Path:
    data = constant(0.3).to_dict()
    data.update(changes)
    path = tmp_path / "prm.json"
    path.write_bytes(orjson.dumps(data))
    return path


@pytest.mark.parametrize("schema", ["ghost.prm.logreg.v0", "ghost.prm.mlp.v1", "ghost.prm.logreg.v2", "", None])
def test_other_schemas_are_rejected(tmp_path: Path, schema: Any) -> None:
    with pytest.raises(CheckpointError, match="retrain"):
        StepValueModel.load(_saved(tmp_path, schema=schema))


def test_legacy_v0_checkpoint_without_names_is_rejected(tmp_path: Path) -> None:
    legacy = {"schema": "ghost.prm.logreg.v0", "weights": [0.0] * 25, "bias": 0.0}
    path = tmp_path / "legacy.json"
    path.write_bytes(orjson.dumps(legacy))
    with pytest.raises(CheckpointError, match="v0"):
        StepValueModel.load(path)


def test_partial_feature_names_are_rejected(tmp_path: Path) -> None:
    names = list(PRM_FEATURE_NAMES[:20])
    with pytest.raises(CheckpointError) as err:
        StepValueModel.load(_saved(tmp_path, feature_names=names, weights=[0.0] * 20))
    assert "missing tool_is_external, tool_is_memory" in str(err.value) and "retrain" in str(err.value)


def test_checkpoint_from_a_newer_version_is_rejected(tmp_path: Path) -> None:
    names = [*PRM_FEATURE_NAMES, "future_feature"]
    with pytest.raises(CheckpointError, match="unexpected future_feature"):
        StepValueModel.load(_saved(tmp_path, feature_names=names, weights=[0.0] * 26))


def test_reordered_feature_names_are_rejected(tmp_path: Path) -> None:
    names = list(PRM_FEATURE_NAMES)
    names[0], names[1] = names[1], names[0]
    with pytest.raises(CheckpointError, match="different order"):
        StepValueModel.load(_saved(tmp_path, feature_names=names))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"weights": [0.0] * 24}, "needs 25 weights"),
        ({"weights": [math.nan] + [0.0] * 24}, "not finite"),
        ({"weights": [[0.0]] * 25}, "flat list"),
        ({"bias": "x"}, "not numbers"),
    ],
)
def test_bad_weights_are_rejected(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    # orjson writes NaN as null, which loads back as a non-finite weight
    with pytest.raises(CheckpointError, match=message) as err:
        StepValueModel.load(_saved(tmp_path, **changes))
    assert "prm.json" in str(err.value)


def test_corrupted_json_is_rejected(tmp_path: Path) -> None:
    path = trained().save(tmp_path / "prm.json")
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])  # a torn file
    with pytest.raises(CheckpointError, match="not valid JSON"):
        StepValueModel.load(path)


def test_from_linear() -> None:
    base = LogisticModel(kind="prm", feature_names=PRM_FEATURE_NAMES, weights=np.ones(25), bias=0.5,
                         metadata={"k": 1})
    m = StepValueModel.from_linear(base)
    assert type(m) is StepValueModel and m.model_id == base.model_id and m.metadata == {"k": 1}
    with pytest.raises(CheckpointError, match="not a PRM"):
        StepValueModel.from_linear(LogisticModel(kind="router", feature_names=PRM_FEATURE_NAMES))
    with pytest.raises(CheckpointError, match="not a PRM"):
        StepValueModel.from_linear(LogisticModel(kind="prm", feature_names=ROUTER_FEATURE_NAMES))


def test_constant_models_hit_their_probability() -> None:
    for p in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert constant(p).predict_step({}, {}) == pytest.approx(p, abs=1e-12)
