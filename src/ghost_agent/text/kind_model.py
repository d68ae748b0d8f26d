"""The request-kind model's checkpoint: two logistic heads, P(code) and P(number), over binary features
(`text.request_kind.features`), read by `text.sparse_model`.

The weights come from `scripts/train_request_kind.py`, which writes the checkpoint `text/data/request_kind_model.json`
(package data). It is read once per process; a missing, unreadable or malformed one, or one trained on other
features (`features_version`), is logged as a warning and `default_model` returns None: the caller then decides by
its regex rules; a request is never failed over the model.

Checkpoint (schema `ghost.request_kind.v1`): `{"schema", "features_version", "heads": {"code": {"bias",
"threshold"}, "number": {...}}, "weights": {feature: [code weight, number weight]}, "training": {...}}`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ghost_agent.text import sparse_model
from ghost_agent.text.sparse_model import CheckpointError

SCHEMA = "ghost.request_kind.v1"
HEADS = ("code", "number")
CHECKPOINT: Traversable | Path = resources.files("ghost_agent").joinpath("text", "data", "request_kind_model.json")


@dataclass(frozen=True)
class KindModel:
    """The two heads over one vocabulary (`model`), with their thresholds by name."""

    model: sparse_model.SparseModel

    @property
    def weights(self) -> Any:
        return self.model.weights

    @property
    def code_threshold(self) -> float:
        return self.model.thresholds[0]

    @property
    def number_threshold(self) -> float:
        return self.model.thresholds[1]

    @property
    def features_version(self) -> int:
        return self.model.features_version

    def probabilities(self, features: Iterable[str]) -> tuple[float, float]:
        """(P(code), P(number)) for a request with these features (unknown ones weigh nothing)."""
        p_code, p_number = self.model.probabilities(features)
        return p_code, p_number


def from_dict(data: Any) -> KindModel:
    """A parsed checkpoint validated into a KindModel; CheckpointError saying what is wrong."""
    return KindModel(sparse_model.from_dict(data, schema=SCHEMA, heads=HEADS))


def load(path: Traversable | Path, features_version: int) -> KindModel | None:
    """The checkpoint at `path`, or None (with a warning naming the reason) when it cannot be used."""
    model = sparse_model.load(path, schema=SCHEMA, heads=HEADS, features_version=features_version,
                              event="request_kind_model_unusable", retrain="scripts/train_request_kind.py",
                              fallback="regex rules")
    return None if model is None else KindModel(model)


@cache
def default_model(features_version: int) -> KindModel | None:
    """The packaged checkpoint, read once per process (None: the regex rules decide)."""
    return load(CHECKPOINT, features_version)


__all__ = ["CHECKPOINT", "HEADS", "SCHEMA", "CheckpointError", "KindModel", "default_model", "from_dict", "load"]
