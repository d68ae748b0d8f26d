"""The Process Reward Model: a per-step value estimator trained from the agent's own trajectories (seed 000)."""

from ghost_agent.prm.features import PRM_FEATURE_NAMES, ActionCandidate, PlanState, extract_step_features
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer

__all__ = [
    "PRM_FEATURE_NAMES",
    "ActionCandidate",
    "PRMScorer",
    "PlanState",
    "StepValueModel",
    "extract_step_features",
]
