"""RouterTrainer: fit the router from recorded trajectories, with the PRM's floors-and-bail discipline.

One run reads the trajectories (a `TrajectoryCollector`, re-read on every run, or any iterable of
`Trajectory`), turns each into at most one sample (`router.labels`), and then either bails — too few
trajectories or samples, or a lopsided class balance (`training.Floors`): no fit, no checkpoint, the previous
model kept — or fits a fresh `RouterModel`. A fitted model becomes `trainer.model` before the checkpoint is
written, so a failed save (reported in `TrainerReport.error`, never raised) does not lose it.

The uncertainty band is a dispatch setting, not a property of the model, so it is not stored in the
checkpoint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.distill.collector import TimeBound, TrajectoryCollector
from ghost_agent.distill.trajectory import Trajectory
from ghost_agent.linear import FitError, binary_metrics
from ghost_agent.logging import get_logger
from ghost_agent.router.labels import label_rule, router_sample
from ghost_agent.router.model import RouterModel
from ghost_agent.training import DEFAULT_SOURCE_WEIGHTS, Floors, RewardSource, TrainerReport

log = get_logger("router.trainer")

KIND = "router"
DEFAULT_FLOORS = Floors()  # frozen dataclass: safe to share as a default


class RouterTrainer:
    """Trains a RouterModel from a TrajectoryCollector (corrections overlaid) or any iterable of Trajectory.

    Each `run` reads `source` afresh, so repeat runs need a collector or a re-iterable (a list), not a
    one-shot iterator. `since` is only meaningful for a collector and is refused for anything else.
    `self.model` is the last successfully fitted model (None before the first); a bail or an error leaves it
    untouched. Same conventions as `PRMTrainer`.
    """

    def __init__(
        self,
        source: TrajectoryCollector | Iterable[Trajectory],
        *,
        floors: Floors = DEFAULT_FLOORS,
        l2: float = 1e-2,
        checkpoint_path: Path | None = None,
        since: TimeBound = None,
        source_weights: Mapping[RewardSource, float] | None = None,
    ) -> None:
        if since is not None and not isinstance(source, TrajectoryCollector):
            raise ValueError("since= needs a TrajectoryCollector source (a plain iterable cannot be filtered)")
        self.source = source
        self.floors = floors
        self.l2 = l2
        self.checkpoint_path = None if checkpoint_path is None else Path(checkpoint_path)
        self.since = since
        self.source_weights: Mapping[RewardSource, float] = (
            DEFAULT_SOURCE_WEIGHTS if source_weights is None else source_weights
        )
        self.model: RouterModel | None = None
        self.last_report: TrainerReport | None = None

    def _trajectories(self) -> Iterable[Trajectory]:
        if isinstance(self.source, TrajectoryCollector):
            return self.source.iter_trajectories(since=self.since)
        return self.source

    def run(self) -> TrainerReport:
        """Read, label, check the floors, fit, save; the report is also kept as `last_report`. Never raises."""
        started = time.perf_counter()
        report = TrainerReport(kind=KIND)
        rows: list[tuple[float, ...]] = []
        labels: list[float] = []
        weights: list[float] = []
        rules: dict[str, int] = {}
        by_source: dict[str, float] = {}
        try:
            for traj in self._trajectories():
                report.trajectories_seen += 1
                sample = router_sample(traj, self.source_weights)
                rule = sample.rule if sample is not None else label_rule(traj)
                rules[rule] = rules.get(rule, 0) + 1
                if sample is None:
                    continue
                rows.append(sample.features())
                labels.append(sample.label)
                weights.append(sample.weight)
                by_source[sample.reward_source] = by_source.get(sample.reward_source, 0.0) + sample.weight
        except Exception as exc:  # a broken store or a hostile iterable must not kill the watchdog
            report.error = f"reading trajectories failed: {type(exc).__name__}: {exc}"
            report.seconds = time.perf_counter() - started
            log.warning("router_train_error", stage="read", error=report.error, **_counts(report))
            return self._done(report)
        report.trajectories_used = report.samples = len(rows)  # one sample per labeled trajectory
        report.positives = sum(1 for y in labels if y >= 0.5)
        report.negatives = report.samples - report.positives
        report.weight_by_source = {k: round(v, 6) for k, v in sorted(by_source.items())}

        reason = self.floors.check(report.trajectories_used, report.samples, report.positives)
        if reason is not None:
            report.bail_reason = reason
            report.seconds = time.perf_counter() - started
            log.info("router_train_bail", reason=reason, rules=rules, kept_model=self._model_id(), **_counts(report))
            return self._done(report)

        x = np.asarray(rows, dtype=np.float64)  # one allocation for the whole matrix
        y = np.asarray(labels, dtype=np.float64)
        w = np.asarray(weights, dtype=np.float64)
        report.fit_attempted = True
        model = RouterModel()
        try:
            stats = model.fit(x, y, w, l2=self.l2)
        except FitError as exc:  # e.g. a weight table that gives every sample weight 0
            report.error = f"fit failed: {exc}"
            report.seconds = time.perf_counter() - started
            log.warning("router_train_error", stage="fit", error=report.error, **_counts(report))
            return self._done(report)
        report.fit_succeeded = True
        report.fit = stats.to_dict()
        report.metrics = binary_metrics(model.predict_proba(x), y, w)
        model.metadata = self._metadata(report, rules)
        report.model_id = model.model_id
        self.model = model  # before the save: a failing disk must not lose a good model

        if self.checkpoint_path is not None:
            try:
                model.save(self.checkpoint_path)
                report.checkpoint = str(self.checkpoint_path)
            except (OSError, TypeError, ValueError) as exc:  # unwritable path, or metadata orjson refuses
                report.error = f"fitted, but saving the checkpoint to {self.checkpoint_path} failed: {exc}"
                log.warning("router_train_error", stage="save", error=report.error, model_id=report.model_id)
        report.seconds = time.perf_counter() - started
        log.info(
            "router_train_fit",
            **_counts(report),
            rules=rules,
            metrics=report.metrics,
            fit_seconds=round(stats.seconds, 6),
            seconds=round(report.seconds, 6),
            model_id=report.model_id,
            checkpoint=report.checkpoint,
        )
        return self._done(report)

    async def arun(self) -> TrainerReport:
        """`run` in a worker thread, so the event loop keeps serving while the watchdog trains."""
        return await asyncio.to_thread(self.run)

    def _model_id(self) -> str | None:
        return None if self.model is None else self.model.model_id

    def _done(self, report: TrainerReport) -> TrainerReport:
        self.last_report = report
        return report

    def _metadata(self, report: TrainerReport, rules: dict[str, int]) -> dict[str, Any]:
        # The uncertainty band is a dispatch setting, not part of the model: deliberately absent.
        return {
            "trained_at": datetime.now(timezone.utc).isoformat(),
            "n_samples": report.samples,
            "n_trajectories": report.trajectories_used,
            "trajectories_seen": report.trajectories_seen,
            "rules": dict(sorted(rules.items())),
            "since": None if self.since is None else str(self.since),
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


def _counts(report: TrainerReport) -> dict[str, int]:
    return {
        "trajectories_seen": report.trajectories_seen,
        "trajectories_used": report.trajectories_used,
        "samples": report.samples,
        "positives": report.positives,
        "negatives": report.negatives,
    }


__all__ = ["RouterTrainer"]
