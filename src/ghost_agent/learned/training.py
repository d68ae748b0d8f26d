"""What the two trainers (PRM, router) share: label provenance weights, data floors, the report.

The training run itself (read, floors and bail, fit, save) is `learned/trainer.LinearTrainer`.

Sample weights by who decided the outcome (seed 004, DESIGN §6): a human correction is worth 1.0, the agent's
own checks (verifier, self-play validator, eval) 0.6, a mechanical heuristic 0.3, an LLM teacher's opinion
(e.g. a self-consistency vote) 0.1.

Router samples are further scaled by the routing decision's confidence (seed 004, Phase 2a,
`confidence_multiplier`): `0.5 + 0.5 * confidence`, 1.0 when the record carries none.

Floors (seed 000): a trainer refuses to fit on too few trajectories, too few samples or a lopsided class
balance, and says why in a sentence; it writes no checkpoint then, because a confidently wrong model
poisons every decision until the next retrain overwrites it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ghost_agent.jsonsafe import JSON
from ghost_agent.trajectories.record import Outcome, Source, Trajectory


class RewardSource(str, enum.Enum):
    """Who decided a trajectory's outcome."""

    HUMAN = "human"
    SELF = "self"
    HEURISTIC = "heuristic"
    TEACHER = "teacher"


DEFAULT_SOURCE_WEIGHTS: Mapping[RewardSource, float] = {
    RewardSource.HUMAN: 1.0,
    RewardSource.SELF: 0.6,
    RewardSource.HEURISTIC: 0.3,
    RewardSource.TEACHER: 0.1,
}

# corrections-sidecar `source` → reward source
_CORRECTION_SOURCES = {
    "user_correction": RewardSource.HUMAN,
    "verifier": RewardSource.SELF,
    "self_play": RewardSource.SELF,
    "eval": RewardSource.SELF,
    "heuristic": RewardSource.HEURISTIC,
    "teacher": RewardSource.TEACHER,
}


def outcome_source(traj: Trajectory) -> RewardSource:
    """Who decided this trajectory's (overlaid) outcome.

    Order: an explicit `extra["outcome_source"]`; the correction overlay's source; a heuristic promotion;
    a self-consistency vote (an LLM's opinion → teacher); a verdict from a validator (self-play, eval) or
    the verifier → self; otherwise a human-facing chat outcome nobody checked → heuristic.
    """
    extra = traj.extra if isinstance(traj.extra, dict) else {}
    explicit = extra.get("outcome_source")
    if isinstance(explicit, str):
        try:
            return RewardSource(explicit)
        except ValueError:
            pass
    correction = extra.get("correction")
    if isinstance(correction, dict):
        mapped = _CORRECTION_SOURCES.get(str(correction.get("source")))
        if mapped is not None:
            return mapped
    heuristics = extra.get("heuristics")
    if isinstance(heuristics, dict) and heuristics.get("promoted"):
        return RewardSource.HEURISTIC
    vote = extra.get("self_consistency")
    if isinstance(vote, dict) and vote.get("labelled"):  # only a decisive vote set the outcome
        return RewardSource.TEACHER
    if traj.source in (Source.SELF_PLAY.value, Source.EVAL.value):
        return RewardSource.SELF
    if isinstance(traj.verifier, dict) and traj.verifier.get("verdict") in ("CONFIRMED", "REFUTED"):
        return RewardSource.SELF  # an UNSURE (or failed) verifier decided nothing
    return RewardSource.HEURISTIC


def source_weight(traj: Trajectory, weights: Mapping[RewardSource, float] | None = None) -> float:
    """The sample weight of every sample drawn from `traj`."""
    table = DEFAULT_SOURCE_WEIGHTS if weights is None else weights
    return float(table.get(outcome_source(traj), DEFAULT_SOURCE_WEIGHTS[RewardSource.HEURISTIC]))


ROUTER_CONFIDENCE_KEY = "confidence"  # `trajectory.router` key: P(the route taken), as the deciding model put it


def router_confidence(traj: Trajectory) -> float | None:
    """The recorded confidence of the routing decision, clamped to [0, 1]; None when missing or malformed.

    Read from `trajectory.router["confidence"]` (`RouterDecision.to_dict`). Records written before the key
    existed, routes no model chose (prior, forced, empty request, client tools, errors: confidence None) and
    damaged values (a bool, a string, NaN, ±inf) all give None.
    """
    router = traj.router
    value = router.get(ROUTER_CONFIDENCE_KEY) if isinstance(router, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    conf = float(value)
    if not math.isfinite(conf):
        return None
    return min(1.0, max(0.0, conf))


def confidence_multiplier(traj: Trajectory) -> float:
    """Seed 004 Phase 2a's confidence-modulated reinforcement: `0.5 + 0.5 * confidence`, in [0.5, 1.0].

    The update a trajectory makes to the routing policy is scaled by how confident that policy was in the
    decision it took; it multiplies the reward-source weight (`source_weight`), so the order of the two does
    not matter. Without a usable confidence (`router_confidence` is None) the multiplier is 1.0, so old
    records and unmodelled routes weigh exactly what they did before.

    Applied to router samples only (`router.labels.router_sample`), not to PRM step samples: the confidence
    is about the fast-vs-agent choice made before any step ran, and says nothing about how good the steps of
    the tool loop were, which is what the PRM learns.
    """
    conf = router_confidence(traj)
    return 1.0 if conf is None else 0.5 + 0.5 * conf


@dataclass(frozen=True)
class Floors:
    """The minimum data a trainer needs before it fits (seed 000's defaults)."""

    min_trajectories: int = 5
    min_samples: int = 20
    min_class_fraction: float = 0.05

    def check(self, trajectories: int, samples: int, positives: int) -> str | None:
        """None when every floor holds, else a sentence naming the first floor that failed."""
        if trajectories < self.min_trajectories:
            return (
                f"only {trajectories} usable trajectories (need at least {self.min_trajectories}); "
                "waiting for more data"
            )
        if samples < self.min_samples:
            return f"only {samples} training samples (need at least {self.min_samples}); waiting for more data"
        negatives = samples - positives
        minority = min(positives, negatives) / samples if samples else 0.0
        if minority < self.min_class_fraction:
            which = "positive" if positives <= negatives else "negative"
            return (
                f"class balance too lopsided: {positives} positive / {negatives} negative samples, the "
                f"{which} class is {minority:.1%} (need at least {self.min_class_fraction:.0%} each)"
            )
        return None


@dataclass
class TrainerReport:
    """The outcome of one training run, fit or bail (printed by the CLIs, logged by the watchdog)."""

    kind: str
    fit_attempted: bool = False
    fit_succeeded: bool = False
    bail_reason: str | None = None
    trajectories_seen: int = 0
    trajectories_used: int = 0
    samples: int = 0
    positives: int = 0
    negatives: int = 0
    weight_by_source: JSON = field(default_factory=dict)
    metrics: JSON = field(default_factory=dict)
    fit: JSON = field(default_factory=dict)
    checkpoint: str | None = None
    model_id: str | None = None
    seconds: float = 0.0
    error: str | None = None
    # The swap gate's verdict when the run was gated (`holdout.GateVerdict.to_dict()`), and the id of a
    # candidate it rejected (kept on the trainer as `rejected`, never as `model`).
    gate: JSON = field(default_factory=dict)
    rejected_model_id: str | None = None

    @property
    def class_balance(self) -> float | None:
        """The positive fraction of the samples (None without samples)."""
        return self.positives / self.samples if self.samples else None

    def to_dict(self) -> JSON:
        """A JSON-ready dict (what `--json` prints and the log carries)."""
        return {
            "kind": self.kind,
            "fit_attempted": self.fit_attempted,
            "fit_succeeded": self.fit_succeeded,
            "bail_reason": self.bail_reason,
            "trajectories_seen": self.trajectories_seen,
            "trajectories_used": self.trajectories_used,
            "samples": self.samples,
            "positives": self.positives,
            "negatives": self.negatives,
            "class_balance": None if self.class_balance is None else round(self.class_balance, 4),
            "weight_by_source": self.weight_by_source,
            "metrics": self.metrics,
            "fit": self.fit,
            "checkpoint": self.checkpoint,
            "model_id": self.model_id,
            "seconds": round(self.seconds, 4),
            "error": self.error,
            "gate": self.gate,
            "rejected_model_id": self.rejected_model_id,
        }

    def render(self) -> str:
        """A few human-readable lines."""
        outcome = "fitted" if self.fit_succeeded else "did not fit"
        if self.rejected_model_id:
            outcome = "fitted, but the swap gate rejected the model"
        lines = [f"{self.kind} trainer: {outcome}"]
        if self.bail_reason:
            lines.append(f"  reason: {self.bail_reason}")
        if self.error:
            lines.append(f"  error: {self.error}")
        lines.append(
            f"  trajectories: {self.trajectories_used} used of {self.trajectories_seen} read; "
            f"samples: {self.samples} ({self.positives} positive / {self.negatives} negative)"
        )
        if self.weight_by_source:
            parts = ", ".join(f"{k} {v:g}" for k, v in sorted(self.weight_by_source.items()))
            lines.append(f"  sample weight by outcome source: {parts}")
        if self.metrics:
            parts = ", ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in self.metrics.items()
            )
            lines.append(f"  train metrics: {parts}")
        if self.fit:
            lines.append(
                f"  solver: {self.fit.get('iterations')} iterations, converged={self.fit.get('converged')}, "
                f"{self.fit.get('seconds', 0.0) * 1000:.1f} ms"
            )
        if self.gate:
            verdict = "accepted" if self.gate.get("accepted") else "rejected"
            lines.append(f"  swap gate: {verdict}: {self.gate.get('reason')}")
        if self.rejected_model_id:
            lines.append(f"  rejected model {self.rejected_model_id} (not loaded)")
        if self.checkpoint:
            lines.append(f"  checkpoint: {self.checkpoint} (model {self.model_id})")
        elif self.fit_succeeded:
            lines.append(f"  model {self.model_id} kept in memory (no checkpoint path given)")
        return "\n".join(lines)


def is_labeled(traj: Trajectory) -> bool:
    """True when the (overlaid) outcome is PASSED or FAILED."""
    return traj.outcome in (Outcome.PASSED, Outcome.FAILED)


__all__ = [
    "DEFAULT_SOURCE_WEIGHTS",
    "ROUTER_CONFIDENCE_KEY",
    "Floors",
    "RewardSource",
    "TrainerReport",
    "confidence_multiplier",
    "is_labeled",
    "outcome_source",
    "router_confidence",
    "source_weight",
]
