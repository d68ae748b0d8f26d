"""The one logistic-regression core the router and the PRM share (DESIGN §6).

`LogisticModel` fits a weighted, L2-regularized logistic regression with soft labels by Newton's method
(every iteration is a handful of matrix products over all samples, no per-sample Python loop), predicts one
row in about a microsecond (pure-Python dot product, no array allocation) or a batch with numpy, and
persists as a human-diffable JSON checkpoint tagged `ghost.<kind>.logreg.v1`.

Numerical hardening (seed 000's invariants table):
- inputs: `nan_to_num(nan=0, posinf=1e6, neginf=-1e6)` before fit and predict;
- labels: `nan_to_num(nan=0.5, posinf=1, neginf=0)`, then clipped to [0, 1];
- the logit is clipped to ±`LOGIT_CLIP` so the sigmoid never returns exactly 0 or 1 and never overflows.

Features are standardized inside `fit` (mean/scale kept in the checkpoint for inspection) and the weights
are folded back into raw-feature space, so prediction is one dot product.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ghost_agent.atomic import atomic_write_bytes
from ghost_agent.jsonsafe import JSON

SCHEMA_FORMAT = "ghost.{kind}.logreg.v1"
LOGIT_CLIP = 35.0  # sigmoid(35) = 1 - 6e-16: far enough to express certainty, never exactly 0 or 1
POSINF_VALUE = 1e6
NEGINF_VALUE = -1e6
FEATURE_CLIP = 1e12


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: unreadable, not JSON, wrong schema, or a different feature layout."""


class FitError(ValueError):
    """Data that cannot be fitted at all (no rows, wrong width, no positive sample weight)."""


def schema_for(kind: str) -> str:
    """The checkpoint schema tag for a model kind, e.g. `ghost.prm.logreg.v1`."""
    return SCHEMA_FORMAT.format(kind=kind)


def sanitize_features(x: Any) -> np.ndarray:
    """Features as a float64 array with NaN → 0, ±inf → ±1e6 and finite values clipped to ±1e12.

    The clip keeps squares and sums over many rows finite (no overflow in the solver's statistics); real
    features are orders of magnitude smaller.
    """
    arr = np.asarray(x, dtype=np.float64)
    arr = np.nan_to_num(arr, nan=0.0, posinf=POSINF_VALUE, neginf=NEGINF_VALUE)
    return np.clip(arr, -FEATURE_CLIP, FEATURE_CLIP)


def sanitize_labels(y: Any) -> np.ndarray:
    """Labels as float64 in [0, 1]: NaN → 0.5 (no opinion), +inf → 1, -inf → 0, then clipped."""
    arr = np.nan_to_num(np.asarray(y, dtype=np.float64), nan=0.5, posinf=1.0, neginf=0.0)
    return np.clip(arr, 0.0, 1.0)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function with the logit clipped to ±LOGIT_CLIP."""
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -LOGIT_CLIP, LOGIT_CLIP)))
    return out


def sigmoid_scalar(z: float) -> float:
    """`sigmoid` for one Python float (NaN → 0.5)."""
    if z != z:  # NaN
        return 0.5
    z = -LOGIT_CLIP if z < -LOGIT_CLIP else LOGIT_CLIP if z > LOGIT_CLIP else z
    return 1.0 / (1.0 + math.exp(-z))


@dataclass(frozen=True)
class FitStats:
    """What one `fit` did: solver iterations, convergence, the final weighted loss, wall time."""

    n_samples: int
    n_features: int
    iterations: int
    converged: bool
    loss: float
    l2: float
    seconds: float
    weight_sum: float

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "iterations": self.iterations,
            "converged": self.converged,
            "loss": self.loss,
            "l2": self.l2,
            "seconds": round(self.seconds, 6),
            "weight_sum": self.weight_sum,
        }


@dataclass
class LogisticModel:
    """A binary logistic regression over named features, with a schema-versioned JSON checkpoint.

    An unfitted model (`weights is None`) predicts 0.5 for everything. `metadata` is free-form training
    information (counts, metrics, timestamps) saved with the checkpoint.
    """

    kind: str
    feature_names: tuple[str, ...]
    weights: np.ndarray | None = None
    bias: float = 0.0
    feature_mean: np.ndarray | None = None
    feature_scale: np.ndarray | None = None
    metadata: JSON = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.feature_names = tuple(self.feature_names)
        if len(set(self.feature_names)) != len(self.feature_names):
            raise ValueError("feature names must be unique")
        if self.weights is not None:
            self.weights = np.asarray(self.weights, dtype=np.float64)
            if self.weights.shape != (len(self.feature_names),):
                raise ValueError(f"{self.weights.shape[0]} weights for {len(self.feature_names)} features")
        self._refresh()

    def _refresh(self) -> None:
        # Python floats for the single-row path: a list dot product beats allocating an ndarray per call.
        self._w_list: list[float] = [] if self.weights is None else [float(v) for v in self.weights]
        self._bias_f = float(self.bias)

    @property
    def schema(self) -> str:
        """This model's checkpoint schema tag."""
        return schema_for(self.kind)

    @property
    def n_features(self) -> int:
        """How many features a row must have."""
        return len(self.feature_names)

    @property
    def is_fitted(self) -> bool:
        """True once weights exist (fitted or loaded)."""
        return self.weights is not None

    @property
    def model_id(self) -> str:
        """A short content hash of schema, feature names, weights and bias: equal models share an id."""
        h = hashlib.sha256(self.schema.encode())
        h.update("\x00".join(self.feature_names).encode())
        h.update(orjson.dumps(self._w_list))
        h.update(repr(self._bias_f).encode())
        return h.hexdigest()[:12]

    # ----------------------------------------------------------------------------------------- fitting

    def fit(
        self,
        x: Any,
        y: Any,
        sample_weight: Any = None,
        *,
        l2: float = 1e-2,
        max_iter: int = 50,
        tol: float = 1e-8,
    ) -> FitStats:
        """Fit on rows `x` (n × d) and soft labels `y` in [0, 1], optionally weighted per sample.

        Minimizes mean weighted cross-entropy + `l2`/2·‖w‖² (bias unpenalized) on standardized features by
        damped Newton steps. Raises FitError for empty or misshaped data or when no sample has positive
        weight; NaN/inf inputs and labels are sanitized, never raised on.
        """
        started = time.perf_counter()
        xs = sanitize_features(x)
        if xs.ndim != 2 or xs.shape[0] == 0:
            raise FitError(f"need a non-empty 2-D feature matrix, got shape {xs.shape}")
        n, d = xs.shape
        if d != self.n_features:
            raise FitError(f"rows have {d} features, the model has {self.n_features}")
        ys = sanitize_labels(y).reshape(-1)
        if ys.shape[0] != n:
            raise FitError(f"{ys.shape[0]} labels for {n} rows")
        if sample_weight is None:
            sw = np.ones(n)
        else:
            sw = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if sw.shape[0] != n:
                raise FitError(f"{sw.shape[0]} sample weights for {n} rows")
            if np.isinf(sw).any():
                raise FitError("sample weights must be finite")
            sw = np.clip(np.nan_to_num(sw, nan=0.0), 0, None)  # NaN or negative weight: the sample counts for nothing
        total = float(sw.sum())
        if not math.isfinite(total) or total <= 0:
            raise FitError("no sample has a positive weight")
        if not math.isfinite(l2) or l2 < 0:
            raise FitError(f"l2 must be a finite non-negative number, got {l2}")
        sw = sw / total

        mean = sw @ xs
        scale = np.sqrt(sw @ (xs - mean) ** 2)
        scale = np.where(scale > 1e-12, scale, 1.0)  # a constant column carries no signal; leave it alone
        z = np.hstack([(xs - mean) / scale, np.ones((n, 1))])  # the last column is the bias

        theta = np.zeros(d + 1)
        penalty = np.full(d + 1, l2)
        penalty[-1] = 0.0
        loss = _loss(z, ys, sw, theta, penalty)
        converged = False
        iterations = 0
        for iterations in range(1, max_iter + 1):  # noqa: B007 - reported below
            p = sigmoid(z @ theta)
            grad = z.T @ (sw * (p - ys)) + penalty * theta
            hess = (z * (sw * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-10)
            try:
                step = np.linalg.solve(hess, grad)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(hess, grad, rcond=None)[0]
            t = 1.0
            while True:  # backtracking keeps Newton monotone on (near-)separable data
                candidate = theta - t * step
                new_loss = _loss(z, ys, sw, candidate, penalty)
                if new_loss <= loss + 1e-12 or t < 1e-6:
                    break
                t *= 0.5
            theta, previous, loss = candidate, loss, new_loss
            if abs(previous - loss) <= tol * max(1.0, abs(loss)) and float(np.max(np.abs(grad))) < 1e-6:
                converged = True
                break
            if float(np.max(np.abs(t * step))) < 1e-10:
                converged = True
                break

        w_std = theta[:d]
        self.weights = w_std / scale
        self.bias = float(theta[d] - np.sum(w_std * mean / scale))
        self.feature_mean = mean
        self.feature_scale = scale
        self._refresh()
        return FitStats(
            n_samples=n,
            n_features=d,
            iterations=iterations,
            converged=converged,
            loss=float(loss),
            l2=float(l2),
            seconds=time.perf_counter() - started,
            weight_sum=total,
        )

    # -------------------------------------------------------------------------------------- prediction

    def predict_one(self, row: Sequence[float]) -> float:
        """P(label = 1) for one row of `n_features` numbers; 0.5 when unfitted. Raises ValueError on width."""
        if len(row) != self.n_features:
            raise ValueError(f"row has {len(row)} features, the model has {self.n_features}")
        if not self._w_list:
            return 0.5
        z = self._bias_f
        try:
            for w, v in zip(self._w_list, row, strict=False):  # width checked above
                z += w * v
        except TypeError:
            z = float("nan")
        if z - z != 0.0:  # NaN or inf: some input was non-finite (or not a number); sanitize and redo
            return float(self.predict_proba(np.asarray([row], dtype=np.float64))[0])
        return sigmoid_scalar(z)

    def predict_proba(self, x: Any) -> Any:
        """P(label = 1): a float for one row (1-D input), an array for a batch (2-D input)."""
        xs = sanitize_features(x)
        if xs.ndim == 1:
            return self.predict_one(xs.tolist())
        if xs.ndim != 2 or xs.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {xs.shape}")
        if self.weights is None:
            return np.full(xs.shape[0], 0.5)
        # Huge finite inputs can overflow the dot product (inf, or inf - inf = NaN): no warning, and a NaN
        # logit means "no opinion", 0.5, exactly as `sigmoid_scalar` treats it on the single-row path.
        with np.errstate(over="ignore", invalid="ignore"):
            z = xs @ self.weights + self.bias
        return sigmoid(np.where(np.isnan(z), 0.0, z))

    # ------------------------------------------------------------------------------------- persistence

    def to_dict(self) -> JSON:
        """The checkpoint as a JSON-ready dict (raises ValueError for an unfitted model)."""
        if self.weights is None:
            raise ValueError("cannot checkpoint an unfitted model")
        stats = None
        if self.feature_mean is not None and self.feature_scale is not None:
            stats = {"mean": self.feature_mean.tolist(), "scale": self.feature_scale.tolist()}
        return {
            "schema": self.schema,
            "kind": self.kind,
            "model_id": self.model_id,
            "feature_names": list(self.feature_names),
            "weights": self._w_list,
            "bias": self._bias_f,
            "feature_stats": stats,
            "training": self.metadata,
        }

    def to_json(self) -> bytes:
        """The checkpoint bytes (indented, sorted keys: diff-friendly)."""
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)

    def save(self, path: Path) -> Path:
        """Write the checkpoint atomically (temp file, fsync, rename). Returns the path."""
        atomic_write_bytes(Path(path), self.to_json() + b"\n")
        return Path(path)

    @classmethod
    def from_dict(cls, data: Any, *, kind: str, feature_names: Sequence[str]) -> LogisticModel:
        """Validate a parsed checkpoint against the expected kind and feature layout (CheckpointError)."""
        if not isinstance(data, dict):
            raise CheckpointError("checkpoint is not a JSON object")
        expected = schema_for(kind)
        schema = data.get("schema")
        if schema != expected:
            raise CheckpointError(f"checkpoint schema {schema!r} is not {expected!r}; retrain to get a current one")
        names = data.get("feature_names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise CheckpointError("checkpoint has no feature_names list")
        drift = describe_drift(tuple(names), tuple(feature_names))
        if drift:
            raise CheckpointError(f"checkpoint feature layout differs from this version ({drift}); retrain it")
        weights = data.get("weights")
        bias = data.get("bias")
        if not isinstance(weights, list) or len(weights) != len(names):
            raise CheckpointError(f"checkpoint needs {len(names)} weights")
        try:
            w = np.asarray(weights, dtype=np.float64)
            b = float(bias)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"checkpoint weights are not numbers: {exc}") from None
        if w.ndim != 1:
            raise CheckpointError("checkpoint weights are not a flat list of numbers")
        if not np.all(np.isfinite(w)) or not math.isfinite(b):
            raise CheckpointError("checkpoint weights or bias are not finite")
        mean = scale = None
        stats = data.get("feature_stats")
        if isinstance(stats, dict):
            try:
                mean = np.asarray(stats["mean"], dtype=np.float64)
                scale = np.asarray(stats["scale"], dtype=np.float64)
            except (KeyError, TypeError, ValueError):
                mean = scale = None
            if mean is not None and (mean.shape != w.shape or scale is None or scale.shape != w.shape):
                mean = scale = None
        training = data.get("training")
        return cls(
            kind=kind,
            feature_names=tuple(names),
            weights=w,
            bias=b,
            feature_mean=mean,
            feature_scale=scale,
            metadata=training if isinstance(training, dict) else {},
        )

    @classmethod
    def load(cls, path: Path, *, kind: str, feature_names: Sequence[str]) -> LogisticModel:
        """Read and validate a checkpoint; CheckpointError with the path and the reason on any problem."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise CheckpointError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise CheckpointError(f"checkpoint {path} is not valid JSON: {exc}") from None
        try:
            return cls.from_dict(data, kind=kind, feature_names=feature_names)
        except CheckpointError as exc:
            raise CheckpointError(f"{path}: {exc}") from None

    def ranked_weights(self) -> list[tuple[str, float, float]]:
        """`(name, raw weight, standardized weight)` sorted by |standardized weight|, strongest first.

        The standardized weight (raw × feature std) is comparable across features with different scales.
        """
        if self.weights is None:
            return []
        scale = self.feature_scale if self.feature_scale is not None else np.ones_like(self.weights)
        rows = [(n, float(w), float(w * s)) for n, w, s in zip(self.feature_names, self.weights, scale, strict=True)]
        return sorted(rows, key=lambda r: -abs(r[2]))


def describe_drift(saved: tuple[str, ...], current: tuple[str, ...]) -> str:
    """'' when the layouts match, else a short description (missing / unexpected / reordered names)."""
    if saved == current:
        return ""
    missing = [n for n in current if n not in saved]
    extra = [n for n in saved if n not in current]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
    if extra:
        parts.append(f"unexpected {', '.join(extra[:5])}{' …' if len(extra) > 5 else ''}")
    if not parts:
        parts.append("same names in a different order")
    return "; ".join(parts)


def _loss(z: np.ndarray, y: np.ndarray, sw: np.ndarray, theta: np.ndarray, penalty: np.ndarray) -> float:
    logits = np.clip(z @ theta, -LOGIT_CLIP, LOGIT_CLIP)
    # log(1 + e^x) - y·x is the cross-entropy for soft labels, written stably with logaddexp
    ce = np.logaddexp(0.0, logits) - y * logits
    return float(sw @ ce + 0.5 * np.sum(penalty * theta * theta))


def roc_auc(scores: Any, labels: Any) -> float | None:
    """Area under the ROC curve for binary `labels` (ties averaged); None when only one class is present."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size, dtype=np.float64)
    sorted_s = s[order]
    # average ranks over ties
    boundaries = np.flatnonzero(np.diff(sorted_s)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [s.size]])
    avg = (starts + ends - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def binary_metrics(p: Any, y_soft: Any, sample_weight: Any = None, threshold: float = 0.5) -> JSON:
    """Weighted log loss and Brier score against soft labels, plus accuracy and AUC against binarized ones."""
    pp = np.clip(np.asarray(p, dtype=np.float64), 1e-15, 1 - 1e-15)
    y = sanitize_labels(y_soft)
    w = np.ones_like(pp) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = float(w.sum()) or 1.0
    yb = y >= threshold
    auc = roc_auc(pp, yb)
    return {
        "log_loss": float(w @ -(y * np.log(pp) + (1 - y) * np.log(1 - pp)) / total),
        "brier": float(w @ (pp - y) ** 2 / total),
        "accuracy": float(w @ ((pp >= threshold) == yb) / total),
        "auc": None if auc is None else round(auc, 6),
    }


__all__ = [
    "CheckpointError",
    "FitError",
    "FitStats",
    "LogisticModel",
    "binary_metrics",
    "describe_drift",
    "roc_auc",
    "sanitize_features",
    "sanitize_labels",
    "schema_for",
    "sigmoid",
]
