"""Small linear text classifiers shipped as package data: logistic heads over named binary features.

The request-kind model (`text/kind_model.py`) and the user-correction detector (`feedback/correction/`) are both
this: a request or message becomes a set of string features (word n-grams, cue hits, exchange facts), each head
sums the weights of the features present plus its bias, and a sigmoid gives its probability. The weights are
fitted offline by a training script (`scripts/sparse_fit.py` does the fitting) and read here in pure Python, once
per process, so a prediction costs microseconds and this module, in the lowest layer, imports nothing of
`learned/`.

Checkpoint (JSON): `{"schema", "features_version", "heads": {head: {"bias", "threshold"}},
"weights": {feature: [one weight per head, in the order of the caller's head names]}, "training": {...}}`.
A missing, unreadable or malformed checkpoint, or one trained on other features (`features_version`), is logged
as a warning and `load` returns None: the caller falls back to its rules; a request is never failed over a model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import structlog

_LOGIT_CLIP = 35.0

log = structlog.get_logger(component="text.sparse_model")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (the message says why)."""


@dataclass(frozen=True)
class SparseModel:
    """Logistic heads over binary features: per-feature weights (one per head), each head's bias and threshold."""

    heads: tuple[str, ...]
    weights: Mapping[str, tuple[float, ...]]
    biases: tuple[float, ...]
    thresholds: tuple[float, ...]
    features_version: int

    def probabilities(self, features: Iterable[str]) -> tuple[float, ...]:
        """Each head's probability for an input with these features (unknown features weigh nothing)."""
        z = list(self.biases)
        for name in set(features):
            w = self.weights.get(name)
            if w is not None:
                for i, v in enumerate(w):
                    z[i] += v
        return tuple(sigmoid(v) for v in z)

    def threshold(self, head: str) -> float:
        """The decision threshold of `head`."""
        return self.thresholds[self.heads.index(head)]

    def contributions(self, features: Iterable[str], head: str, top: int = 5) -> list[tuple[str, float]]:
        """The `top` features present that weigh most on `head` (by absolute weight), for logs."""
        i = self.heads.index(head)
        present = [(name, self.weights[name][i]) for name in set(features) if name in self.weights]
        present.sort(key=lambda kv: (-abs(kv[1]), kv[0]))
        return present[:top]


def from_dict(data: Any, *, schema: str, heads: tuple[str, ...]) -> SparseModel:
    """A parsed checkpoint validated into a SparseModel with these heads; CheckpointError saying what is wrong."""
    if not isinstance(data, dict):
        raise CheckpointError("not a JSON object")
    if data.get("schema") != schema:
        raise CheckpointError(f"schema {data.get('schema')!r} is not {schema!r}")
    version = data.get("features_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointError("no integer features_version")
    raw_heads = data.get("heads")
    if not isinstance(raw_heads, dict) or any(not isinstance(raw_heads.get(h), dict) for h in heads):
        raise CheckpointError(f"heads must hold {', '.join(heads)}")
    biases = tuple(_finite(raw_heads[h].get("bias"), f"heads.{h}.bias") for h in heads)
    thresholds = tuple(_finite(raw_heads[h].get("threshold"), f"heads.{h}.threshold") for h in heads)
    if not all(0.0 < t < 1.0 for t in thresholds):
        raise CheckpointError("a threshold is outside (0, 1)")
    raw = data.get("weights")
    if not isinstance(raw, dict) or not raw:
        raise CheckpointError("no weights")
    weights: dict[str, tuple[float, ...]] = {}
    for name, values in raw.items():
        if not isinstance(values, list) or len(values) != len(heads):
            raise CheckpointError(f"weights[{name!r}] does not hold one weight per head ({len(heads)})")
        weights[name] = tuple(_finite(v, name) for v in values)
    return SparseModel(heads=heads, weights=weights, biases=biases, thresholds=thresholds, features_version=version)


def load(path: Traversable | Path, *, schema: str, heads: tuple[str, ...], features_version: int, event: str,
         retrain: str, fallback: str = "rules") -> SparseModel | None:
    """The checkpoint at `path`, or None with a warning (`event`, naming the reason and the `fallback` the caller
    uses instead) when it cannot be used; `retrain` names the command that rebuilds it."""
    try:
        model = from_dict(json.loads(path.read_text(encoding="utf-8")), schema=schema, heads=heads)
        if model.features_version != features_version:
            raise CheckpointError(f"trained on features v{model.features_version}, this code makes "
                                  f"v{features_version}; retrain with {retrain}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError and CheckpointError included
        log.warning(event, path=str(path), error=str(exc)[:300], fallback=fallback)
        return None
    return model


def bucket(value: float, edges: Sequence[float]) -> str:
    """`value` as a feature-name bucket: `<=e` for the first edge it does not pass, else `>last` (`<=3`, `>0.9`)."""
    for edge in edges:
        if value <= edge:
            return f"<={edge:g}"
    return f">{edges[-1]:g}"


def sigmoid(z: float) -> float:
    """The logistic function with the logit clipped to ±35."""
    z = -_LOGIT_CLIP if z < -_LOGIT_CLIP else _LOGIT_CLIP if z > _LOGIT_CLIP else z
    return 1.0 / (1.0 + math.exp(-z))


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CheckpointError(f"{what} is not a finite number")
    return float(value)


__all__ = ["CheckpointError", "SparseModel", "bucket", "from_dict", "load", "sigmoid"]
