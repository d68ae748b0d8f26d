"""RouterModel: the router's logistic regression over `ROUTER_FEATURE_NAMES` (checkpoint `ghost.router.logreg.v1`).

A thin binding of the shared core (`ghost_agent.learned.bound_model.BoundModel`) to the router's kind and frozen feature
layout. It predicts P(this request needs the full agent): 1 = tools or the agent loop were needed, 0 = one
upstream call (the fast path) was enough. The PRM's StepValueModel is the same core bound to its own features,
and a checkpoint of one kind never loads as the other (the schema tags differ).
"""

from __future__ import annotations

from typing import Any

from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.linear import schema_for
from ghost_agent.router.features import ROUTER_FEATURE_NAMES, router_features

KIND = "router"
SCHEMA = schema_for(KIND)


class RouterModel(BoundModel):
    """P(needs the full agent | request shape) as a logistic regression."""

    KIND = KIND
    FEATURE_NAMES = ROUTER_FEATURE_NAMES
    TITLE = "router"

    def predict_text(self, text: Any, n_messages: Any = 1) -> float:
        """P(needs the agent) for one request text and conversation length, features extracted on the way."""
        return self.predict_one(router_features(text, n_messages))


def is_router_model(model: Any) -> bool:
    """True for a fitted core model with the router's kind and exact feature layout (what `Router` accepts)."""
    return RouterModel.accepts(model)


__all__ = ["KIND", "SCHEMA", "RouterModel", "is_router_model"]
