"""PRMTrainer: trajectories → step samples → floors → StepValueModel.fit → atomic checkpoint (seed 000).

Bail-on-bad-data: when any floor (`training.Floors`) fails, `run` returns a report with
`fit_attempted=False` and the reason, writes no checkpoint and keeps the previous model — a confidently wrong
scorer poisons every plan it scores until the next retrain, so returning empty-handed is the safe answer.

`run` never raises for data or I/O problems: a failure to read the store, a fit error or a failed save
lands in `report.error`. A failed save still keeps the freshly fitted model in memory (`self.model` is
assigned before the save), so the watchdog can hot-swap it even when the disk is unwritable.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.distill.collector import TimeBound, TrajectoryCollector
from ghost_agent.distill.trajectory import Trajectory
from ghost_agent.linear import FitError, binary_metrics
from ghost_agent.logging import get_logger
from ghost_agent.prm.features import extract_step_features
from ghost_agent.prm.labels import StepLabelSpec, iter_step_samples
from ghost_agent.prm.model import StepValueModel
from ghost_agent.training import DEFAULT_SOURCE_WEIGHTS, Floors, RewardSource, TrainerReport

log = get_logger("prm.trainer")

KIND = "prm"
DEFAULT_SPEC = StepLabelSpec()
DEFAULT_FLOORS = Floors()  # frozen dataclasses: safe to share as defaults


@dataclass
class _Collected:
    """What one pass over the trajectories produced (rows kept as tuples until one array is built)."""

    rows: list[tuple[float, ...]] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    binaries: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    seen: int = 0
    used: int = 0
    weight_by_source: dict[str, float] = field(default_factory=dict)


class PRMTrainer:
    """Trains a StepValueModel from a TrajectoryCollector (corrections overlaid) or any iterable of Trajectory.

    Each `run` reads `source` afresh, so repeat runs need a collector or a re-iterable (a list), not a
    one-shot iterator. `since` (a datetime, date or ISO string) is only meaningful for a collector and is
    refused for anything else. `self.model` is the last successfully fitted model (None before the first);
    a bail or error leaves it untouched.
    """

    def __init__(
        self,
        source: TrajectoryCollector | Iterable[Trajectory],
        *,
        spec: StepLabelSpec = DEFAULT_SPEC,
        floors: Floors = DEFAULT_FLOORS,
        use_continuous_labels: bool = True,
        l2: float = 1e-2,
        checkpoint_path: Path | None = None,
        source_weights: Mapping[RewardSource, float] | None = None,
        since: TimeBound = None,
    ) -> None:
        if since is not None and not isinstance(source, TrajectoryCollector):
            raise ValueError("since= needs a TrajectoryCollector source (a plain iterable cannot be filtered)")
        self.source = source
        self.spec = spec
        self.floors = floors
        self.use_continuous_labels = use_continuous_labels
        self.l2 = l2
        self.checkpoint_path = None if checkpoint_path is None else Path(checkpoint_path)
        self.source_weights: Mapping[RewardSource, float] = (
            DEFAULT_SOURCE_WEIGHTS if source_weights is None else source_weights
        )
        self.since = since
        self.model: StepValueModel | None = None
        self.last_report: TrainerReport | None = None

    @property
    def label_mode(self) -> str:
        """`continuous` (γ-discounted values as soft labels) or `binary` (thresholded)."""
        return "continuous" if self.use_continuous_labels else "binary"

    def _trajectories(self) -> Iterable[Trajectory]:
        if isinstance(self.source, TrajectoryCollector):
            return self.source.iter_trajectories(since=self.since)
        return self.source

    def _collect(self) -> _Collected:
        """One streaming pass: features per sample, labels, weights, counts (no StepSample is kept)."""
        got = _Collected()
        counted = _Counting(self._trajectories(), got)
        for sample in iter_step_samples(counted, self.spec, self.source_weights):
            got.rows.append(extract_step_features(sample.state, sample.action))
            got.values.append(sample.value)
            got.binaries.append(sample.binary)
            got.weights.append(sample.weight)
            if sample.step_index == 0:  # every labeled trajectory yields exactly one step-0 sample
                got.used += 1
            key = sample.reward_source.value
            got.weight_by_source[key] = got.weight_by_source.get(key, 0.0) + sample.weight
        return got

    def run(self) -> TrainerReport:
        """One training pass; returns the report (also kept as `last_report`). Never raises for bad data."""
        started = time.perf_counter()
        report = TrainerReport(kind=KIND)
        try:
            got = self._collect()
        except Exception as exc:  # a broken store or a hostile iterable must not kill the watchdog
            report.error = f"reading trajectories failed: {type(exc).__name__}: {exc}"
            report.seconds = time.perf_counter() - started
            log.warning("prm_train_error", stage="read", error=report.error)
            return self._done(report)
        report.trajectories_seen = got.seen
        report.trajectories_used = got.used
        report.samples = len(got.rows)
        report.positives = sum(got.binaries)
        report.negatives = report.samples - report.positives
        report.weight_by_source = {k: round(v, 6) for k, v in sorted(got.weight_by_source.items())}

        reason = self.floors.check(report.trajectories_used, report.samples, report.positives)
        if reason is not None:
            report.bail_reason = reason
            report.seconds = time.perf_counter() - started
            log.info("prm_train_bail", reason=reason, **_counts(report))
            return self._done(report)

        x = np.asarray(got.rows, dtype=np.float64)  # one allocation for the whole matrix
        y = np.asarray(got.values if self.use_continuous_labels else got.binaries, dtype=np.float64)
        w = np.asarray(got.weights, dtype=np.float64)
        report.fit_attempted = True
        model = StepValueModel()
        try:
            stats = model.fit(x, y, w, l2=self.l2)
        except FitError as exc:  # e.g. a weight table that gives every sample weight 0
            report.error = f"fit failed: {exc}"
            report.seconds = time.perf_counter() - started
            log.warning("prm_train_error", stage="fit", error=report.error, **_counts(report))
            return self._done(report)
        report.fit_succeeded = True
        report.fit = stats.to_dict()
        report.metrics = binary_metrics(model.predict_proba(x), y, w, threshold=self.spec.binary_threshold)
        model.metadata = self._metadata(report)
        report.model_id = model.model_id
        self.model = model  # before the save: a failing disk must not lose a good model

        if self.checkpoint_path is not None:
            try:
                model.save(self.checkpoint_path)
                report.checkpoint = str(self.checkpoint_path)
            except (OSError, TypeError, ValueError) as exc:  # unwritable path, or metadata orjson refuses
                report.error = f"fitted, but saving the checkpoint to {self.checkpoint_path} failed: {exc}"
                log.warning("prm_train_error", stage="save", error=report.error, model_id=report.model_id)
        report.seconds = time.perf_counter() - started
        log.info(
            "prm_train_fit",
            **_counts(report),
            metrics=report.metrics,
            fit_seconds=round(stats.seconds, 6),
            seconds=round(report.seconds, 6),
            model_id=report.model_id,
            checkpoint=report.checkpoint,
            label_mode=self.label_mode,
        )
        return self._done(report)

    async def arun(self) -> TrainerReport:
        """`run` in a worker thread, so the event loop keeps serving while the watchdog trains."""
        return await asyncio.to_thread(self.run)

    def _done(self, report: TrainerReport) -> TrainerReport:
        self.last_report = report
        return report

    def _metadata(self, report: TrainerReport) -> dict[str, Any]:
        return {
            "trained_at": datetime.now(timezone.utc).isoformat(),
            "n_samples": report.samples,
            "n_trajectories": report.trajectories_used,
            "trajectories_seen": report.trajectories_seen,
            "spec": self.spec.to_dict(),
            "label_mode": self.label_mode,
            "l2": self.l2,
            "metrics": report.metrics,
            "class_balance": {
                "positives": report.positives,
                "negatives": report.negatives,
                "positive_fraction": report.class_balance,
            },
            "source_weights": {k.value: float(v) for k, v in self.source_weights.items()},
            "weight_by_source": report.weight_by_source,
            "fit": report.fit,
        }


class _Counting:
    """Wraps the trajectory stream to count every record read, labeled or not (`trajectories_seen`)."""

    def __init__(self, inner: Iterable[Trajectory], got: _Collected) -> None:
        self._inner = inner
        self._got = got

    def __iter__(self) -> Iterator[Trajectory]:
        for traj in self._inner:
            self._got.seen += 1
            yield traj


def _counts(report: TrainerReport) -> dict[str, int]:
    return {
        "trajectories_seen": report.trajectories_seen,
        "trajectories_used": report.trajectories_used,
        "samples": report.samples,
        "positives": report.positives,
        "negatives": report.negatives,
    }


__all__ = ["PRMTrainer"]
