"""The correction model's checkpoint: one logistic head, P(correction), over `features.features`.

Fitted by `scripts/train_correction.py` on the labelled exchanges and shipped as package data
(`feedback/correction/data/correction_model.json`, schema `ghost.correction.v1`); read once per process by
`text.sparse_model`. A missing, unreadable or malformed checkpoint, or one trained on other features, is logged as
a warning and `default_model` returns None: the detector then decides by its explicit-verdict rules alone.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ghost_agent.feedback.correction.features import FEATURES_VERSION
from ghost_agent.text import sparse_model
from ghost_agent.text.sparse_model import SparseModel

SCHEMA = "ghost.correction.v1"
HEADS = ("correction",)
CHECKPOINT: Traversable | Path = resources.files("ghost_agent").joinpath(
    "feedback", "correction", "data", "correction_model.json"
)


def from_dict(data: Any) -> SparseModel:
    """A parsed checkpoint validated; CheckpointError saying what is wrong."""
    return sparse_model.from_dict(data, schema=SCHEMA, heads=HEADS)


@cache
def default_model() -> SparseModel | None:
    """The packaged checkpoint, read once per process (None: only the explicit-verdict rules decide)."""
    return sparse_model.load(CHECKPOINT, schema=SCHEMA, heads=HEADS, features_version=FEATURES_VERSION,
                             event="correction_model_unusable", retrain="python -m scripts.train_correction",
                             fallback="explicit-verdict rules")


__all__ = ["CHECKPOINT", "HEADS", "SCHEMA", "default_model", "from_dict"]
