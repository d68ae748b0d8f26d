"""Self-consistency: vote over N sampled answers to one prompt and turn the vote into pass/fail labels.

Sampling the same prompt N times and taking the most common answer is a validator-free quality signal:
samples that agree with a clear majority are labelled PASSED, the others FAILED, and (failed, passed) pairs
feed preference training. Answers are compared after `normalize_answer`; an empty answer is an abstention
(it counts towards N but can never be the majority).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation

from ghost_agent.jsonsafe import JSON
from ghost_agent.trajectories.record import Outcome, Trajectory

AGREEMENT_THRESHOLD = 0.6  # share of samples on the majority answer before we trust it as a label
MIN_SAMPLES_FOR_MARKING = 3  # two agreeing samples are too weak a vote to label trajectories
EXTRA_KEY = "self_consistency"  # where the vote is recorded in `Trajectory.extra`
REASON_PREFIX = "self_consistency: "

_WHITESPACE_RE = re.compile(r"\s+")
_TRAILING_PUNCT = ".,;:!?"
# A plain decimal number, optionally signed, with an exponent, or with comma thousands separators.
_NUMBER_RE = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:e[+-]?\d+)?")
_MAX_PLAIN_EXPONENT = 30  # beyond this a key is written in E-notation, so "1e999999" stays a short string


@dataclass(frozen=True)
class Sample:
    """One sampled answer, optionally tied to the trajectory that produced it."""

    answer: str
    trajectory_id: str | None = None


@dataclass(frozen=True)
class ConsistencyResult:
    """The vote over N samples.

    `normalized` holds each sample's comparison key, in input order ("" for an abstention). `counts` maps
    each non-empty key to its number of samples, in first-seen order. `majority` is the unique most common
    key, or None when the top is tied, or nothing was answered. `agreement` is the share of ALL samples
    (abstentions included) that gave the most common key - reported even on a tie - and 0.0 for no samples.
    `numeric` is True when the keys were compared as numbers.
    """

    majority: str | None
    agreement: float
    counts: dict[str, int] = field(default_factory=dict)
    normalized: tuple[str, ...] = ()
    numeric: bool = False

    @property
    def n(self) -> int:
        """How many samples were voted on."""
        return len(self.normalized)

    def agrees(self, index: int) -> bool:
        """True when sample `index` gave the majority answer (always False without a majority)."""
        return self.majority is not None and self.normalized[index] == self.majority


def normalize_answer(answer: object) -> str:
    """The text comparison key: stripped, whitespace collapsed to one space, lowercased, trailing .,;:!? dropped.

    None becomes "" (an abstention); any other non-string is compared by its `str()`.
    """
    if answer is None:
        return ""
    text = _WHITESPACE_RE.sub(" ", str(answer)).strip().lower()
    return text.rstrip(_TRAILING_PUNCT).rstrip()


def numeric_key(text: str) -> str | None:
    """A canonical form of a normalized answer that is a finite number ("42", "42.0", "4.2e1" → "42"), else None.

    Decimal rather than float, so distinct long numbers never collapse into one key.
    """
    if not text or _NUMBER_RE.fullmatch(text) is None or not any(c.isdigit() for c in text):
        return None
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    if value == 0:
        return "0"  # "-0", "0.0" and "0e5" are all zero
    # normalize() rounds to the context precision; a context as wide as the number keeps it exact.
    digits = len(value.as_tuple().digits)
    canonical = value.normalize(Context(prec=digits, Emax=MAX_EMAX, Emin=MIN_EMIN))
    exponent = canonical.as_tuple().exponent
    if isinstance(exponent, int) and abs(exponent) <= _MAX_PLAIN_EXPONENT:
        return format(canonical, "f")
    return str(canonical)


def vote(samples: Sequence[str | Sample | None]) -> ConsistencyResult:
    """Vote over `samples` (plain answers or `Sample`s).

    Keys are `normalize_answer` texts; when every non-empty key is a number, they are compared numerically
    instead (so "42" and "42.0" agree). A mix of numbers and words is compared as text.
    """
    keys = [normalize_answer(s.answer if isinstance(s, Sample) else s) for s in samples]
    answered = [k for k in keys if k]
    numbers = [numeric_key(k) for k in answered]
    numeric = bool(answered) and all(n is not None for n in numbers)
    if numeric:
        as_number = {k: n for k, n in zip(answered, numbers, strict=True) if n is not None}
        keys = [as_number.get(k, "") for k in keys]
    counts = Counter(k for k in keys if k)
    ordered = {k: counts[k] for k in dict.fromkeys(k for k in keys if k)}
    if not ordered:
        return ConsistencyResult(None, 0.0, {}, tuple(keys), numeric)
    ranked = counts.most_common(2)
    top = ranked[0][1]
    majority = ranked[0][0] if len(ranked) == 1 or ranked[1][1] < top else None
    return ConsistencyResult(majority, top / len(keys), ordered, tuple(keys), numeric)


def pairwise_pass_fail(
    samples: Sequence[str | Sample | None],
    *,
    min_agreement: float = 0.0,
) -> list[tuple[Sample, Sample]]:
    """Every (failed, passed) pair: each non-majority sample with each majority sample.

    Exactly: when the vote has a majority and its agreement is at least `min_agreement`, the result is the
    cross product of the samples whose key differs from the majority (abstentions included) with the
    samples on the majority, failed-major in input order. No majority (empty input, nothing answered, tied
    top), all samples agreeing, or agreement below `min_agreement` → no pairs. Plain strings come back
    wrapped as `Sample(answer)`; None as `Sample("")`.
    """
    wrapped = [s if isinstance(s, Sample) else Sample("" if s is None else str(s)) for s in samples]
    result = vote(wrapped)
    if result.majority is None or result.agreement < min_agreement:
        return []
    passed = [s for i, s in enumerate(wrapped) if result.agrees(i)]
    failed = [s for i, s in enumerate(wrapped) if not result.agrees(i)]
    return [(f, p) for f in failed for p in passed]


def mark_trajectories_by_agreement(
    trajectories: Sequence[Trajectory],
    *,
    threshold: float = AGREEMENT_THRESHOLD,
    answer_of: Callable[[Trajectory], str] | None = None,
) -> ConsistencyResult:
    """Vote over the trajectories' answers and label UNKNOWN ones in place; returns the vote.

    `answer_of` extracts the answer (default: `final_response`; pass an extractor for long free-text
    replies). Labels are written only when there are at least `MIN_SAMPLES_FOR_MARKING` trajectories, a
    majority, and agreement ≥ `threshold`: majority trajectories become PASSED, the rest FAILED with a
    `failure_reason`. A trajectory that already has PASSED/FAILED keeps it - a validator beats a vote.
    Every trajectory with an UNKNOWN outcome gets `extra["self_consistency"]` describing the vote.
    """
    extract = answer_of if answer_of is not None else (lambda t: t.final_response)
    result = vote([extract(t) for t in trajectories])
    decisive = (
        len(trajectories) >= MIN_SAMPLES_FOR_MARKING and result.majority is not None and result.agreement >= threshold
    )
    record: JSON = {
        "majority": result.majority,
        "agreement": result.agreement,
        "n": result.n,
        "labelled": decisive,
    }
    for i, traj in enumerate(trajectories):
        if Outcome.parse(traj.outcome) is not Outcome.UNKNOWN:
            continue
        traj.extra[EXTRA_KEY] = dict(record)
        if not decisive:
            continue
        if result.agrees(i):
            traj.outcome = Outcome.PASSED
        else:
            traj.outcome = Outcome.FAILED
            traj.failure_reason = (
                f"{REASON_PREFIX}answer {result.normalized[i]!r} disagrees with majority "
                f"{result.majority!r} (agreement {result.agreement:.2f})"
            )
    return result
