"""StepValueModel: the PRM's logistic regression over `PRM_FEATURE_NAMES` (checkpoint `ghost.prm.logreg.v1`).

A thin binding of the shared core (`ghost_agent.linear`) to the PRM's kind and frozen feature layout, plus
`(state, action)` conveniences. The router's model is the same core bound to its own features.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.linear import CheckpointError, FitStats, LogisticModel, schema_for
from ghost_agent.prm.features import PRM_FEATURE_NAMES, extract_step_features

KIND = "prm"
SCHEMA = schema_for(KIND)


class StepValueModel(LogisticModel):
    """P(this step is on a path to success | state, action) as a logistic regression."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("kind", KIND)
        kwargs.setdefault("feature_names", PRM_FEATURE_NAMES)
        super().__init__(**kwargs)

    def fit_rows(
        self, rows: Sequence[Sequence[float]], labels: Sequence[float], weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> FitStats:
        """`fit` on feature rows already extracted with `extract_step_features`."""
        return self.fit(np.asarray(rows, dtype=np.float64), labels, weights, **kwargs)

    def predict_step(self, state: Any, action: Any) -> float:
        """P(success) for one `(state, action)`, features extracted on the way."""
        return self.predict_one(extract_step_features(state, action))

    @classmethod
    def load(cls, path: Path, *, kind: str = KIND, feature_names: Sequence[str] = PRM_FEATURE_NAMES) -> Any:
        """Load a PRM checkpoint; CheckpointError on schema or feature-layout drift, bad JSON, bad weights."""
        base = LogisticModel.load(path, kind=kind, feature_names=feature_names)
        return cls.from_linear(base)

    @classmethod
    def from_linear(cls, base: LogisticModel) -> StepValueModel:
        """Rebind a core model with the PRM layout as a StepValueModel."""
        if base.kind != KIND or tuple(base.feature_names) != PRM_FEATURE_NAMES:
            raise CheckpointError(f"not a PRM model (kind {base.kind!r})")
        return cls(
            weights=base.weights,
            bias=base.bias,
            feature_mean=base.feature_mean,
            feature_scale=base.feature_scale,
            metadata=base.metadata,
        )


__all__ = ["KIND", "SCHEMA", "StepValueModel"]
