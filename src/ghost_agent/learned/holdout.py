"""The swap gate: a retrained model replaces the live one only if it is no worse on the newest data.

Time-ordered split (`time_split`): whole trajectories, newest first, go to the held-out slice until it holds
`fraction` of the samples (at least `min_samples`), never more than half of them — so the slice is the data
the live model is least likely to have seen and the data the new model will be asked about next, and no
trajectory's steps straddle the split. A candidate is fitted on the older part only and scored on the slice;
the live model (or, with none, the neutral p = 0.5 "no model") is scored on the same slice.

The primary figure is the **weighted log loss** (lower is better; the sample weights are the seed 004 reward-
source weights, so a human-corrected sample counts most here too). Log loss is a proper scoring rule: it
works with the PRM's soft labels, stays defined when the slice holds one class only (AUC does not), and
punishes a confidently wrong model, the one failure a fail-safe scorer must not have (accuracy barely sees
it). Brier, accuracy and AUC are reported beside it. "No worse" means candidate ≤ live + `tolerance`.

`GateVerdict` carries both sides' figures; the trainer logs it and keeps it in the checkpoint metadata.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.linear import LogisticModel, binary_metrics

PRIMARY = "log_loss"  # lower is better
DEFAULT_FRACTION = 0.2
DEFAULT_MIN_SAMPLES = 10
NEUTRAL_ID = "neutral"  # what the verdict calls "no live model" (every prediction 0.5)


@dataclass(frozen=True)
class HoldoutGate:
    """How a retrain is judged: the live `baseline` (None = the neutral 0.5), the held-out slice's size, and
    how much worse than the baseline the candidate may be (`tolerance`, in log loss; 0 = no worse)."""

    baseline: LogisticModel | None = None
    fraction: float = DEFAULT_FRACTION
    min_samples: int = DEFAULT_MIN_SAMPLES
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.fraction, (int, float)) and 0.0 < self.fraction <= 0.5):
            raise ValueError(f"holdout fraction must be in (0, 0.5], got {self.fraction!r}")
        if isinstance(self.min_samples, bool) or not isinstance(self.min_samples, int) or self.min_samples < 1:
            raise ValueError(f"holdout min_samples must be an int >= 1, got {self.min_samples!r}")
        if not (math.isfinite(self.tolerance) and self.tolerance >= 0):
            raise ValueError(f"gate tolerance must be a finite number >= 0, got {self.tolerance!r}")

    @property
    def baseline_id(self) -> str:
        """The live model's id, or `neutral`."""
        return NEUTRAL_ID if self.baseline is None else self.baseline.model_id


@dataclass(frozen=True)
class Split:
    """Boolean masks over the samples (older part to fit on, newest slice to judge on) and their sizes."""

    train: np.ndarray
    holdout: np.ndarray
    train_trajectories: int
    holdout_trajectories: int
    cutoff: float  # epoch seconds of the oldest held-out trajectory

    @property
    def holdout_samples(self) -> int:
        return int(self.holdout.sum())

    @property
    def train_samples(self) -> int:
        return int(self.train.sum())


def time_split(
    groups: Sequence[int], group_times: Sequence[float], fraction: float, min_samples: int
) -> Split | None:
    """Split samples by their trajectory (`groups[i]` indexes `group_times`, epoch seconds; equal times are
    ordered by index, later = newer). None when no slice of at least `min_samples` fits in half the samples."""
    n = len(groups)
    if n < 2:
        return None
    g = np.asarray(groups, dtype=np.int64)
    counts = np.bincount(g, minlength=len(group_times))
    used = np.flatnonzero(counts)
    times = np.asarray(group_times, dtype=np.float64)[used]
    newest_first = used[np.lexsort((-used, -times))]  # by time, then read order, descending
    target = max(math.ceil(fraction * n), min_samples)
    limit = n // 2
    taken = 0
    chosen: list[int] = []
    for trajectory in newest_first.tolist():
        size = int(counts[trajectory])
        if taken + size > limit:
            break
        chosen.append(trajectory)
        taken += size
        if taken >= target:
            break
    if taken < min_samples or not chosen:
        return None
    holdout = np.isin(g, np.asarray(chosen, dtype=np.int64))
    return Split(
        train=~holdout,
        holdout=holdout,
        train_trajectories=len(used) - len(chosen),
        holdout_trajectories=len(chosen),
        cutoff=float(np.asarray(group_times, dtype=np.float64)[chosen[-1]]),
    )


def figures(p: Any, y: np.ndarray, w: np.ndarray, threshold: float) -> JSON:
    """The gate's figures for predictions `p`: log loss (primary), Brier, accuracy, AUC, all weighted."""
    return {k: (None if v is None else round(float(v), 6)) for k, v in binary_metrics(p, y, w, threshold).items()}


def calibration(p: Any, y: np.ndarray, w: np.ndarray, bins: int = 10) -> list[JSON]:
    """Predicted against realised on the held-out rows, in equal-width bins of the prediction: for each bin with
    rows, its range, the (weighted) row count, the mean prediction and the observed positive rate."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    index = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        mask = index == b
        weight = float(w[mask].sum())
        if not mask.any() or weight <= 0:
            continue
        out.append({"lo": b / bins, "hi": (b + 1) / bins, "n": int(mask.sum()),
                    "predicted": round(float((p[mask] * w[mask]).sum() / weight), 4),
                    "observed": round(float((y[mask] * w[mask]).sum() / weight), 4)})
    return out


def judge(candidate: JSON, baseline: JSON, tolerance: float = 0.0) -> tuple[bool, str]:
    """(accepted, reason): the candidate's primary figure against the baseline's."""
    ours, theirs = float(candidate[PRIMARY]), float(baseline[PRIMARY])
    if ours <= theirs + tolerance + 1e-12:
        return True, f"held-out {PRIMARY} {ours:.4f} <= live {theirs:.4f}"
    return False, f"held-out {PRIMARY} {ours:.4f} > live {theirs:.4f}: worse than the live model"


@dataclass
class GateVerdict:
    """The gate's decision with both sides' held-out figures (`judged` False: no slice could be held out)."""

    accepted: bool
    reason: str
    judged: bool
    baseline_id: str
    candidate_id: str | None = None
    candidate: JSON = field(default_factory=dict)
    baseline: JSON = field(default_factory=dict)
    holdout_samples: int = 0
    holdout_trajectories: int = 0
    train_samples: int = 0
    cutoff: str | None = None
    tolerance: float = 0.0
    calibration: list[JSON] = field(default_factory=list)  # the candidate's, on the held-out slice

    def to_dict(self) -> JSON:
        """A JSON-ready dict (the `gate` of the report, the log event and the checkpoint metadata)."""
        return {
            "accepted": self.accepted,
            "judged": self.judged,
            "reason": self.reason,
            "primary": PRIMARY,
            "candidate_id": self.candidate_id,
            "candidate": self.candidate,
            "live_id": self.baseline_id,
            "live": self.baseline,
            "holdout_samples": self.holdout_samples,
            "holdout_trajectories": self.holdout_trajectories,
            "train_samples": self.train_samples,
            "cutoff": self.cutoff,
            "tolerance": self.tolerance,
            "calibration": self.calibration,
        }


def evaluate(
    gate: HoldoutGate, candidate: LogisticModel, split: Split, x: np.ndarray, y: np.ndarray, w: np.ndarray,
    threshold: float,
) -> GateVerdict:
    """Score the candidate (fitted on `split.train`) and the baseline on the held-out rows; decide."""
    xh, yh, wh = x[split.holdout], y[split.holdout], w[split.holdout]
    ours = figures(candidate.predict_proba(xh), yh, wh, threshold)
    base_p = np.full(len(yh), 0.5) if gate.baseline is None else gate.baseline.predict_proba(xh)
    theirs = figures(base_p, yh, wh, threshold)
    accepted, reason = judge(ours, theirs, gate.tolerance)
    return GateVerdict(
        accepted=accepted,
        reason=reason,
        judged=True,
        baseline_id=gate.baseline_id,
        candidate_id=candidate.model_id,
        candidate=ours,
        baseline=theirs,
        holdout_samples=split.holdout_samples,
        holdout_trajectories=split.holdout_trajectories,
        train_samples=split.train_samples,
        cutoff=iso(split.cutoff),
        tolerance=gate.tolerance,
        calibration=calibration(candidate.predict_proba(xh), yh, wh),
    )


def unjudged(gate: HoldoutGate, samples: int) -> GateVerdict:
    """No slice could be held out: with a live model keep it (nothing shows the candidate is no worse); with
    none, accept on the data floors alone (there is nothing live to be worse than)."""
    short = f"too little data to hold out a slice of {gate.min_samples} samples (have {samples})"
    if gate.baseline is None:
        return GateVerdict(True, f"{short}; no live model, accepted on the data floors", False, NEUTRAL_ID)
    return GateVerdict(False, f"{short}; keeping the live model", False, gate.baseline_id)


def iso(epoch: float) -> str | None:
    """Epoch seconds as UTC ISO-8601 (None for a time that is not one)."""
    if not math.isfinite(epoch) or epoch <= 0:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


__all__ = [
    "DEFAULT_FRACTION",
    "DEFAULT_MIN_SAMPLES",
    "NEUTRAL_ID",
    "PRIMARY",
    "GateVerdict",
    "HoldoutGate",
    "Split",
    "evaluate",
    "figures",
    "iso",
    "judge",
    "time_split",
    "unjudged",
]
