"""What MCTS hands back: the chosen action, every candidate's scores, and how they were obtained."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ghost_agent.prm.features import ActionCandidate

Provenance = Literal["prm", "llm_sim", "fallback", "single"]


class MCTSError(RuntimeError):
    """MCTS could not produce any candidate action (the model never proposed a usable one).

    `response` holds the start of the last unusable reply, for the caller's log or error message; `usage` the
    token usage the failed search spent (it is still the turn's cost).
    """

    def __init__(self, message: str, *, response: str = "", usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.response = response
        self.usage = dict(usage or {})


@dataclass
class CandidateRecord:
    """One candidate's evaluation.

    `score` is its own first-level value in [0, 1]; `child_score` the best one-step-deeper value when it was
    expanded (else None); `value` what it competed with: the backed-up `(score + γ·child) / (1 + γ)` when
    expanded, else `score`. `imagined_result` is the LLM simulation's predicted outcome (LLM path only);
    `note` says why a score is a default (an unparseable or failed simulation, a skipped expansion).
    """

    action: ActionCandidate
    score: float = 0.5
    child_score: float | None = None
    child_action: ActionCandidate | None = None
    value: float = 0.5
    imagined_result: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "action": self.action.to_dict(),
            "score": self.score,
            "child_score": self.child_score,
            "child_action": None if self.child_action is None else self.child_action.to_dict(),
            "value": self.value,
            "imagined_result": self.imagined_result,
            "note": self.note,
        }


@dataclass
class MCTSResult:
    """The selected action and the evidence behind it.

    `score` is the winner's `value` (in [0, 1]); `provenance` is `prm` (scored by the PRM), `llm_sim`
    (scored by LLM simulation) or `fallback` (every simulation failed: the model's first proposal, unscored).
    `fallback_reason` says why the preferred path was not taken (a PRM failure, dead simulations), else None.
    """

    action: ActionCandidate
    score: float
    provenance: Provenance
    candidates: list[CandidateRecord]
    winner_index: int
    llm_calls: int
    duration_ms: float
    fallback_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)  # summed token usage of the search's model calls

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict for the trajectory step record."""
        return {
            "action": self.action.to_dict(),
            "score": self.score,
            "provenance": self.provenance,
            "winner_index": self.winner_index,
            "candidates": [c.to_dict() for c in self.candidates],
            "llm_calls": self.llm_calls,
            "usage": dict(self.usage),
            "duration_ms": self.duration_ms,
            "fallback_reason": self.fallback_reason,
        }


__all__ = ["CandidateRecord", "MCTSError", "MCTSResult", "Provenance"]
