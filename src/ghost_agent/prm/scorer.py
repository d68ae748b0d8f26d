"""PRMScorer: the production face of the PRM — score candidates, report uncertainty, hot-swap the model.

Fail-safe by construction: with no model every candidate scores a neutral 0.5 (so MCTS ties and falls back
to LLM simulation), every score is clamped to [0, 1], and `uncertainty` never raises. `set_model` swaps the
model reference in one assignment; `score` reads the reference once per call, so a concurrent swap gives
each call either the old model or the new one, never a mix (no lock on the hot path).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.linear import CheckpointError
from ghost_agent.logging import get_logger
from ghost_agent.prm.features import extract_batch_features, extract_step_features
from ghost_agent.prm.model import StepValueModel

log = get_logger("prm.scorer")

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


class PRMScorer:
    """Scores `(state, action)` in [0, 1] with the loaded StepValueModel, or 0.5 without one."""

    def __init__(self, model: StepValueModel | None = None, *, source: str | None = None) -> None:
        self._model = model if model is not None and model.is_fitted else None
        self.source = source  # where the model came from (a path, "trainer"), for logs and /health
        self.swaps = 0

    @property
    def model(self) -> StepValueModel | None:
        """The live model (None = neutral scorer)."""
        return self._model

    @property
    def has_model(self) -> bool:
        """True when a fitted model is loaded (the second of MCTS's three fast-path conditions)."""
        return self._model is not None

    @property
    def model_id(self) -> str | None:
        """The live model's content id, or None."""
        model = self._model
        return None if model is None else model.model_id

    @classmethod
    def load(cls, path: Path) -> PRMScorer:
        """A scorer with the checkpoint at `path` loaded (CheckpointError if it cannot be used)."""
        model = StepValueModel.load(Path(path))
        log.info("prm_loaded", path=str(path), model_id=model.model_id, trained_at=model.metadata.get("trained_at"))
        return cls(model, source=str(path))

    @classmethod
    def from_setting(cls, path: str | Path | None) -> PRMScorer:
        """The daemon's startup rule: no path → neutral; missing or unusable file → warning, neutral."""
        if not path:
            return cls()
        p = Path(path).expanduser()
        if not p.exists():
            log.warning("prm_model_missing", path=str(p), action="using the neutral scorer (0.5 for everything)")
            return cls()
        try:
            return cls.load(p)
        except CheckpointError as exc:
            log.warning("prm_model_unusable", path=str(p), error=str(exc), action="using the neutral scorer")
            return cls()

    def set_model(self, model: StepValueModel | None, *, source: str | None = None) -> None:
        """Hot-swap the live model (None → neutral). The very next `score` uses it."""
        if model is not None and not model.is_fitted:
            raise ValueError("cannot swap in an unfitted model")
        previous = self.model_id
        self._model = model
        self.source = source
        self.swaps += 1
        log.info("prm_swapped", previous=previous, model_id=self.model_id, source=source)

    def score(self, state: Any, action: Any) -> float:
        """P(success) of taking `action` in `state`, clamped to [0, 1]; 0.5 without a model."""
        model = self._model  # read once: a concurrent set_model cannot change it under us
        if model is None:
            return NEUTRAL
        return clamp_unit(model.predict_one(extract_step_features(state, action)))

    def score_batch(self, state: Any, actions: Iterable[Any]) -> list[float]:
        """`score` for many candidates in one state (one vectorized predict)."""
        model = self._model
        actions = list(actions)
        if model is None:
            return [NEUTRAL] * len(actions)
        if not actions:
            return []
        rows = np.asarray(extract_batch_features(state, actions), dtype=np.float64)
        return [clamp_unit(p) for p in model.predict_proba(rows).tolist()]

    def score_pairs(self, pairs: Iterable[tuple[Any, Any]]) -> list[float]:
        """`score` for `(state, action)` pairs with different states (one vectorized predict)."""
        model = self._model
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
            log.warning("prm_uncertainty_error", error=repr(exc))
            return 1.0
        return u if math.isfinite(u) else 1.0


__all__ = ["NEUTRAL", "PRMScorer", "clamp_unit"]
