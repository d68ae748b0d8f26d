"""Outcome heuristics: promote a stuck chat turn from UNKNOWN to FAILED so the Reflector can learn from it.

Free-form chat has no validator, so chat trajectories are recorded as UNKNOWN and the Reflector (which only
reads FAILED) would never see them. Four mechanical signals mark a turn that was demonstrably stuck:

1. `abort_marker` - an `[ATTEMPT_ABORTED_*]` marker in `final_response` (an in-band guard already gave up);
2. `selector_thrash` - one browser selector used `SELECTOR_THRASH_THRESHOLD` or more times in the turn;
3. `repeated_tool_error` - one `(tool, normalized error)` pair seen `REPEATED_ERROR_THRESHOLD` or more times;
4. `sequence_aborted` - a step's result carries the browser `SEQUENCE ABORTED` banner.

The classifier is conservative on purpose: a false FAILED writes a bad lesson into the playbook, which costs
more than a missed one. Only UNKNOWN is ever promoted; PASSED and FAILED stand. Cross-turn signals (the same
misdiagnosis over several turns) need session state and are out of scope here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger
from ghost_agent.trajectories.record import Outcome, Trajectory

log = get_logger("outcome_heuristics")

SELECTOR_THRASH_THRESHOLD = 4  # uses of one selector in one turn; 3 is still plausible retrying
REPEATED_ERROR_THRESHOLD = 3  # identical (tool, error) pairs in one turn; one error is ordinary
EXTRA_KEY = "heuristics"  # where fired signals are recorded in `Trajectory.extra`
REASON_PREFIX = "heuristic: "
DETAIL_MAX_CHARS = 120  # error text quoted in a reason is clipped so reasons stay one readable line

ABORT_MARKER_RE = re.compile(r"\[ATTEMPT_ABORTED_[A-Z0-9_]+\]")
SEQUENCE_ABORTED_RE = re.compile(r"SEQUENCE ABORTED")
_ERROR_PREFIX_RE = re.compile(r"^error\s*:\s*")
_WHITESPACE_RE = re.compile(r"\s+")

SIGNAL_ABORT_MARKER = "abort_marker"
SIGNAL_SELECTOR_THRASH = "selector_thrash"
SIGNAL_REPEATED_TOOL_ERROR = "repeated_tool_error"
SIGNAL_SEQUENCE_ABORTED = "sequence_aborted"


@dataclass(frozen=True)
class HeuristicSignal:
    """One fired signal: its name, a short human-readable detail, and how many times it was seen."""

    name: str
    detail: str
    count: int = 1

    def to_dict(self) -> JSON:
        """A JSON-ready dict (the shape stored under `Trajectory.extra["heuristics"]["signals"]`)."""
        return {"name": self.name, "detail": self.detail, "count": self.count}


@dataclass(frozen=True)
class HeuristicVerdict:
    """The classifier's answer for one trajectory.

    `outcome` is what the trajectory's outcome should be after the heuristics: FAILED when a signal fired on
    an UNKNOWN trajectory (`promoted` is then True), otherwise the trajectory's current outcome. `signals`
    lists every signal that fired (also on PASSED/FAILED trajectories, for diagnostics); `reason` is the
    failure reason to record, or "" when nothing fired.
    """

    outcome: Outcome
    signals: tuple[HeuristicSignal, ...] = ()
    reason: str = ""
    promoted: bool = False

    @property
    def fired(self) -> bool:
        """True when at least one signal fired."""
        return bool(self.signals)

    @property
    def signal_names(self) -> tuple[str, ...]:
        """The names of the fired signals, in detection order."""
        return tuple(s.name for s in self.signals)


def classify_chat_outcome(traj: Trajectory) -> HeuristicVerdict:
    """Run the four signals over `traj` without modifying it.

    Tolerates malformed steps (None or non-dict `tool_args`, non-string errors, dict-shaped steps, missing
    fields): what cannot be read is skipped. May still raise on a trajectory that is not trajectory-shaped at
    all; `apply_chat_outcome_heuristics` is the never-raising entry point.
    """
    current = Outcome.parse(getattr(traj, "outcome", None))
    steps = list(getattr(traj, "steps", None) or [])
    signals = [
        *_abort_markers(getattr(traj, "final_response", None)),
        *_selector_thrash(steps),
        *_repeated_tool_errors(steps),
        *_sequence_aborted(steps),
    ]
    if not signals:
        return HeuristicVerdict(outcome=current)
    reason = REASON_PREFIX + "; ".join(f"{s.name} ({s.detail})" for s in signals)
    promoted = current is Outcome.UNKNOWN
    return HeuristicVerdict(
        outcome=Outcome.FAILED if promoted else current,
        signals=tuple(signals),
        reason=reason,
        promoted=promoted,
    )


def apply_chat_outcome_heuristics(traj: Trajectory) -> Trajectory:
    """Classify `traj` and, when a signal fires, record it in place; always returns `traj`.

    On promotion (UNKNOWN → FAILED) `outcome` and `failure_reason` are set. Whenever a signal fired,
    `extra["heuristics"]` records `{"signals": [...], "promoted": bool}`; a healthy turn is left untouched.
    Never raises: this runs on the turn's hot path, and a classification bug must not cost the user their
    reply, so any error is logged at debug and the trajectory is returned unchanged.
    """
    try:
        verdict = classify_chat_outcome(traj)
        if not verdict.fired:
            return traj
        extra = traj.extra
        if not isinstance(extra, dict):
            # Checked before any mutation so a failure leaves the trajectory exactly as it was.
            raise TypeError(f"trajectory extra is {type(extra).__name__}, not dict")
        record: JSON = {"signals": [s.to_dict() for s in verdict.signals], "promoted": verdict.promoted}
        if verdict.promoted:
            traj.outcome = Outcome.FAILED
            traj.failure_reason = verdict.reason
        extra[EXTRA_KEY] = record
        # Signal names only: details quote tool errors, which may hold user content the log must not carry.
        log.debug(
            "outcome_heuristics_fired",
            trajectory_id=_safe_id(traj),
            signals=list(verdict.signal_names),
            promoted=verdict.promoted,
        )
    except Exception as exc:  # broad on purpose: the contract is "never block the turn"
        try:
            log.debug("outcome_heuristics_error", trajectory_id=_safe_id(traj), error=repr(exc))
        except Exception:  # a failing log sink must not block the turn either
            pass
    return traj


def normalize_error(message: str) -> str:
    """The key two textually-similar errors share: whitespace squashed, lowercased, leading "error:" dropped."""
    text = _WHITESPACE_RE.sub(" ", message).strip().lower()
    return _ERROR_PREFIX_RE.sub("", text).strip()


def is_browser_tool(name: object) -> bool:
    """True for `browser` and its ops: `browser.<op>` or `browser_<op>` (function names may not contain dots)."""
    if not isinstance(name, str):
        return False
    name = name.strip().lower()
    return name == "browser" or name.startswith(("browser.", "browser_"))


# --- the four signals -------------------------------------------------------------------------------------


def _abort_markers(final_response: object) -> list[HeuristicSignal]:
    if not isinstance(final_response, str):
        return []
    found = ABORT_MARKER_RE.findall(final_response)
    if not found:
        return []
    distinct = list(dict.fromkeys(found))  # first-seen order, for a stable reason string
    return [HeuristicSignal(SIGNAL_ABORT_MARKER, ", ".join(distinct), len(found))]


def _selector_thrash(steps: Iterable[Any]) -> list[HeuristicSignal]:
    # Every use counts: an atomic op's own selector and each `interact` sub-action's selector. The incident
    # this catches fired the same click selector inside eight nested `interact` calls.
    counts: Counter[str] = Counter()
    for step in steps:
        if not is_browser_tool(_get(step, "tool_name")):
            continue
        args = _get(step, "tool_args")
        if not isinstance(args, Mapping):
            continue
        counts.update(_selectors(args))
    return [
        HeuristicSignal(SIGNAL_SELECTOR_THRASH, f"{selector!r} ×{n}", n)
        for selector, n in counts.items()
        if n >= SELECTOR_THRASH_THRESHOLD
    ]


def _selectors(args: Mapping[Any, Any]) -> list[str]:
    found = [_selector_of(args)]
    actions = args.get("actions")
    if isinstance(actions, list):
        found.extend(_selector_of(action) for action in actions if isinstance(action, Mapping))
    return [s for s in found if s]


def _selector_of(args: Mapping[Any, Any]) -> str:
    # CSS/XPath selectors are case-sensitive, so only surrounding whitespace is normalized.
    value = args.get("selector")
    return value.strip() if isinstance(value, str) else ""


def _repeated_tool_errors(steps: Iterable[Any]) -> list[HeuristicSignal]:
    counts: Counter[tuple[str, str]] = Counter()
    for step in steps:
        error = _get(step, "error")
        if not isinstance(error, str):
            continue
        key = normalize_error(error)
        if not key:
            continue
        tool = _get(step, "tool_name")
        counts[(tool if isinstance(tool, str) and tool else "?", key)] += 1
    return [
        HeuristicSignal(SIGNAL_REPEATED_TOOL_ERROR, f"{tool}: {_clip(error)!r} ×{n}", n)
        for (tool, error), n in counts.items()
        if n >= REPEATED_ERROR_THRESHOLD
    ]


def _sequence_aborted(steps: Iterable[Any]) -> list[HeuristicSignal]:
    hits = [
        _step_index(step, pos) for pos, step in enumerate(steps) if _has_sequence_abort(_get(step, "result_preview"))
    ]
    if not hits:
        return []
    where = ", ".join(str(i) for i in hits)
    return [HeuristicSignal(SIGNAL_SEQUENCE_ABORTED, f"step {where}", len(hits))]


def _has_sequence_abort(preview: object) -> bool:
    return isinstance(preview, str) and SEQUENCE_ABORTED_RE.search(preview) is not None


# --- helpers ----------------------------------------------------------------------------------------------


def _get(step: Any, name: str) -> Any:
    """A field of a `Step`, or of a dict-shaped step from a lenient caller; None when absent."""
    if isinstance(step, Mapping):
        return step.get(name)
    return getattr(step, name, None)


def _safe_id(traj: Any) -> str | None:
    try:
        value = getattr(traj, "id", None)
    except Exception:  # the object that broke classification may break here too
        return None
    return value if isinstance(value, str) else None


def _step_index(step: Any, position: int) -> int:
    i = _get(step, "i")
    return i if isinstance(i, int) else position


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_MAX_CHARS else text[: DETAIL_MAX_CHARS - 1] + "…"
