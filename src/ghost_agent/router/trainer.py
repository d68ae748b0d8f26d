"""RouterTrainer: fit the router from recorded trajectories, with the PRM's floors-and-bail discipline.

The run itself — floors and bail, fit, metrics, saving, errors by stage, the report, `arun` — is the shared
`LinearTrainer`'s (events `router_train_bail`, `router_train_fit`, `router_train_error`). What is the
router's: each trajectory gives at most one sample (`router.labels`), and the count of trajectories each
labelling rule decided is logged and kept in the checkpoint metadata as `rules`.

The uncertainty band is a dispatch setting, not a property of the model, so it is not stored in the
checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ghost_agent.learned.trainer import Batch, LinearTrainer
from ghost_agent.router.labels import label_rule, router_sample
from ghost_agent.router.model import RouterModel
from ghost_agent.trajectories.record import Trajectory


class RouterTrainer(LinearTrainer[RouterModel]):
    """Trains a RouterModel from a TrajectoryCollector (corrections overlaid) or any iterable of Trajectory.

    Same conventions as `PRMTrainer` (both are `LinearTrainer`s): re-read source, `since` only for a
    collector, `model` kept on a bail or an error, `last_report`.
    """

    model_class = RouterModel

    def _collect(self, trajectories: Iterable[Trajectory], batch: Batch) -> None:
        """One sample per labeled trajectory; every trajectory, labeled or not, counted under its rule."""
        rules = batch.tallies
        for traj in trajectories:
            sample = router_sample(traj, self.source_weights)
            rule = sample.rule if sample is not None else label_rule(traj)
            rules[rule] = rules.get(rule, 0) + 1
            if sample is None:
                continue
            batch.add(
                sample.features(), sample.label, sample.weight,
                positive=sample.label >= 0.5, source=sample.reward_source,
            )
            batch.used += 1

    def _log_fields(self, batch: Batch) -> dict[str, Any]:
        return {"rules": batch.tallies}

    def _metadata_fields(self, batch: Batch) -> dict[str, Any]:
        # The uncertainty band is a dispatch setting, not part of the model: deliberately absent.
        return {"rules": dict(sorted(batch.tallies.items()))}


__all__ = ["RouterTrainer"]
