"""The request-kind model's checkpoint and its prediction: two logistic heads, P(code) and P(number), over binary
features (`text.request_kind.features`).

Prediction is a few lines of pure Python: the sum of the weights of the features present plus the bias, through
a sigmoid. The weights come from `scripts/train_request_kind.py`, which fits them with numpy and writes the
checkpoint `text/data/request_kind_model.json` (package data): this module, in the lowest layer, imports nothing
of `learned/`. The checkpoint is read once per process. A missing, unreadable or malformed one, or one trained on
other features (`features_version`), is logged as a warning and `default_model` returns None: the caller then
decides by its regex rules; a request is never failed over the model.

Checkpoint (JSON, schema `ghost.request_kind.v1`):
`{"schema", "features_version", "heads": {"code": {"bias", "threshold"}, "number": {...}},
  "weights": {feature: [code weight, number weight]}, "training": {...}}`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import structlog

SCHEMA = "ghost.request_kind.v1"
HEADS = ("code", "number")
CHECKPOINT: Traversable | Path = resources.files("ghost_agent").joinpath("text", "data", "request_kind_model.json")
_LOGIT_CLIP = 35.0

log = structlog.get_logger(component="text.kind_model")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (the message says why)."""


@dataclass(frozen=True)
class KindModel:
    """The two heads: per-feature weights `(code, number)`, each head's bias and decision threshold."""

    weights: Mapping[str, tuple[float, float]]
    code_bias: float
    number_bias: float
    code_threshold: float
    number_threshold: float
    features_version: int

    def probabilities(self, features: Iterable[str]) -> tuple[float, float]:
        """(P(code), P(number)) for a request with these features (unknown ones weigh nothing)."""
        z_code, z_number = self.code_bias, self.number_bias
        for name in set(features):
            w = self.weights.get(name)
            if w is not None:
                z_code += w[0]
                z_number += w[1]
        return _sigmoid(z_code), _sigmoid(z_number)


def from_dict(data: Any) -> KindModel:
    """A parsed checkpoint validated into a KindModel; CheckpointError saying what is wrong."""
    if not isinstance(data, dict):
        raise CheckpointError("not a JSON object")
    if data.get("schema") != SCHEMA:
        raise CheckpointError(f"schema {data.get('schema')!r} is not {SCHEMA!r}")
    version = data.get("features_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointError("no integer features_version")
    heads = data.get("heads")
    if not isinstance(heads, dict) or any(not isinstance(heads.get(h), dict) for h in HEADS):
        raise CheckpointError(f"heads must hold {', '.join(HEADS)}")
    numbers = {f"{h}.{k}": _finite(heads[h].get(k), f"heads.{h}.{k}") for h in HEADS for k in ("bias", "threshold")}
    if not all(0.0 < numbers[f"{h}.threshold"] < 1.0 for h in HEADS):
        raise CheckpointError("a threshold is outside (0, 1)")
    raw = data.get("weights")
    if not isinstance(raw, dict) or not raw:
        raise CheckpointError("no weights")
    weights: dict[str, tuple[float, float]] = {}
    for name, pair in raw.items():
        if not isinstance(pair, list) or len(pair) != len(HEADS):
            raise CheckpointError(f"weights[{name!r}] is not a [code, number] pair")
        weights[name] = (_finite(pair[0], name), _finite(pair[1], name))
    return KindModel(weights=weights, code_bias=numbers["code.bias"], number_bias=numbers["number.bias"],
                     code_threshold=numbers["code.threshold"], number_threshold=numbers["number.threshold"],
                     features_version=version)


def load(path: Traversable | Path, features_version: int) -> KindModel | None:
    """The checkpoint at `path`, or None (with a warning naming the reason) when it cannot be used."""
    try:
        model = from_dict(json.loads(path.read_text(encoding="utf-8")))
        if model.features_version != features_version:
            raise CheckpointError(f"trained on features v{model.features_version}, this code makes "
                                  f"v{features_version}; retrain with scripts/train_request_kind.py")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError and CheckpointError included
        log.warning("request_kind_model_unusable", path=str(path), error=str(exc)[:300],
                    fallback="regex rules")
        return None
    return model


@cache
def default_model(features_version: int) -> KindModel | None:
    """The packaged checkpoint, read once per process (None: the regex rules decide)."""
    return load(CHECKPOINT, features_version)


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CheckpointError(f"{what} is not a finite number")
    return float(value)


def _sigmoid(z: float) -> float:
    z = -_LOGIT_CLIP if z < -_LOGIT_CLIP else _LOGIT_CLIP if z > _LOGIT_CLIP else z
    return 1.0 / (1.0 + math.exp(-z))


__all__ = ["CHECKPOINT", "HEADS", "SCHEMA", "CheckpointError", "KindModel", "default_model", "from_dict", "load"]
