"""The self-state: what the trajectory store says the agent is good and bad at, per kind of task.

Pure and incremental: feed trajectories (corrections already overlaid, as the collector's readers give them)
to `SelfStateBuilder.add`, then `build`. Counted per **task kind** — the answer-first turn's own label
(`extra.agent.kind`), else the request classified again (`text/request_kind.classify`: code, quantitative,
files, general) — per **route** (the router's decision: fast | agent) and per **source** (chat, self_play,
eval …; reflection records are critiques, not tasks, and are not counted). A pass rate is over the judged
turns (passed + failed; UNKNOWN is not a verdict) and only stated from `MIN_JUDGED` judged turns on; a kind
is a **strength** at a pass rate ≥ `STRONG`, a **weakness** below `WEAK`.

Only labels from fixed sets and numbers come out of here — never request text — so the self-state (and the
narrative written from it) carries nothing a user typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ghost_agent.jsonsafe import JSON
from ghost_agent.text.request_kind import classify
from ghost_agent.trajectories.record import Outcome, Source, Trajectory

SCHEMA = "ghost.selfhood.state.v1"
KINDS = ("code", "quantitative", "files", "general")
ROUTES = ("fast", "agent")
SOURCES = tuple(s.value for s in Source if s is not Source.REFLECTION)
MIN_JUDGED = 3
STRONG = 0.75
WEAK = 0.5


def task_kind(traj: Trajectory) -> str:
    """The kind of task a trajectory answered (one of `KINDS`)."""
    agent = traj.extra.get("agent")
    kind = agent.get("kind") if isinstance(agent, dict) else None
    if isinstance(kind, str) and kind in KINDS:
        return kind
    return classify(traj.user_request).label


def route_of(traj: Trajectory) -> str:
    """The router's decision for a trajectory (`fast`, `agent`, else `other`)."""
    decision = traj.router.get("decision") if isinstance(traj.router, dict) else None
    return decision if isinstance(decision, str) and decision in ROUTES else "other"


@dataclass
class Tally:
    """Outcomes of a group of trajectories."""

    passed: int = 0
    failed: int = 0
    unknown: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.unknown

    @property
    def judged(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        """passed / judged, from `MIN_JUDGED` judged trajectories on (else None: too little to say)."""
        return round(self.passed / self.judged, 3) if self.judged >= MIN_JUDGED else None

    def add(self, outcome: Outcome) -> None:
        if outcome is Outcome.PASSED:
            self.passed += 1
        elif outcome is Outcome.FAILED:
            self.failed += 1
        else:
            self.unknown += 1

    def to_dict(self) -> JSON:
        return {"total": self.total, "passed": self.passed, "failed": self.failed, "unknown": self.unknown,
                "pass_rate": self.pass_rate}


class SelfStateBuilder:
    """Accumulates trajectories into the self-state."""

    def __init__(self) -> None:
        self.overall = Tally()
        self.by_kind: dict[str, Tally] = {}
        self.by_route: dict[str, Tally] = {}
        self.by_source: dict[str, Tally] = {}
        self.first_ts: str | None = None
        self.last_ts: str | None = None

    def add(self, traj: Trajectory) -> str | None:
        """Count one trajectory; returns its task kind (None when it is not a task: a reflection record)."""
        if traj.source == Source.REFLECTION.value:
            return None
        kind = task_kind(traj)
        source = traj.source if traj.source in SOURCES else "other"
        for table, key in ((self.by_kind, kind), (self.by_route, route_of(traj)), (self.by_source, source)):
            table.setdefault(key, Tally()).add(traj.outcome)
        self.overall.add(traj.outcome)
        if self.first_ts is None or traj.ts < self.first_ts:
            self.first_ts = traj.ts
        if self.last_ts is None or traj.ts > self.last_ts:
            self.last_ts = traj.ts
        return kind

    def build(self, *, computed_at: str, window_days: float, lessons: dict[str, int] | None = None,
              models: dict[str, str | None] | None = None) -> JSON:
        """The self-state document (`ghost.selfhood.state.v1`)."""
        rated = {k: t.pass_rate for k, t in self.by_kind.items() if t.pass_rate is not None}
        strengths = sorted((k for k, r in rated.items() if r >= STRONG), key=lambda k: (-rated[k], k))
        weaknesses = sorted((k for k, r in rated.items() if r < WEAK), key=lambda k: (rated[k], k))
        return {
            "schema": SCHEMA,
            "computed_at": computed_at,
            "window_days": window_days,
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "overall": self.overall.to_dict(),
            "by_kind": {k: self.by_kind[k].to_dict() for k in sorted(self.by_kind)},
            "by_route": {k: self.by_route[k].to_dict() for k in sorted(self.by_route)},
            "by_source": {k: self.by_source[k].to_dict() for k in sorted(self.by_source)},
            "strengths": strengths,
            "weaknesses": weaknesses,
            "lessons": dict(sorted((lessons or {}).items())),
            "models": dict(sorted((models or {}).items())),
        }


__all__ = ["KINDS", "MIN_JUDGED", "ROUTES", "SCHEMA", "STRONG", "WEAK", "SelfStateBuilder", "Tally", "route_of",
           "task_kind"]
