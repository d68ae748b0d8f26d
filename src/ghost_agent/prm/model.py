"""StepValueModel: the PRM's logistic regression over `PRM_FEATURE_NAMES` (checkpoint `ghost.prm.logreg.v1`).

A thin binding of the shared core (`ghost_agent.learned.bound_model.BoundModel`) to the PRM's kind and frozen feature
layout, plus the `(state, action)` convenience. The router's model is the same core bound to its own features.
"""

from __future__ import annotations

from typing import Any

from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.linear import schema_for
from ghost_agent.prm.features import PRM_FEATURE_NAMES, extract_step_features

KIND = "prm"
SCHEMA = schema_for(KIND)


class StepValueModel(BoundModel):
    """P(this step is on a path to success | state, action) as a logistic regression."""

    KIND = KIND
    FEATURE_NAMES = PRM_FEATURE_NAMES
    TITLE = "PRM"

    def predict_step(self, state: Any, action: Any) -> float:
        """P(success) for one `(state, action)`, features extracted on the way."""
        return self.predict_one(extract_step_features(state, action))


__all__ = ["KIND", "SCHEMA", "StepValueModel"]
