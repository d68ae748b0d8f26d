"""The router: request-shape features → logistic regression → a deterministic fast/agent decision (issue 4)."""

from ghost_agent.router.dispatch import Router, RouterDecision, RouterRequest
from ghost_agent.router.features import REQUEST_FEATURE_NAMES, ROUTER_FEATURE_NAMES, router_features
from ghost_agent.router.labels import iter_router_samples, router_label
from ghost_agent.router.model import RouterModel
from ghost_agent.router.trainer import RouterTrainer

__all__ = [
    "REQUEST_FEATURE_NAMES",
    "ROUTER_FEATURE_NAMES",
    "Router",
    "RouterDecision",
    "RouterModel",
    "RouterRequest",
    "RouterTrainer",
    "iter_router_samples",
    "router_features",
    "router_label",
]
