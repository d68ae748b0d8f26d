"""LinearTrainer: trajectories → samples → floors → fit → atomic checkpoint, for any BoundModel (PRM, router).

One `run` reads the source afresh (a `TrajectoryCollector`, corrections overlaid, optionally `since` a time;
or any re-iterable of `Trajectory`), lets the subclass turn the trajectories into feature rows, labels and
sample weights (`_collect`), then either bails or fits a fresh model:

- Bail-on-bad-data: when any floor (`training.Floors`) fails, the report says why (`fit_attempted=False`), no
  checkpoint is written and the previous model is kept — a confidently wrong model poisons every decision it
  makes until the next retrain, so returning empty-handed is the safe answer.
- `run` never raises for data or I/O problems: a failure to read the store, a fit error or a failed save
  lands in `report.error` (logged with its `stage`: read, fit, save). A failed save still keeps the freshly
  fitted model (`self.model` is assigned before the save), so the watchdog can hot-swap it even when the
  disk is unwritable.

Gated runs (`run(gate=HoldoutGate(live_model))`, the watchdog's retrain): after the floors, a candidate is
fitted on the older samples and judged against the live model on the newest held-out slice (`learned/holdout.py`).
Rejected: `self.rejected` holds the candidate (with its verdict in the metadata), `self.model` is untouched and
nothing is saved. Accepted: the model is refitted on every sample — the newest data (often the latest human
correction) must reach the live model; the gate judged the same procedure on data it had not seen — and its
metadata keeps the verdict. A live model trained on exactly the same data (`data_fingerprint`) is a bail:
"no new data", nothing to fit.

Log events, prefixed with the model's kind, from the logger `<kind>.trainer`: `<kind>_train_bail`,
`<kind>_train_fit`, `<kind>_train_rejected`, `<kind>_train_error`.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.holdout import GateVerdict, HoldoutGate, evaluate, iso, time_split, unjudged
from ghost_agent.learned.linear import FitError, binary_metrics
from ghost_agent.learned.training import DEFAULT_SOURCE_WEIGHTS, Floors, RewardSource, TrainerReport
from ghost_agent.logging import get_logger
from ghost_agent.trajectories.collector import TimeBound, TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory, parse_ts

M = TypeVar("M", bound=BoundModel)

DEFAULT_FLOORS = Floors()  # frozen dataclass: safe to share as a default


@dataclass
class Batch:
    """What one streaming pass over the trajectories produced: the fit's inputs and the report's counts.

    Rows stay tuples until one array is built. `seen` is counted by the trainer; `used` (trajectories that
    gave at least one sample) and `tallies` (kind-specific counts, e.g. the router's labelling rules) by the
    subclass's `_collect`.

    Each sample also remembers its trajectory (`groups[i]`, an index into `group_times`, the trajectories'
    times in epoch seconds, in read order), for the swap gate's time-ordered split. The trainer sets `current`
    as it hands each trajectory over, so `_collect` must turn a trajectory into samples before pulling the
    next one (both kinds stream exactly so).
    """

    rows: list[tuple[float, ...]] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    positives: int = 0
    seen: int = 0
    used: int = 0
    weight_by_source: dict[str, float] = field(default_factory=dict)
    tallies: dict[str, int] = field(default_factory=dict)
    groups: list[int] = field(default_factory=list)
    group_times: list[float] = field(default_factory=list)
    current: int = -1
    digest: str = ""  # `data_fingerprint` of the arrays fitted on, set by the run

    def add(self, row: tuple[float, ...], label: float, weight: float, *, positive: bool, source: str) -> None:
        """One sample: its features, the label the model is fitted on, its weight, class and reward source."""
        self.rows.append(row)
        self.labels.append(label)
        self.weights.append(weight)
        self.positives += positive
        self.weight_by_source[source] = self.weight_by_source.get(source, 0.0) + weight
        self.groups.append(self.current)

    def data_until(self) -> float:
        """The newest time among the trajectories that gave samples (0 without samples)."""
        used = set(self.groups)
        return max((self.group_times[g] for g in used if g >= 0), default=0.0)


class LinearTrainer(ABC, Generic[M]):
    """Fits `model_class` from trajectories; subclasses supply `model_class` and `_collect` (see the module doc).

    Each `run` reads `source` afresh, so repeat runs need a collector or a re-iterable (a list), not a
    one-shot iterator. `since` (a datetime, date or ISO string) is only meaningful for a collector and is
    refused for anything else. `self.model` is the last successfully fitted model (None before the first);
    a bail or an error leaves it untouched. `last_report` is the last run's report.
    """

    model_class: type[M]

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
        self.model: M | None = None
        self.rejected: M | None = None  # the last candidate a swap gate rejected (gated runs only)
        self.last_report: TrainerReport | None = None
        self.kind = self.model_class.KIND
        self.log = get_logger(f"{self.kind}.trainer")

    # ------------------------------------------------------------------------------- subclass hooks

    @abstractmethod
    def _collect(self, trajectories: Iterable[Trajectory], batch: Batch) -> None:
        """Turn the trajectories into samples (`batch.add`), counting `batch.used` and any `batch.tallies`."""

    def _log_fields(self, batch: Batch) -> dict[str, Any]:
        """Kind-specific fields for the bail and fit log events."""
        return {}

    def _metadata_fields(self, batch: Batch) -> dict[str, Any]:
        """Kind-specific checkpoint metadata (after the counts, before the fit settings)."""
        return {}

    @property
    def metrics_threshold(self) -> float:
        """Where a soft label and a prediction count as positive for the train metrics."""
        return 0.5

    # -------------------------------------------------------------------------------------- the run

    def run(self, *, gate: HoldoutGate | None = None) -> TrainerReport:
        """Read, label, check the floors, fit, save; the report is also kept as `last_report`. Never raises.

        With `gate`, the fitted model must be no worse than `gate.baseline` on the newest held-out slice (see
        the module doc); `report.gate` holds the verdict either way.
        """
        started = time.perf_counter()
        self.rejected = None
        report = TrainerReport(kind=self.kind)
        batch = Batch()
        try:
            self._collect(_counting(self._trajectories(), batch), batch)
        except Exception as exc:  # a broken store or a hostile iterable must not kill the watchdog
            _count(report, batch)
            report.error = f"reading trajectories failed: {type(exc).__name__}: {exc}"
            self.log.warning(f"{self.kind}_train_error", stage="read", error=report.error, **_counts(report))
            return self._done(report, started)
        _count(report, batch)

        reason = self.floors.check(report.trajectories_used, report.samples, report.positives)
        if reason is not None:
            return self._bail(report, batch, started, reason)

        x = np.asarray(batch.rows, dtype=np.float64)  # one allocation for the whole matrix
        y = np.asarray(batch.labels, dtype=np.float64)
        w = np.asarray(batch.weights, dtype=np.float64)
        batch.digest = data_fingerprint(x, y, w)
        if gate is not None:
            baseline_print = None if gate.baseline is None else gate.baseline.metadata.get("data_fingerprint")
            if baseline_print is not None and baseline_print == batch.digest:
                return self._bail(report, batch, started, "no new data since the live model was trained")
        report.fit_attempted = True
        if gate is not None:
            verdict = self._judge(gate, report, batch, x, y, w)
            if verdict is None:  # the candidate's fit failed: `report.error` says why
                return self._done(report, started)
            report.gate = verdict.to_dict()
            if not verdict.accepted:
                if not verdict.judged:  # nothing could be held out: a data bail, the live model stays
                    report.fit_attempted = False
                    return self._bail(report, batch, started, verdict.reason)
                self.log.info(
                    f"{self.kind}_train_rejected", reason=verdict.reason, gate=report.gate,
                    rejected_model_id=report.rejected_model_id, kept_model=gate.baseline_id, **_counts(report),
                )
                return self._done(report, started)
        model = self.model_class()
        try:
            stats = model.fit(x, y, w, l2=self.l2)
        except FitError as exc:  # e.g. a weight table that gives every sample weight 0
            report.error = f"fit failed: {exc}"
            self.log.warning(f"{self.kind}_train_error", stage="fit", error=report.error, **_counts(report))
            return self._done(report, started)
        report.fit_succeeded = True
        report.fit = stats.to_dict()
        report.metrics = binary_metrics(model.predict_proba(x), y, w, threshold=self.metrics_threshold)
        model.metadata = self._metadata(report, batch)
        report.model_id = model.model_id
        self.model = model  # before the save: a failing disk must not lose a good model

        if self.checkpoint_path is not None:
            try:
                model.save(self.checkpoint_path)
                report.checkpoint = str(self.checkpoint_path)
            except (OSError, TypeError, ValueError) as exc:  # unwritable path, or metadata orjson refuses
                report.error = f"fitted, but saving the checkpoint to {self.checkpoint_path} failed: {exc}"
                self.log.warning(f"{self.kind}_train_error", stage="save", error=report.error, model_id=report.model_id)
        report.seconds = time.perf_counter() - started
        self.log.info(
            f"{self.kind}_train_fit",
            **_counts(report),
            **self._log_fields(batch),
            metrics=report.metrics,
            fit_seconds=round(stats.seconds, 6),
            seconds=round(report.seconds, 6),
            model_id=report.model_id,
            checkpoint=report.checkpoint,
            gate=report.gate.get("reason") if report.gate else None,
        )
        self.last_report = report
        return report

    def _bail(self, report: TrainerReport, batch: Batch, started: float, reason: str) -> TrainerReport:
        """A data bail: the reason logged, the previous model kept."""
        report.bail_reason = reason
        kept = None if self.model is None else self.model.model_id
        self.log.info(
            f"{self.kind}_train_bail", reason=reason, kept_model=kept, **_counts(report), **self._log_fields(batch)
        )
        return self._done(report, started)

    def _judge(
        self, gate: HoldoutGate, report: TrainerReport, batch: Batch, x: np.ndarray, y: np.ndarray, w: np.ndarray
    ) -> GateVerdict | None:
        """Fit a candidate on the older samples and judge it on the newest slice; a rejected candidate becomes
        `self.rejected` (metadata: its train figures and the verdict). None when its fit failed."""
        split = time_split(batch.groups, batch.group_times, gate.fraction, gate.min_samples)
        if split is None:
            return unjudged(gate, len(batch.rows))
        candidate = self.model_class()
        try:
            stats = candidate.fit(x[split.train], y[split.train], w[split.train], l2=self.l2)
        except FitError as exc:  # the older part alone may carry no weight
            report.error = f"fit failed on the older {split.train_samples} samples: {exc}"
            self.log.warning(f"{self.kind}_train_error", stage="fit", error=report.error, **_counts(report))
            return None
        verdict = evaluate(gate, candidate, split, x, y, w, self.metrics_threshold)
        if not verdict.accepted:
            report.fit = stats.to_dict()
            report.metrics = binary_metrics(
                candidate.predict_proba(x[split.train]), y[split.train], w[split.train],
                threshold=self.metrics_threshold,
            )
            report.gate = verdict.to_dict()
            candidate.metadata = self._metadata(report, batch)
            candidate.metadata["n_samples"] = split.train_samples  # what it was fitted on
            report.rejected_model_id = candidate.model_id
            self.rejected = candidate
        return verdict

    async def arun(self) -> TrainerReport:
        """`run` in a worker thread, so the event loop keeps serving while the watchdog trains."""
        return await asyncio.to_thread(self.run)

    def _trajectories(self) -> Iterable[Trajectory]:
        if isinstance(self.source, TrajectoryCollector):
            return self.source.iter_trajectories(since=self.since)
        return self.source

    def _done(self, report: TrainerReport, started: float) -> TrainerReport:
        """An early end (error or bail): the report timed and kept as `last_report`."""
        report.seconds = time.perf_counter() - started
        self.last_report = report
        return report

    def _metadata(self, report: TrainerReport, batch: Batch) -> dict[str, Any]:
        return {
            "trained_at": datetime.now(timezone.utc).isoformat(),
            "n_samples": report.samples,
            "n_trajectories": report.trajectories_used,
            "trajectories_seen": report.trajectories_seen,
            **self._metadata_fields(batch),
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
            "data_until": iso(batch.data_until()),
            "data_fingerprint": batch.digest or None,
            **({"gate": report.gate} if report.gate else {}),
        }


def _counting(trajectories: Iterable[Trajectory], batch: Batch) -> Iterator[Trajectory]:
    """The trajectory stream, counting every record read, labeled or not (`trajectories_seen`), and noting each
    one's time as the group of the samples made from it."""
    for traj in trajectories:
        batch.current = batch.seen
        batch.group_times.append(_epoch(traj))
        batch.seen += 1
        yield traj


def data_fingerprint(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> str:
    """A short hash of exactly what a fit sees (features, labels, weights, in order): equal for the same data,
    different after a new trajectory or a correction that flips a label or changes who decided it."""
    h = hashlib.sha256()
    for arr in (x, y, w):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
        h.update(str(arr.shape).encode())
    return h.hexdigest()[:16]


def _epoch(traj: Trajectory) -> float:
    """The trajectory's time in epoch seconds; 0 (the oldest) when its stamp is not a time."""
    try:
        return parse_ts(traj.ts).timestamp()
    except (AttributeError, TypeError, ValueError, OverflowError):  # a damaged record: not a string, not a time
        return 0.0


def _count(report: TrainerReport, batch: Batch) -> None:
    report.trajectories_seen = batch.seen
    report.trajectories_used = batch.used
    report.samples = len(batch.rows)
    report.positives = batch.positives
    report.negatives = report.samples - report.positives
    report.weight_by_source = {k: round(v, 6) for k, v in sorted(batch.weight_by_source.items())}


def _counts(report: TrainerReport) -> dict[str, int]:
    return {
        "trajectories_seen": report.trajectories_seen,
        "trajectories_used": report.trajectories_used,
        "samples": report.samples,
        "positives": report.positives,
        "negatives": report.negatives,
    }


__all__ = ["DEFAULT_FLOORS", "Batch", "LinearTrainer"]
