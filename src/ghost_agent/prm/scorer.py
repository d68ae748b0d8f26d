"""PRMScorer: the production face of the PRM — score candidates, report uncertainty, hot-swap the model.

Fail-safe by construction: with no model every candidate scores a neutral 0.5 (so MCTS ties and falls back
to LLM simulation), every score is clamped to [0, 1], and `uncertainty` never raises. `set_model` swaps the
model reference in one assignment; `score` reads the reference once per call, so a concurrent swap gives
each call either the old model or the new one, never a mix (no lock on the hot path).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ghost_agent.learned.live_model import LiveModel
from ghost_agent.logging import get_logger
from ghost_agent.prm.features import extract_batch_features, extract_step_features
from ghost_agent.prm.model import StepValueModel

NEUTRAL = 0.5


def clamp_unit(value: Any) -> float:
    """Any score as a float in [0, 1]; NaN and non-numbers become the neutral 0.5."""
    try:
        f = float(value)
    except OverflowError:  # an int too big for a float is still clearly above 1 or below 0
        return 1.0 if value > 0 else 0.0
    except (TypeError, ValueError):
        return NEUTRAL
    if f != f:
        return NEUTRAL
    return 0.0 if f < 0.0 else 1.0 if f > 1.0 else f


class PRMScorer(LiveModel[StepValueModel]):
    """Scores `(state, action)` in [0, 1] with the loaded StepValueModel, or 0.5 without one.

    Loading, `from_setting`, `set_model` and the model/has_model/model_id/source/swaps attributes come from
    `LiveModel` (events `prm_loaded`, `prm_model_missing`, `prm_model_unusable`, `prm_swapped`).
    """

    MODEL = StepValueModel
    NO_MODEL = "using the neutral scorer (0.5 for everything)"
    log = get_logger("prm.scorer")

    def __init__(self, model: StepValueModel | None = None, *, source: str | None = None) -> None:
        # An unfitted model here is treated as none (neutral), where `set_model` refuses one: a scorer built
        # from whatever the caller has must still come up.
        super().__init__(model if model is not None and model.is_fitted else None, source=source)

    def score(self, state: Any, action: Any) -> float:
        """P(success) of taking `action` in `state`, clamped to [0, 1]; 0.5 without a model."""
        live = self._live  # read once: a concurrent set_model cannot change it under us
        if live is None:
            return NEUTRAL
        return clamp_unit(live[0].predict_one(extract_step_features(state, action)))

    def score_batch(self, state: Any, actions: Iterable[Any]) -> list[float]:
        """`score` for many candidates in one state (one vectorized predict)."""
        model = self.model  # read once, as in `score`
        actions = list(actions)
        if model is None:
            return [NEUTRAL] * len(actions)
        if not actions:
            return []
        rows = np.asarray(extract_batch_features(state, actions), dtype=np.float64)
        return [clamp_unit(p) for p in model.predict_proba(rows).tolist()]

    def score_pairs(self, pairs: Iterable[tuple[Any, Any]]) -> list[float]:
        """`score` for `(state, action)` pairs with different states (one vectorized predict)."""
        model = self.model  # read once, as in `score`
        pairs = list(pairs)
        if model is None:
            return [NEUTRAL] * len(pairs)
        if not pairs:
            return []
        rows = np.asarray([extract_step_features(s, a) for s, a in pairs], dtype=np.float64)
        return [clamp_unit(p) for p in model.predict_proba(rows).tolist()]

    def uncertainty(self, state: Any, action: Any) -> float:
        """`1 − 2·|p − 0.5|`: 0 at the rails, 1 at p = 0.5 (and without a model). Never raises; 1.0 on error."""
        try:
            p = self.score(state, action)
            u = 1.0 - 2.0 * abs(p - 0.5)
        except Exception as exc:  # exploration beats silently dropping the candidate
            self.log.warning("prm_uncertainty_error", error=repr(exc))
            return 1.0
        return u if math.isfinite(u) else 1.0


__all__ = ["NEUTRAL", "PRMScorer", "clamp_unit"]
