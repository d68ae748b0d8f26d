"""The verifier -> reward adapter (seed 002): the eval harness IS the reward model.

A deterministic verifier (`eval/verifiers.py`: `(predicted, expected, **kw) -> float`) becomes a
`Reward(success, failure_class, auxiliary)` tuple: the pass bit, a categorical `FailureLabel` that densifies the
signal, and the raw score plus context. `group_advantage` is GRPO's critic-free baseline over a group of
rollouts. Pure stdlib; no model is called here.
"""

from __future__ import annotations

import inspect
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ghost_agent.jsonsafe import JSON


class RewardError(ValueError):
    """A caller mistake: a non-callable verifier, a bad threshold, a rollout without a prediction, a malformed
    stored reward. A verifier that raises while scoring is NOT this error - it becomes a CRASH reward."""


class FailureLabel(str, Enum):
    """Why a rollout got the reward it got - one vocabulary for eval results and learning loops.

    | label           | meaning                                                                 | informational |
    |-----------------|-------------------------------------------------------------------------|---------------|
    | KEEP            | passed: score >= the pass threshold                                     | yes           |
    | DISCARD         | scored miss: the verifier graded the answer and it was wrong (score 0)  | yes           |
    | PARTIAL         | scored miss with partial credit (0 < score < threshold)                 | yes           |
    | REFUSAL         | miss where the reply refuses the task ("I can't help with that")        | yes           |
    | FORMAT_ERROR    | miss where the verifier found nothing to grade (no number, no letter)   | yes           |
    | EMPTY           | miss with an empty / whitespace-only reply                              | yes           |
    | TRUNCATED       | miss where the reply was cut at the token limit (finish_reason=length)  | yes           |
    | CRASH           | the verifier (or the sandbox under it) raised; the task may be broken   | no            |
    | TIMEOUT         | no reply within the time limit                                          | no            |
    | TRANSPORT_ERROR | the reply never arrived: connection refused, HTTP error, bad payload    | no            |

    The rule for `is_informational`: a label is informational when it is a judgement of a reply the policy
    actually produced, so it says something about the policy and may shape learning. CRASH, TIMEOUT and
    TRANSPORT_ERROR describe the machinery (a broken verifier or task, a slow or unreachable daemon): their
    zero reward is noise, and learning loops should drop such rollouts rather than push the policy away from
    them. Misses are labelled in the order EMPTY, REFUSAL, TRUNCATED, FORMAT_ERROR, PARTIAL, DISCARD.
    """

    KEEP = "keep"
    DISCARD = "discard"
    PARTIAL = "partial"
    REFUSAL = "refusal"
    FORMAT_ERROR = "format_error"
    EMPTY = "empty"
    TRUNCATED = "truncated"
    CRASH = "crash"
    TIMEOUT = "timeout"
    TRANSPORT_ERROR = "transport_error"

    @property
    def is_informational(self) -> bool:
        """True when the label judges the policy's own output (see the class table), False for infra noise."""
        return self not in _NOISE


_NOISE = frozenset({FailureLabel.CRASH, FailureLabel.TIMEOUT, FailureLabel.TRANSPORT_ERROR})


def _error_text(error: BaseException | str) -> str:
    return error if isinstance(error, str) else f"{type(error).__name__}: {error}"


@dataclass(frozen=True)
class Reward:
    """The reward tuple. `success` is True exactly when `failure_class` is KEEP (RewardError otherwise).

    `auxiliary` carries the densifying signal: `score` (the verifier's raw score), `verifier`, `threshold`,
    `refusal`, `error` (CRASH / TRANSPORT_ERROR), `timeout_s` (TIMEOUT) - anything JSON-ready.
    """

    success: bool
    failure_class: FailureLabel
    auxiliary: JSON = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.failure_class, FailureLabel):
            raise RewardError(f"failure_class must be a FailureLabel, got {self.failure_class!r}")
        if bool(self.success) != (self.failure_class is FailureLabel.KEEP):
            raise RewardError(f"success={self.success} contradicts failure_class={self.failure_class.name}")

    @property
    def scalar(self) -> float:
        """The value `group_advantage` standardizes: the verifier's score when there is one (partial credit),
        else 1.0 for a pass and 0.0 for anything else."""
        score = self.auxiliary.get("score")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
            return float(score)
        return 1.0 if self.success else 0.0

    @property
    def is_informational(self) -> bool:
        """Whether this reward says something about the policy (mirrors the label)."""
        return self.failure_class.is_informational

    def to_dict(self) -> JSON:
        """`{success, failure_class, auxiliary, scalar}` (scalar is derived; `from_dict` ignores it)."""
        return {
            "success": self.success,
            "failure_class": self.failure_class.value,
            "auxiliary": dict(self.auxiliary),
            "scalar": self.scalar,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reward:
        """Parse `to_dict()` output; RewardError for anything that is not one."""
        try:
            label = FailureLabel(data["failure_class"])
            return cls(bool(data["success"]), label, dict(data.get("auxiliary") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RewardError):
                raise
            raise RewardError(f"not a reward: {data!r} ({exc})") from None

    @classmethod
    def timeout(cls, detail: float | str | None = None, **auxiliary: Any) -> Reward:
        """A TIMEOUT reward (built by the runner that gave up waiting): `detail` is the limit in seconds
        (auxiliary `timeout_s`) or a message (auxiliary `error`)."""
        aux: JSON = {}
        if isinstance(detail, str):
            aux["error"] = detail
        elif detail is not None:
            aux["timeout_s"] = float(detail)
        return cls(False, FailureLabel.TIMEOUT, {**aux, **auxiliary})

    @classmethod
    def crash(cls, error: BaseException | str, **auxiliary: Any) -> Reward:
        """A CRASH reward carrying the error text."""
        return cls(False, FailureLabel.CRASH, {"error": _error_text(error), **auxiliary})

    @classmethod
    def transport_error(cls, error: BaseException | str, **auxiliary: Any) -> Reward:
        """A TRANSPORT_ERROR reward (the reply never arrived)."""
        return cls(False, FailureLabel.TRANSPORT_ERROR, {"error": _error_text(error), **auxiliary})


_MISSING = object()


def _field(rollout: Any, name: str, default: Any = None) -> Any:
    if isinstance(rollout, Mapping):
        return rollout.get(name, default)
    return getattr(rollout, name, default)


def _accepted(fn: Callable[..., Any], skip: int) -> tuple[frozenset[str], bool] | None:
    """(keyword names `fn` accepts beyond its first `skip` positional parameters, takes **kwargs);
    None when the signature cannot be inspected."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    taken = {p.name for p in positional[:skip]}
    names = frozenset(p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                           inspect.Parameter.KEYWORD_ONLY) and p.name not in taken)
    return names, var_kw


def _filter(kwargs: Mapping[str, Any], accepted: tuple[frozenset[str], bool] | None) -> JSON:
    if accepted is None or accepted[1]:
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in accepted[0]}


class RewardAdapter:
    """Wraps one verifier so a rollout becomes a `Reward`.

    `verifier(predicted, expected, **kw) -> float`; `pass_threshold` in (0, 1] is the score at/above which a
    rollout is a KEEP (1.0 for binary verifiers); `scorer_kwargs` go to every call, filtered to the keyword
    parameters the verifier accepts (all of them when it takes **kwargs), so one task definition can carry
    options for several verifiers. `detect_refusal` labels a miss REFUSAL when `is_refusal` says the reply
    refuses. A verifier exposing `extract_answer(predicted, **kw)` that returns None on a miss gets FORMAT_ERROR.
    """

    def __init__(
        self,
        verifier: Callable[..., Any],
        pass_threshold: float = 1.0,
        scorer_kwargs: Mapping[str, Any] | None = None,
        *,
        detect_refusal: bool = True,
    ) -> None:
        if not callable(verifier):
            raise RewardError(f"verifier must be callable, got {verifier!r}")
        if isinstance(pass_threshold, bool) or not isinstance(pass_threshold, (int, float)):
            raise RewardError(f"pass_threshold must be a number, got {pass_threshold!r}")
        if not (0.0 < pass_threshold <= 1.0):
            raise RewardError(f"pass_threshold must be in (0, 1], got {pass_threshold!r}")
        if scorer_kwargs is not None and not isinstance(scorer_kwargs, Mapping):
            raise RewardError(f"scorer_kwargs must be a mapping, got {scorer_kwargs!r}")
        self.verifier = verifier
        self.pass_threshold = float(pass_threshold)
        self.detect_refusal = detect_refusal
        self.name = str(getattr(verifier, "__name__", None) or getattr(getattr(verifier, "func", None), "__name__",
                                                                       None) or type(verifier).__name__)
        self._accepts = _accepted(verifier, skip=2)
        self.scorer_kwargs: JSON = _filter(scorer_kwargs or {}, self._accepts)
        self.dropped_kwargs: tuple[str, ...] = tuple(sorted(set(scorer_kwargs or {}) - set(self.scorer_kwargs)))
        extract = getattr(verifier, "extract_answer", None)
        self._extract: Callable[..., Any] | None = extract if callable(extract) else None
        self._extract_accepts = _accepted(self._extract, skip=1) if self._extract is not None else None

    def score(self, rollout: Any) -> Reward:
        """The reward for one rollout: a mapping or object with `predicted` (str) and optionally `expected`,
        `kwargs` (per-rollout verifier kwargs, overriding `scorer_kwargs`) and `finish_reason`.

        Never raises for a verifier failure (that is a CRASH reward); RewardError for a rollout without a
        string prediction. Blocking when the verifier is (code_tests): call from a thread on an event loop.
        """
        predicted = _field(rollout, "predicted", _MISSING)
        if predicted is _MISSING or predicted is None:
            raise RewardError(f"rollout has no prediction: {rollout!r}"[:300])
        if not isinstance(predicted, str):
            raise RewardError(f"rollout prediction must be a string, got {type(predicted).__name__}")
        expected = _field(rollout, "expected")
        extra = _field(rollout, "kwargs") or {}
        if not isinstance(extra, Mapping):
            raise RewardError(f"rollout kwargs must be a mapping, got {extra!r}")
        kwargs = {**self.scorer_kwargs, **_filter(extra, self._accepts)}
        aux: JSON = {"verifier": self.name, "threshold": self.pass_threshold}
        try:
            raw = self.verifier(predicted, expected, **kwargs)
            if isinstance(raw, bool):
                raw = float(raw)
            if not isinstance(raw, (int, float)) or not math.isfinite(raw):
                raise TypeError(f"verifier returned {raw!r}, not a finite number")
        except Exception as exc:  # a broken verifier or task must not sink the group (seed 002)
            return Reward.crash(exc, **aux)
        score = float(raw)
        aux["score"] = score
        if score >= self.pass_threshold:
            return Reward(True, FailureLabel.KEEP, aux)
        return Reward(False, self._miss_label(predicted, score, kwargs, _field(rollout, "finish_reason"), aux), aux)

    def _miss_label(self, predicted: str, score: float, kwargs: JSON, finish_reason: Any, aux: JSON) -> FailureLabel:
        if not predicted.strip():
            return FailureLabel.EMPTY
        if self.detect_refusal:
            from ghost_agent.text.refusal import is_refusal

            if is_refusal(predicted) >= 1.0:
                aux["refusal"] = True
                return FailureLabel.REFUSAL
        if finish_reason == "length":
            return FailureLabel.TRUNCATED
        if self._extract is not None:
            try:
                answer = self._extract(predicted, **_filter(kwargs, self._extract_accepts))
            except Exception:  # the extractor is advisory; the score already stands
                answer = _MISSING
            if answer is None:
                return FailureLabel.FORMAT_ERROR
        return FailureLabel.PARTIAL if score > 0.0 else FailureLabel.DISCARD

    def score_group(self, rollouts: Iterable[Any]) -> list[Reward]:
        """`score` over a rollout bundle, in order (one crashing rollout is one CRASH reward)."""
        return [self.score(r) for r in rollouts]

    def __repr__(self) -> str:
        return f"RewardAdapter({self.name}, pass_threshold={self.pass_threshold}, kwargs={sorted(self.scorer_kwargs)})"


def group_advantage(
    rewards: Sequence[Reward | float], *, normalize_std: bool = True, eps: float = 1e-8
) -> list[float]:
    """GRPO's value-network-free advantages for one group of rollouts.

    Each reward's scalar minus the group mean, divided by (population std + eps) when `normalize_std`. A
    degenerate group (every scalar equal, or a single rollout) yields all zeros - no spurious gradient. Empty in,
    empty out; bools count as 1.0 / 0.0. RewardError for a non-finite scalar or a negative eps. Callers that
    train should drop non-informational rewards (CRASH, TIMEOUT, TRANSPORT_ERROR) from the group first.
    """
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise RewardError(f"eps must be a finite number >= 0, got {eps!r}")
    values: list[float] = []
    for r in rewards:
        value = r.scalar if isinstance(r, Reward) else r
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RewardError(f"rewards must be Rewards or finite numbers, got {r!r}")
        values.append(float(value))
    if not values or min(values) == max(values):
        return [0.0] * len(values)
    mean = math.fsum(values) / len(values)
    centered = [v - mean for v in values]
    if not normalize_std:
        return centered
    spread = statistics.pstdev(values, mu=mean) + eps
    if spread == 0.0:
        return [0.0] * len(values)
    return [c / spread for c in centered]


__all__ = ["FailureLabel", "Reward", "RewardAdapter", "RewardError", "group_advantage"]
