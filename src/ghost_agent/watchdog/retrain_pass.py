"""One retrain pass: the PRM and the router fitted over the store, each gated against its live model.

This is the CPU half of the watchdog's phase 2.7, kept free of the daemon so it can run in a child process
(`child_main`, what the phase spawns) or a worker thread (`run_job`): it reads the store read-only (the
corrections sidecar overlaid, samples weighted by who decided the outcome, seed 004), fits, judges each
candidate on the newest held-out slice (`learned/holdout.py`) and returns plain data — the reports and the accepted
or rejected checkpoints as dicts. Swapping, saving and logging the outcome are the phase's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.holdout import DEFAULT_FRACTION, DEFAULT_MIN_SAMPLES, HoldoutGate
from ghost_agent.learned.linear import CheckpointError, LogisticModel
from ghost_agent.learned.trainer import LinearTrainer
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.trainer import PRMTrainer
from ghost_agent.router.model import RouterModel
from ghost_agent.router.trainer import RouterTrainer
from ghost_agent.trajectories.collector import TrajectoryCollector

KINDS: tuple[str, ...] = ("prm", "router")
TRAINERS: Mapping[str, type[LinearTrainer[Any]]] = {"prm": PRMTrainer, "router": RouterTrainer}
MODELS: Mapping[str, type[BoundModel]] = {"prm": StepValueModel, "router": RouterModel}

RESULT_ACCEPTED = "accepted"
RESULT_REJECTED = "rejected"
RESULT_BAIL = "bail"
RESULT_ERROR = "error"


@dataclass(frozen=True)
class LogTarget:
    """Where a child process logs: the daemon's log file (several processes may append to it), its level
    and rotation. `path` None drops every event (a child must never print onto the daemon's stdout)."""

    path: str | None
    level: str = "info"
    max_bytes: int = 0
    backups: int = 0


@dataclass(frozen=True)
class RetrainJob:
    """What one pass needs; picklable (it crosses to the child process).

    `live` holds each kind's live checkpoint (`LogisticModel.to_dict()`), None when the slot has no model.
    """

    trajectories: str
    kinds: tuple[str, ...] = KINDS
    live: Mapping[str, JSON | None] = field(default_factory=dict)
    holdout_fraction: float = DEFAULT_FRACTION
    min_holdout: int = DEFAULT_MIN_SAMPLES
    tolerance: float = 0.0
    log: LogTarget | None = None


@dataclass
class KindResult:
    """One kind's outcome: the trainer's report, and the accepted checkpoint or the rejected candidate's."""

    kind: str
    report: JSON
    model: JSON | None = None
    rejected: JSON | None = None

    @property
    def result(self) -> str:
        """accepted | rejected | bail | error."""
        if self.report.get("error"):
            return RESULT_ERROR
        if self.model is not None:
            return RESULT_ACCEPTED
        if self.rejected is not None:
            return RESULT_REJECTED
        return RESULT_BAIL


def live_model(kind: str, checkpoint: JSON | None) -> LogisticModel | None:
    """A live checkpoint dict back as a model (CheckpointError if it is not one of `kind`)."""
    if checkpoint is None:
        return None
    model_class = MODELS[kind]
    base = LogisticModel.from_dict(checkpoint, kind=model_class.KIND, feature_names=model_class.FEATURE_NAMES)
    return model_class.from_linear(base)


def model_from(kind: str, checkpoint: JSON) -> BoundModel:
    """A returned checkpoint dict as the kind's model class (what the phase swaps in or saves)."""
    model = live_model(kind, checkpoint)
    assert model is not None
    return model  # type: ignore[return-value]  # live_model returns the kind's BoundModel subclass


def train_kind(job: RetrainJob, kind: str) -> KindResult:
    """Fit one kind over the store, gated against its live model. Never raises for data problems."""
    try:
        baseline = live_model(kind, job.live.get(kind))
    except CheckpointError as exc:  # a live model this version cannot read back: judge against neutral
        baseline = None
        error = str(exc)
    else:
        error = ""
    gate = HoldoutGate(baseline, fraction=job.holdout_fraction, min_samples=job.min_holdout,
                       tolerance=job.tolerance)
    store = TrajectoryCollector(Path(job.trajectories), enabled=False)  # read-only: never creates the store
    trainer = TRAINERS[kind](store)
    report = trainer.run(gate=gate)
    out = report.to_dict()
    if error:
        out["live_model_error"] = error
    model = trainer.model.to_dict() if report.fit_succeeded and trainer.model is not None else None
    rejected = trainer.rejected.to_dict() if trainer.rejected is not None else None
    return KindResult(kind, out, model, rejected)


def run_job(job: RetrainJob) -> dict[str, KindResult]:
    """Every kind of the job, in order (in this process: a worker thread or the child)."""
    return {kind: train_kind(job, kind) for kind in job.kinds}


def child_main(job: RetrainJob) -> dict[str, KindResult]:
    """The child process's entry (`watchdog.process.run_in_process`, which already lowered its priority):
    log where the daemon logs, run the job."""
    from ghost_agent.logging import configure_logging

    target = job.log
    if target is not None and target.path is not None:
        sink = configure_logging(Path(target.path), level=target.level, console=None,
                                 max_bytes=target.max_bytes, backups=target.backups)
    else:
        sink = configure_logging(None, console=None)
    try:
        return run_job(job)
    finally:
        sink.close()


__all__ = [
    "KINDS",
    "MODELS",
    "RESULT_ACCEPTED",
    "RESULT_BAIL",
    "RESULT_ERROR",
    "RESULT_REJECTED",
    "KindResult",
    "LogTarget",
    "RetrainJob",
    "child_main",
    "live_model",
    "model_from",
    "run_job",
    "train_kind",
]
