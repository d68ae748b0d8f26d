"""The shared logistic-regression core: fitting, prediction, hardening, checkpoints, metrics."""

from __future__ import annotations

import itertools
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from ghost_agent.learned.linear import (
    LOGIT_CLIP,
    CheckpointError,
    FitError,
    LogisticModel,
    binary_metrics,
    describe_drift,
    roc_auc,
    sanitize_features,
    sanitize_labels,
    schema_for,
    sigmoid,
    sigmoid_scalar,
)

NAMES = ("a", "b", "c", "d")
TRUE_W = np.array([2.0, -1.0, 0.0, 0.5])
TRUE_B = 0.3


def model(names: tuple[str, ...] = NAMES, kind: str = "test", **kwargs: Any) -> LogisticModel:
    return LogisticModel(kind=kind, feature_names=names, **kwargs)


def synthetic(seed: int, n: int = 2000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, Bernoulli labels drawn from a known logistic model, and the true probabilities."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(NAMES)))
    p = 1.0 / (1.0 + np.exp(-(x @ TRUE_W + TRUE_B)))
    y = (rng.random(n) < p).astype(np.float64)
    return x, y, p


def fitted(seed: int = 0, **fit_kwargs: Any) -> LogisticModel:
    x, y, _ = synthetic(seed)
    m = model()
    m.fit(x, y, **fit_kwargs)
    return m


def brute_auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


# ------------------------------------------------------------------------------------------------ fitting


def test_fit_recovers_known_direction() -> None:
    x, y, _ = synthetic(seed=1, n=4000)
    m = model()
    stats = m.fit(x, y, l2=1e-4)
    assert m.weights is not None
    cosine = float(m.weights @ TRUE_W / (np.linalg.norm(m.weights) * np.linalg.norm(TRUE_W)))
    assert cosine > 0.98
    assert stats.converged and stats.n_samples == 4000 and stats.n_features == 4
    x_test, y_test, p_test = synthetic(seed=2, n=4000)
    auc = roc_auc(m.predict_proba(x_test), y_test)
    oracle = roc_auc(p_test, y_test)
    assert auc is not None and oracle is not None
    assert auc > 0.8
    assert auc > oracle - 0.01


def test_fit_10k_samples_is_fast() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(10_000, 25))
    y = (x[:, 0] + rng.normal(size=10_000) > 0).astype(float)
    m = model(tuple(f"f{i}" for i in range(25)))
    stats = m.fit(x, y)
    assert stats.seconds < 5.0  # the bar is 1 s (bench/); this only catches a per-sample loop
    assert stats.converged


def test_soft_labels_give_probabilities_near_them() -> None:
    x = np.array([[0.0], [1.0]] * 50)
    y = np.array([0.2, 0.7] * 50)
    m = model(("x",))
    m.fit(x, y, l2=0.0)
    assert m.predict_one([0.0]) == pytest.approx(0.2, abs=1e-6)
    assert m.predict_one([1.0]) == pytest.approx(0.7, abs=1e-6)


def test_constant_labels_fit_the_bias_only() -> None:
    x = np.random.default_rng(4).normal(size=(200, 4))
    m = model()
    m.fit(x, np.full(200, 0.3), l2=1.0)
    assert m.predict_proba(x) == pytest.approx(np.full(200, 0.3), abs=1e-3)


def test_zero_weight_is_the_same_as_dropping_the_sample() -> None:
    x, y, _ = synthetic(seed=5, n=300)
    extra_x, extra_y, _ = synthetic(seed=6, n=40)
    kept = model()
    kept.fit(x, y)
    padded = model()
    padded.fit(np.vstack([x, extra_x]), np.concatenate([y, 1 - extra_y]), np.r_[np.ones(300), np.zeros(40)])
    assert padded.weights == pytest.approx(kept.weights, abs=1e-8)
    assert padded.bias == pytest.approx(kept.bias, abs=1e-8)


def test_duplicated_sample_equals_weight_two() -> None:
    x, y, _ = synthetic(seed=7, n=200)
    weights = np.ones(200)
    weights[:30] = 2.0
    weighted = model()
    weighted.fit(x, y, weights)
    duplicated = model()
    duplicated.fit(np.vstack([x, x[:30]]), np.concatenate([y, y[:30]]))
    assert weighted.weights == pytest.approx(duplicated.weights, abs=1e-7)
    assert weighted.bias == pytest.approx(duplicated.bias, abs=1e-7)


def test_sample_weights_change_the_fit() -> None:
    x, y, _ = synthetic(seed=8, n=300)
    plain = model()
    plain.fit(x, y)
    skewed = model()
    skewed.fit(x, y, np.where(y > 0, 5.0, 1.0))  # upweighting positives raises every prediction
    assert np.all(skewed.predict_proba(x) > plain.predict_proba(x))


def test_uniform_weight_scale_does_not_matter() -> None:
    x, y, _ = synthetic(seed=9, n=300)
    a = model()
    a.fit(x, y)
    b = model()
    stats = b.fit(x, y, np.full(300, 7.0))
    assert b.weights == pytest.approx(a.weights, abs=1e-9)
    assert stats.weight_sum == pytest.approx(2100.0)


def test_l2_shrinks_weights_monotonically() -> None:
    x, y, _ = synthetic(seed=10, n=500)
    norms = []
    for l2 in (0.0, 0.01, 0.3, 3.0, 30.0):
        m = model()
        m.fit(x, y, l2=l2)
        norms.append(float(np.linalg.norm(m.weights)))
    assert norms == sorted(norms, reverse=True)
    assert norms[-1] < norms[0] / 5


def test_bias_is_not_penalized() -> None:
    x = np.random.default_rng(11).normal(size=(500, 4))
    y = np.r_[np.ones(400), np.zeros(100)]
    m = model()
    m.fit(x, y, l2=1e6)  # weights crushed to ~0; the prior must survive in the bias
    assert m.weights is not None and np.max(np.abs(m.weights)) < 1e-4
    assert m.predict_one([0.0] * 4) == pytest.approx(0.8, abs=1e-3)


def test_constant_column_gets_zero_weight_and_finite_fit() -> None:
    x, y, _ = synthetic(seed=12, n=300)
    x[:, 2] = 5.0
    m = model()
    m.fit(x, y)
    assert m.weights is not None and np.all(np.isfinite(m.weights))
    assert m.weights[2] == pytest.approx(0.0, abs=1e-9)
    assert m.feature_scale is not None and m.feature_scale[2] == 1.0
    assert m.feature_mean is not None and m.feature_mean[2] == pytest.approx(5.0)


def test_perfectly_separable_data_converges_with_finite_weights() -> None:
    x = np.array([[-2.0], [-1.0], [-0.5], [0.5], [1.0], [2.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    m = model(("x",))
    stats = m.fit(x, y, l2=0.0, max_iter=200)
    assert m.weights is not None and np.all(np.isfinite(m.weights)) and math.isfinite(m.bias)
    p = m.predict_proba(x)
    assert np.all(p[:3] < 0.01) and np.all(p[3:] > 0.99)
    assert np.all((p > 0) & (p < 1))
    assert math.isfinite(stats.loss)


def test_fit_stats_to_dict() -> None:
    x, y, _ = synthetic(seed=13, n=100)
    stats = model().fit(x, y, l2=0.5)
    d = stats.to_dict()
    assert d["n_samples"] == 100 and d["n_features"] == 4 and d["l2"] == 0.5
    assert d["iterations"] == stats.iterations >= 1
    assert orjson.loads(orjson.dumps(d)) == d


@pytest.mark.parametrize(
    ("x", "y", "w", "l2", "message"),
    [
        (np.zeros((0, 4)), [], None, 0.01, "non-empty"),
        (np.zeros(4), [1.0], None, 0.01, "2-D"),
        (np.zeros((3, 5)), [0, 1, 0], None, 0.01, "5 features"),
        (np.zeros((3, 4)), [0, 1], None, 0.01, "2 labels for 3 rows"),
        (np.zeros((3, 4)), [0, 1, 0], [1.0, 1.0], 0.01, "2 sample weights"),
        (np.zeros((3, 4)), [0, 1, 0], [0.0, 0.0, 0.0], 0.01, "positive weight"),
        (np.zeros((3, 4)), [0, 1, 0], [-1.0, -2.0, -3.0], 0.01, "positive weight"),
        (np.zeros((3, 4)), [0, 1, 0], [math.nan] * 3, 0.01, "positive weight"),
        (np.zeros((3, 4)), [0, 1, 0], None, -1.0, "l2"),
        (np.zeros((3, 4)), [0, 1, 0], None, math.nan, "l2"),
    ],
)
def test_fit_errors(x: Any, y: Any, w: Any, l2: float, message: str) -> None:
    m = model()
    with pytest.raises(FitError, match=message):
        m.fit(x, y, w, l2=l2)
    assert not m.is_fitted


def test_fit_error_is_a_value_error() -> None:
    assert issubclass(FitError, ValueError) and issubclass(CheckpointError, ValueError)


# --------------------------------------------------------------------------------------------- hardening


def test_nan_and_inf_inputs_follow_nan_to_num() -> None:
    m = fitted()
    cases = [
        ([math.nan, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]),
        ([math.inf, 1.0, 2.0, 3.0], [1e6, 1.0, 2.0, 3.0]),
        ([-math.inf, 1.0, 2.0, 3.0], [-1e6, 1.0, 2.0, 3.0]),
    ]
    for raw, clean in cases:
        assert m.predict_one(raw) == pytest.approx(m.predict_one(clean), abs=1e-15)
        assert m.predict_proba(np.array([raw]))[0] == pytest.approx(m.predict_one(clean), abs=1e-15)
        assert not math.isnan(m.predict_one(raw))
    assert sanitize_features([math.nan, math.inf, -math.inf, 2.0]).tolist() == [0.0, 1e6, -1e6, 2.0]


def test_nan_inputs_in_fit_equal_zeros() -> None:
    x, y, _ = synthetic(seed=14, n=300)
    dirty = x.copy()
    dirty[::7, 1] = math.nan
    clean = x.copy()
    clean[::7, 1] = 0.0
    a, b = model(), model()
    a.fit(dirty, y)
    b.fit(clean, y)
    assert a.weights == pytest.approx(b.weights, abs=1e-12)


def test_nan_labels_become_one_half_and_labels_are_clipped() -> None:
    x, y, _ = synthetic(seed=15, n=300)
    dirty = y.copy()
    dirty[:10] = math.nan
    dirty[10:20] = 1.7
    dirty[20:30] = -3.0
    dirty[30:35] = math.inf
    dirty[35:40] = -math.inf
    clean = y.copy()
    clean[:10] = 0.5
    clean[10:20] = 1.0
    clean[20:30] = 0.0
    clean[30:35] = 1.0
    clean[35:40] = 0.0
    assert sanitize_labels(dirty).tolist() == clean.tolist()
    a, b = model(), model()
    a.fit(x, dirty)
    b.fit(x, clean)
    assert a.weights is not None and np.all(np.isfinite(a.weights))
    assert a.weights == pytest.approx(b.weights, abs=1e-12)


def test_sigmoid_is_clipped_and_never_warns() -> None:
    # filterwarnings = error: an overflow RuntimeWarning would fail this test
    z = np.array([-1e308, -1e4, -LOGIT_CLIP, 0.0, LOGIT_CLIP, 1e4, 1e308, math.inf, -math.inf])
    p = sigmoid(z)
    assert np.all(p > 0.0) and np.all(p < 1.0)
    assert p[3] == 0.5
    assert p[0] == p[1] == p[2] == sigmoid_scalar(-1e308)
    assert sigmoid_scalar(math.nan) == 0.5
    assert 0.0 < sigmoid_scalar(-math.inf) < sigmoid_scalar(math.inf) < 1.0


def test_huge_logits_predict_inside_the_open_interval() -> None:
    m = model(weights=[1e6, -1e6, 0.0, 0.0], bias=0.0)
    for row in ([1e6, -1e6, 0, 0], [-1e6, 1e6, 0, 0], [math.inf, 0, 0, 0]):
        p = m.predict_one(row)
        assert 0.0 < p < 1.0
        batch = m.predict_proba(np.array([row], dtype=np.float64))
        assert 0.0 < batch[0] < 1.0


def test_finite_inputs_that_overflow_the_dot_product_predict_no_nan() -> None:
    # 10·1e308 = inf and 10·(-1e308) = -inf: their sum is NaN, which must read as "no opinion", not NaN
    m = model(("x", "y"), weights=[10.0, 10.0])
    assert m.predict_one([1e308, -1e308]) == 0.5
    batch = m.predict_proba(np.array([[1e308, -1e308], [1e308, 1e308], [-1e308, -1e308]]))
    assert not np.any(np.isnan(batch))
    assert batch[1] > 0.999 and batch[2] < 0.001


def test_non_numeric_row_raises_value_error() -> None:
    with pytest.raises(ValueError):
        fitted().predict_one(["x", 1.0, 2.0, 3.0])  # type: ignore[list-item]


# -------------------------------------------------------------------------------------------- prediction


def test_unfitted_model_predicts_one_half() -> None:
    m = model()
    assert not m.is_fitted
    assert m.predict_one([1.0, 2.0, 3.0, 4.0]) == 0.5
    assert m.predict_proba(np.ones((3, 4))).tolist() == [0.5, 0.5, 0.5]
    assert m.ranked_weights() == []
    with pytest.raises(ValueError, match="unfitted"):
        m.to_dict()


def test_predict_one_matches_the_batch() -> None:
    m = fitted()
    x, _, _ = synthetic(seed=16, n=200)
    batch = m.predict_proba(x)
    singles = [m.predict_one(row) for row in x.tolist()]
    assert singles == pytest.approx(batch.tolist(), rel=1e-12, abs=1e-15)
    assert m.predict_proba(x[0]) == m.predict_one(x[0].tolist())


def test_row_types_give_the_same_prediction() -> None:
    m = fitted()
    row = [0.3, -1.2, 2.5, 0.0]
    expected = m.predict_one(tuple(row))
    assert m.predict_one(row) == expected
    assert m.predict_one(np.array(row)) == expected
    assert m.predict_proba(np.array(row)) == expected
    assert isinstance(m.predict_one(np.array(row)), float)


def test_wrong_width_raises() -> None:
    m = fitted()
    with pytest.raises(ValueError, match="3 features"):
        m.predict_one([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="4 features"):
        m.predict_proba(np.ones((2, 5)))
    with pytest.raises(ValueError, match="3 features"):
        model().predict_one([1.0, 2.0, 3.0])  # width is checked even before fitting


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="unique"):
        model(("a", "a"))
    with pytest.raises(ValueError, match="weights"):
        model(weights=[1.0, 2.0])
    m = model(["a", "b", "c", "d"], weights=[1, 2, 3, 4])  # type: ignore[arg-type]
    assert m.feature_names == NAMES and m.weights is not None and m.weights.dtype == np.float64


def test_ranked_weights_orders_by_standardized_magnitude() -> None:
    m = model(
        weights=[1.0, -3.0, 0.5, 0.0],
        feature_scale=np.array([10.0, 1.0, 1.0, 1.0]),
        feature_mean=np.zeros(4),
    )
    ranked = m.ranked_weights()
    assert [r[0] for r in ranked] == ["a", "b", "c", "d"]  # a: 1·10 beats b: |−3·1|
    assert ranked[0] == ("a", 1.0, 10.0)
    assert ranked[1] == ("b", -3.0, -3.0)


def test_model_id_is_a_content_hash() -> None:
    a = model(weights=[1.0, 2.0, 3.0, 4.0], bias=0.5)
    assert a.model_id == model(weights=[1.0, 2.0, 3.0, 4.0], bias=0.5).model_id
    assert len(a.model_id) == 12
    others = [
        model(weights=[1.0, 2.0, 3.0, 4.5], bias=0.5),
        model(weights=[1.0, 2.0, 3.0, 4.0], bias=0.25),
        model(kind="other", weights=[1.0, 2.0, 3.0, 4.0], bias=0.5),
        model(("a", "b", "c", "e"), weights=[1.0, 2.0, 3.0, 4.0], bias=0.5),
    ]
    assert len({a.model_id, *(o.model_id for o in others)}) == 5


def test_refit_updates_the_single_row_path() -> None:
    m = model(("x",))
    m.fit([[0.0], [1.0]] * 20, [0, 1] * 20)
    first = m.predict_one([1.0])
    m.fit([[0.0], [1.0]] * 20, [1, 0] * 20)
    assert m.predict_one([1.0]) < 0.5 < first
    assert m.predict_one([1.0]) == m.predict_proba(np.array([[1.0]]))[0]


# ----------------------------------------------------------------------------------------- checkpoints


def test_schema_tag() -> None:
    assert schema_for("prm") == "ghost.prm.logreg.v1"
    assert model(kind="router").schema == "ghost.router.logreg.v1"


def test_save_load_round_trip(tmp_path: Path) -> None:
    m = fitted()
    m.metadata = {"trained_at": "2026-01-01T00:00:00+00:00", "samples": 2000}
    path = m.save(tmp_path / "nested" / "dir" / "model.json")
    loaded = LogisticModel.load(path, kind="test", feature_names=NAMES)
    x, _, _ = synthetic(seed=17, n=100)
    assert loaded.predict_proba(x).tolist() == m.predict_proba(x).tolist()
    assert [loaded.predict_one(r) for r in x.tolist()] == [m.predict_one(r) for r in x.tolist()]
    assert loaded.model_id == m.model_id
    assert loaded.metadata == m.metadata
    assert loaded.feature_mean is not None and loaded.feature_mean.tolist() == m.feature_mean.tolist()  # type: ignore[union-attr]
    assert loaded.ranked_weights() == m.ranked_weights()


def test_checkpoint_is_human_diffable_json(tmp_path: Path) -> None:
    m = fitted()
    text = m.save(tmp_path / "m.json").read_text()
    assert text.endswith("\n") and "\n  " in text  # indented, one trailing newline
    data = orjson.loads(text)
    assert data["schema"] == "ghost.test.logreg.v1"
    assert data["feature_names"] == list(NAMES)
    assert data["model_id"] == m.model_id
    assert len(data["weights"]) == 4 and isinstance(data["bias"], float)
    assert set(data["feature_stats"]) == {"mean", "scale"}


def test_model_without_stats_round_trips(tmp_path: Path) -> None:
    m = model(weights=[1.0, 0.0, -1.0, 2.0], bias=0.1)
    loaded = LogisticModel.load(m.save(tmp_path / "m.json"), kind="test", feature_names=NAMES)
    assert loaded.feature_mean is None and loaded.model_id == m.model_id


def _checkpoint(**changes: Any) -> dict[str, Any]:
    data = model(weights=[0.1, 0.2, 0.3, 0.4], bias=-0.5).to_dict()
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_checkpoint(schema="ghost.test.logreg.v0"), "schema 'ghost.test.logreg.v0' is not 'ghost.test.logreg.v1'"),
        (_checkpoint(schema="ghost.router.logreg.v1"), "schema"),
        ({k: v for k, v in _checkpoint().items() if k != "schema"}, "schema None"),
        (_checkpoint(feature_names=["a", "b", "c"], weights=[0.1, 0.2, 0.3]), "missing d"),
        (_checkpoint(feature_names=[*NAMES, "e"], weights=[0.1] * 5), "unexpected e"),
        (_checkpoint(feature_names=["b", "a", "c", "d"]), "different order"),
        (_checkpoint(feature_names="abcd"), "no feature_names list"),
        (_checkpoint(feature_names=["a", "b", "c", 4]), "no feature_names list"),
        (_checkpoint(weights={"a": 1}), "needs 4 weights"),
        (_checkpoint(weights="0.1,0.2,0.3,0.4"), "needs 4 weights"),
        (_checkpoint(weights=1.0), "needs 4 weights"),
        (_checkpoint(weights=[0.1, 0.2, 0.3]), "needs 4 weights"),
        (_checkpoint(weights=[0.1, 0.2, 0.3, 0.4, 0.5]), "needs 4 weights"),
        (_checkpoint(weights=[0.1, math.nan, 0.3, 0.4]), "not finite"),
        (_checkpoint(weights=[0.1, math.inf, 0.3, 0.4]), "not finite"),
        (_checkpoint(weights=[0.1, None, 0.3, 0.4]), "not finite"),
        (_checkpoint(weights=[0.1, "x", 0.3, 0.4]), "not numbers"),
        (_checkpoint(weights=[[0.1], [0.2], [0.3], [0.4]]), "flat list"),
        (_checkpoint(bias=math.nan), "not finite"),
        (_checkpoint(bias="high"), "not numbers"),
        (_checkpoint(bias=None), "not numbers"),
        ([1, 2, 3], "not a JSON object"),
        ("checkpoint", "not a JSON object"),
    ],
)
def test_from_dict_rejects_bad_checkpoints(data: Any, message: str) -> None:
    with pytest.raises(CheckpointError, match=message.replace("(", r"\(").replace(".", r"\.")):
        LogisticModel.from_dict(data, kind="test", feature_names=NAMES)


def test_drift_message_names_the_features(tmp_path: Path) -> None:
    path = model(("a", "b", "x", "y"), weights=[1, 2, 3, 4]).save(tmp_path / "m.json")
    with pytest.raises(CheckpointError) as err:
        LogisticModel.load(path, kind="test", feature_names=NAMES)
    text = str(err.value)
    assert str(path) in text and "missing c, d" in text and "unexpected x, y" in text and "retrain" in text


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        (b'{"schema": "ghost.test.logreg.v1", "weights": [NaN]}', "not valid JSON"),
        (b"[]", "not a JSON object"),
        (b"null", "not a JSON object"),
    ],
)
def test_load_rejects_unreadable_files(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    with pytest.raises(CheckpointError, match=message) as err:
        LogisticModel.load(path, kind="test", feature_names=NAMES)
    assert str(path) in str(err.value)


def test_load_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        LogisticModel.load(tmp_path / "absent.json", kind="test", feature_names=NAMES)
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        LogisticModel.load(tmp_path, kind="test", feature_names=NAMES)


def test_load_ignores_malformed_feature_stats() -> None:
    for stats in ({"mean": [1, 2]}, {"mean": [1, 2, 3, 4], "scale": [1]}, {"mean": "x", "scale": "y"}, [1, 2]):
        loaded = LogisticModel.from_dict(_checkpoint(feature_stats=stats), kind="test", feature_names=NAMES)
        assert loaded.feature_mean is None and loaded.feature_scale is None
        assert loaded.is_fitted


def test_describe_drift() -> None:
    assert describe_drift(NAMES, NAMES) == ""
    assert describe_drift(("a", "b"), ("b", "a")) == "same names in a different order"
    assert describe_drift(("a",), ("a", "b")) == "missing b"
    assert describe_drift(("a", "b"), ("a",)) == "unexpected b"
    many = tuple(f"n{i}" for i in range(8))
    assert describe_drift((), many) == "missing n0, n1, n2, n3, n4 …"


def test_failed_save_keeps_the_existing_checkpoint(tmp_path: Path) -> None:
    path = fitted().save(tmp_path / "m.json")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="unfitted"):
        model().save(path)
    unserializable = fitted(seed=1)
    unserializable.metadata = {"when": object()}
    with pytest.raises(TypeError):
        unserializable.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]  # no temp file left behind
    LogisticModel.load(path, kind="test", feature_names=NAMES)


def test_failed_rename_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "ckpt"
    target.mkdir()
    (target / "keep").write_text("x")  # a non-empty directory cannot be replaced by a file
    with pytest.raises(OSError):
        fitted().save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert (target / "keep").read_text() == "x"


def test_save_replaces_atomically_under_concurrent_reads(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    a, b = fitted(seed=1), fitted(seed=2)
    a.save(path)
    ids = {a.model_id, b.model_id}
    seen: set[str] = set()
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            try:
                seen.add(LogisticModel.load(path, kind="test", feature_names=NAMES).model_id)
            except BaseException as exc:  # a torn read would surface here
                errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(150):
            (b if i % 2 else a).save(path)
    finally:
        done.set()
        thread.join()
    assert errors == []
    assert seen <= ids and seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


# -------------------------------------------------------------------------------------------- metrics


def test_roc_auc_matches_pairwise_with_ties() -> None:
    rng = np.random.default_rng(18)
    for _ in range(25):
        n = int(rng.integers(2, 40))
        scores = rng.integers(0, 5, size=n).astype(float).tolist()  # few distinct values: many ties
        labels = rng.integers(0, 2, size=n).tolist()
        if 0 < sum(labels) < n:
            assert roc_auc(scores, labels) == pytest.approx(brute_auc(scores, labels), abs=1e-12)


def test_roc_auc_edge_cases() -> None:
    assert roc_auc([0.1, 0.2], [1, 1]) is None
    assert roc_auc([0.1, 0.2], [0, 0]) is None
    assert roc_auc([], []) is None
    assert roc_auc([0.1, 0.9], [0, 1]) == 1.0
    assert roc_auc([0.9, 0.1], [0, 1]) == 0.0
    assert roc_auc([0.5, 0.5, 0.5], [0, 1, 1]) == 0.5
    assert roc_auc([0.2, 0.9, 0.4], [False, True, True]) == 1.0


def test_binary_metrics_against_direct_formulas() -> None:
    p = np.array([0.9, 0.2, 0.6, 0.4, 0.7])
    y = np.array([1.0, 0.0, 0.3, 1.0, 0.0])
    w = np.array([1.0, 2.0, 1.0, 0.5, 1.0])
    m = binary_metrics(p, y, w)
    ll = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert m["log_loss"] == pytest.approx(float(w @ ll / w.sum()))
    assert m["brier"] == pytest.approx(float(w @ (p - y) ** 2 / w.sum()))
    yb = y >= 0.5
    assert m["accuracy"] == pytest.approx(float(w @ ((p >= 0.5) == yb) / w.sum()))
    assert m["auc"] == pytest.approx(brute_auc(p.tolist(), yb.astype(int).tolist()), abs=1e-6)


def test_binary_metrics_edge_cases() -> None:
    perfect = binary_metrics([0.0, 1.0, 1.0], [0, 1, 1])
    assert perfect["accuracy"] == 1.0 and perfect["auc"] == 1.0
    assert perfect["log_loss"] < 1e-12 and perfect["brier"] < 1e-24  # p clipped away from 0/1: finite
    one_class = binary_metrics([0.3, 0.8], [1, 1])
    assert one_class["auc"] is None and one_class["accuracy"] == 0.5
    nan_labels = binary_metrics([0.5, 0.5], [math.nan, 1.0])
    assert math.isfinite(nan_labels["log_loss"])
    assert orjson.loads(orjson.dumps(perfect)) == perfect
