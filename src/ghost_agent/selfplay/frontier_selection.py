"""Where to practise: the frontier weighting of seed 001 ("Frontier-aware self-play"), as pure functions.

    weight(cluster) = PRM_uncertainty(cluster) x rarity(cluster),   saturated clusters -> 0
    uncertainty     = mean over representative (state, action) pairs of 1 - 2|p - 0.5|
    rarity          = 1 / (1 + log1p(count of the cluster's trajectories))

A cluster the PRM is unsure about and the store has seen little of is where practice teaches the most; a
cluster it solves every time (saturated) gets nothing here (the tracker raises its difficulty instead). No
pairs for a cluster means no opinion, which for a logistic model is the same posture as p = 0.5: uncertainty 1.

`learnability_weights` is the alternative the issue asks to measure the seed's picker against: p(1 - p) of the
validator's own pass rate (a Beta(1, 1) posterior mean per cluster), highest where tasks are passed half the
time. Everything here is deterministic for a seeded `random.Random`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol


class UncertaintyScorer(Protocol):
    """What the weighting needs of the PRM: `PRMScorer.uncertainty`."""

    def uncertainty(self, state: Any, action: Any) -> float:
        """1 - 2|p - 0.5| for one pair."""
        ...


def uncertainty_of(p: float) -> float:
    """1 - 2|p - 0.5|, clamped to [0, 1]; a non-finite p is no opinion (1.0)."""
    if not isinstance(p, (int, float)) or not math.isfinite(p):
        return 1.0
    return min(1.0, max(0.0, 1.0 - 2.0 * abs(float(p) - 0.5)))


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 1.0


def rarity(count: int) -> float:
    """1 / (1 + log1p(count)): 1.0 for a cluster never seen, falling slowly as trajectories pile up."""
    return 1.0 / (1.0 + math.log1p(max(0, int(count))))


def compute_cluster_uncertainty(
    scorer: UncertaintyScorer, pairs_by_cluster: Mapping[str, Sequence[tuple[Any, Any]]], clusters: Iterable[str]
) -> dict[str, float]:
    """Mean PRM uncertainty over each cluster's representative pairs (1.0 where there are none, or where the
    scorer fails or returns a non-finite number: exploring beats dropping the cluster)."""
    out: dict[str, float] = {}
    for cluster in clusters:
        values = []
        for state, action in pairs_by_cluster.get(cluster, ()):
            try:
                u = float(scorer.uncertainty(state, action))
            except Exception:
                u = 1.0
            values.append(u if math.isfinite(u) else 1.0)
        out[cluster] = min(1.0, max(0.0, math.fsum(values) / len(values))) if values else 1.0
    return out


def cluster_weights(
    clusters: Iterable[str],
    uncertainty: Mapping[str, float],
    counts: Mapping[str, int],
    saturated: Iterable[str] = (),
) -> dict[str, float]:
    """weight = uncertainty x rarity per cluster; 0 for a saturated one (uncertainty defaults to 1.0, the
    count to 0)."""
    done = set(saturated)
    return {
        c: 0.0 if c in done else _unit(uncertainty.get(c, 1.0)) * rarity(counts.get(c, 0)) for c in clusters
    }


def learnability_weights(
    outcomes: Mapping[str, tuple[int, int]], clusters: Iterable[str], saturated: Iterable[str] = ()
) -> dict[str, float]:
    """p(1 - p) per cluster, p the Beta(1, 1) posterior mean of (passes, attempts); 0 for a saturated one."""
    done = set(saturated)
    out = {}
    for c in clusters:
        passes, attempts = outcomes.get(c, (0, 0))
        p = (passes + 1) / (attempts + 2)
        out[c] = 0.0 if c in done else p * (1.0 - p)
    return out


def pick_weighted(weights: Mapping[str, float], rng: random.Random) -> str | None:
    """A key drawn with probability proportional to its weight (sorted keys, so a seeded rng repeats); None
    when every weight is zero."""
    keys = sorted(k for k, w in weights.items() if w > 0 and math.isfinite(w))
    if not keys:
        return None
    total = math.fsum(weights[k] for k in keys)
    x = rng.random() * total
    acc = 0.0
    for key in keys:
        acc += weights[key]
        if x < acc:
            return key
    return keys[-1]


__all__ = [
    "UncertaintyScorer", "cluster_weights", "compute_cluster_uncertainty", "learnability_weights",
    "pick_weighted", "rarity", "uncertainty_of",
]
