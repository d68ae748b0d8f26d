"""RouterModel: the router's logistic regression over `ROUTER_FEATURE_NAMES` (checkpoint `ghost.router.logreg.v1`).

A thin binding of the shared core (`ghost_agent.linear`) to the router's kind and frozen feature layout. It
predicts P(this request needs the full agent): 1 = tools or the agent loop were needed, 0 = one upstream
call (the fast path) was enough. The PRM's StepValueModel is the same core bound to its own features, and a
checkpoint of one kind never loads as the other (the schema tags differ).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.linear import CheckpointError, FitStats, LogisticModel, schema_for
from ghost_agent.router.features import ROUTER_FEATURE_NAMES, router_features

KIND = "router"
SCHEMA = schema_for(KIND)


class RouterModel(LogisticModel):
    """P(needs the full agent | request shape) as a logistic regression."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("kind", KIND)
        kwargs.setdefault("feature_names", ROUTER_FEATURE_NAMES)
        super().__init__(**kwargs)

    def fit_rows(
        self, rows: Sequence[Sequence[float]], labels: Sequence[float], weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> FitStats:
        """`fit` on feature rows already extracted with `router_features`."""
        return self.fit(np.asarray(rows, dtype=np.float64), labels, weights, **kwargs)

    def predict_text(self, text: Any, n_messages: Any = 1) -> float:
        """P(needs the agent) for one request text and conversation length, features extracted on the way."""
        return self.predict_one(router_features(text, n_messages))

    @classmethod
    def load(cls, path: Path, *, kind: str = KIND, feature_names: Sequence[str] = ROUTER_FEATURE_NAMES) -> Any:
        """Load a router checkpoint; CheckpointError on schema or feature-layout drift, bad JSON, bad weights."""
        base = LogisticModel.load(path, kind=kind, feature_names=feature_names)
        return cls.from_linear(base)

    @classmethod
    def from_linear(cls, base: LogisticModel) -> RouterModel:
        """Rebind a core model with the router layout as a RouterModel (CheckpointError for any other model)."""
        if base.kind != KIND or tuple(base.feature_names) != ROUTER_FEATURE_NAMES:
            raise CheckpointError(f"not a router model (kind {base.kind!r})")
        return cls(
            weights=base.weights,
            bias=base.bias,
            feature_mean=base.feature_mean,
            feature_scale=base.feature_scale,
            metadata=base.metadata,
        )


def is_router_model(model: Any) -> bool:
    """True for a fitted core model with the router's kind and exact feature layout (what `Router` accepts)."""
    return (
        isinstance(model, LogisticModel)
        and model.is_fitted
        and model.kind == KIND
        and tuple(model.feature_names) == ROUTER_FEATURE_NAMES
    )


__all__ = ["KIND", "SCHEMA", "RouterModel", "is_router_model"]
