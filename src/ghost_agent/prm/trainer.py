"""PRMTrainer: trajectories → step samples → floors → StepValueModel.fit → atomic checkpoint (seed 000).

The run itself — floors and bail, fit, metrics, saving, errors by stage, the report, `arun` — is the shared
`LinearTrainer`'s (events `prm_train_bail`, `prm_train_fit`, `prm_train_error`). What is the PRM's: every
step of a labeled trajectory is a sample (`prm.labels.iter_step_samples`), fitted on its γ-discounted value
as a soft label (or on the thresholded value with `use_continuous_labels=False`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ghost_agent.learned.trainer import DEFAULT_FLOORS, Batch, LinearTrainer
from ghost_agent.learned.training import Floors, RewardSource
from ghost_agent.prm.features import extract_step_features
from ghost_agent.prm.labels import StepLabelSpec, iter_step_samples
from ghost_agent.prm.model import StepValueModel
from ghost_agent.trajectories.collector import TimeBound, TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory

DEFAULT_SPEC = StepLabelSpec()  # frozen dataclass: safe to share as a default


class PRMTrainer(LinearTrainer[StepValueModel]):
    """Trains a StepValueModel from a TrajectoryCollector (corrections overlaid) or any iterable of Trajectory.

    `spec` decides the step labels; the rest are `LinearTrainer`'s conventions (re-read source, `since` only
    for a collector, `model` kept on a bail or an error, `last_report`).
    """

    model_class = StepValueModel

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
        super().__init__(
            source, floors=floors, l2=l2, checkpoint_path=checkpoint_path, since=since, source_weights=source_weights
        )
        self.spec = spec
        self.use_continuous_labels = use_continuous_labels

    @property
    def label_mode(self) -> str:
        """`continuous` (γ-discounted values as soft labels) or `binary` (thresholded)."""
        return "continuous" if self.use_continuous_labels else "binary"

    @property
    def metrics_threshold(self) -> float:
        """The spec's success threshold: a value at or above it is a positive step."""
        return self.spec.binary_threshold

    def _collect(self, trajectories: Iterable[Trajectory], batch: Batch) -> None:
        """One streaming pass: features per step sample, its label and weight (no StepSample is kept)."""
        for sample in iter_step_samples(trajectories, self.spec, self.source_weights):
            label = sample.value if self.use_continuous_labels else float(sample.binary)
            batch.add(
                extract_step_features(sample.state, sample.action), label, sample.weight,
                positive=bool(sample.binary), source=sample.reward_source.value,
            )
            if sample.step_index == 0:  # every labeled trajectory yields exactly one step-0 sample
                batch.used += 1

    def _log_fields(self, batch: Batch) -> dict[str, Any]:
        return {"label_mode": self.label_mode}

    def _metadata_fields(self, batch: Batch) -> dict[str, Any]:
        return {"spec": self.spec.to_dict(), "label_mode": self.label_mode}


__all__ = ["PRMTrainer"]
