"""BoundModel: the shared logistic-regression core bound to one kind and one frozen feature layout.

The PRM (`prm.model.StepValueModel`) and the router (`router.model.RouterModel`) are the same `LogisticModel`;
each subclass only declares `KIND`, `FEATURE_NAMES` and a `TITLE` for messages, and adds its own
features-on-the-way conveniences. Loading, rebinding a core model and fitting on ready rows live here once, so
a checkpoint of one kind can never load as the other (the schema tags differ) in exactly one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from ghost_agent.learned.linear import CheckpointError, FitStats, LogisticModel


class BoundModel(LogisticModel):
    """A LogisticModel whose kind and feature names default to the subclass's `KIND` and `FEATURE_NAMES`."""

    KIND: ClassVar[str]
    FEATURE_NAMES: ClassVar[tuple[str, ...]]
    TITLE: ClassVar[str]  # how messages name the kind: "PRM", "router"

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("kind", self.KIND)
        kwargs.setdefault("feature_names", self.FEATURE_NAMES)
        super().__init__(**kwargs)

    def fit_rows(
        self, rows: Sequence[Sequence[float]], labels: Sequence[float], weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> FitStats:
        """`fit` on feature rows already extracted with this kind's feature function."""
        return self.fit(np.asarray(rows, dtype=np.float64), labels, weights, **kwargs)

    @classmethod
    def load(cls, path: Path, *, kind: str | None = None, feature_names: Sequence[str] | None = None) -> Self:
        """Load a checkpoint of this kind; CheckpointError on schema or feature-layout drift, bad JSON, bad weights."""
        base = LogisticModel.load(
            path,
            kind=cls.KIND if kind is None else kind,
            feature_names=cls.FEATURE_NAMES if feature_names is None else feature_names,
        )
        return cls.from_linear(base)

    @classmethod
    def from_linear(cls, base: LogisticModel) -> Self:
        """Rebind a core model with this kind's layout as this class (CheckpointError for any other model)."""
        if base.kind != cls.KIND or tuple(base.feature_names) != cls.FEATURE_NAMES:
            raise CheckpointError(f"not a {cls.TITLE} model (kind {base.kind!r})")
        return cls(
            weights=base.weights,
            bias=base.bias,
            feature_mean=base.feature_mean,
            feature_scale=base.feature_scale,
            metadata=base.metadata,
        )

    @classmethod
    def accepts(cls, model: Any) -> bool:
        """True for a fitted core model (of any class) with this kind and exact feature layout."""
        return (
            isinstance(model, LogisticModel)
            and model.is_fitted
            and model.kind == cls.KIND
            and tuple(model.feature_names) == cls.FEATURE_NAMES
        )


__all__ = ["BoundModel"]
