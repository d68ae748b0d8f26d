"""Router training labels from recorded trajectories: did this request need the full agent?

One trajectory gives at most one sample: its request (`RouterRequest.from_trajectory`, the same inputs
dispatch sees), a hard label and a sample weight. The rules, in order, first match wins:

1. `skip_source` (no sample) — reflection and self-consistency records: internal prompts the router never
   dispatches;
2. `skip_empty` (no sample) — no request text: dispatch never consults the model for those
   (reason `empty_request`), so they would only teach it about inputs it is never asked about;
3. `skip_client_tools` (no sample) — the client supplied tools and ran them itself
   (`extra["client_tool_calls"]`): success depended on the client, not on the path we took;
4. `used_tools` → 1: some step called a tool (`tool_name` set); the fast path cannot do that, whatever
   happened afterwards;
5. `skip_infrastructure` (no sample) — a backend error, an internal error or a client disconnect ended the
   turn: an UNKNOWN outcome there is not acceptance, and a failure is not the request's fault;
6. fast path (`router["decision"] == "fast"`):
   - `fast_failed` → 1: the outcome is FAILED (a user correction, the verifier or a heuristic said so);
   - `fast_passed` → 0: the outcome is PASSED;
   - `fast_accepted` → 0, weak: a chat turn, outcome UNKNOWN, never corrected — the user moved on without
     complaint (implicit acceptance), weighted as a heuristic (0.3) whatever else is known. Only chat has a
     user to complain, so an UNKNOWN self-play/eval fast turn is `ambiguous`;
7. agent route without tools: `agent_no_tools` → 0 unless the outcome is FAILED (then `ambiguous`: we
   cannot tell whether the fast path would have done better);
8. no router record and no tools: `unrouted` (no sample).

The weight of a labeled sample is `training.source_weight(traj)` — who decided the outcome (human 1.0,
self 0.6, heuristic 0.3, teacher 0.1) — except `fast_accepted` as above, times
`training.confidence_multiplier(traj)` (seed 004 Phase 2a, confidence-modulated reinforcement):
`0.5 + 0.5 * confidence`, where confidence is the probability the router gave the route it took
(`trajectory.router["confidence"]`); a route no model chose, or a record from before the key existed, has
none and keeps multiplier 1.0. A sample of a confident decision thus counts twice as much as one of a coin flip.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ghost_agent.learned.training import (
    DEFAULT_SOURCE_WEIGHTS,
    RewardSource,
    confidence_multiplier,
    outcome_source,
    source_weight,
)
from ghost_agent.router.dispatch import AGENT, FAST, RouterRequest
from ghost_agent.trajectories.record import Outcome, Source, Trajectory

RULE_USED_TOOLS = "used_tools"
RULE_FAST_FAILED = "fast_failed"
RULE_FAST_PASSED = "fast_passed"
RULE_FAST_ACCEPTED = "fast_accepted"
RULE_AGENT_NO_TOOLS = "agent_no_tools"
SKIP_SOURCE = "skip_source"
SKIP_EMPTY = "skip_empty"
SKIP_CLIENT_TOOLS = "skip_client_tools"
SKIP_INFRASTRUCTURE = "skip_infrastructure"
AMBIGUOUS = "ambiguous"
UNROUTED = "unrouted"

# rule → label, for the rules that produce a sample
RULE_LABELS: Mapping[str, float] = {
    RULE_USED_TOOLS: 1.0,
    RULE_FAST_FAILED: 1.0,
    RULE_FAST_PASSED: 0.0,
    RULE_FAST_ACCEPTED: 0.0,
    RULE_AGENT_NO_TOOLS: 0.0,
}

_UNROUTED_SOURCES = frozenset({Source.REFLECTION.value, Source.SELF_CONSISTENCY.value})
_INFRASTRUCTURE_KEYS = ("backend_error", "error", "client_disconnected")


@dataclass(frozen=True)
class RouterSample:
    """One training sample: the request as dispatch sees it, the label, its weight and the rule that made it."""

    trajectory_id: str
    request: RouterRequest
    label: float
    weight: float
    rule: str
    reward_source: str

    def features(self) -> tuple[float, ...]:
        """The feature row (`ROUTER_FEATURE_NAMES`)."""
        return self.request.features()


def route_of(traj: Trajectory) -> str | None:
    """The recorded route (`fast` / `agent`), or None when the record has none."""
    router = traj.router
    decision = router.get("decision") if isinstance(router, dict) else None
    return decision if decision in (FAST, AGENT) else None


def used_tools(traj: Trajectory) -> bool:
    """True when some step called a tool."""
    return any(isinstance(step.tool_name, str) and step.tool_name for step in traj.steps)


def label_rule(traj: Trajectory) -> str:
    """The rule (module docstring) this trajectory falls under; `RULE_LABELS` says which rules yield a label."""
    extra = traj.extra if isinstance(traj.extra, dict) else {}
    if traj.source in _UNROUTED_SOURCES:
        return SKIP_SOURCE
    if RouterRequest.from_trajectory(traj).is_empty:
        return SKIP_EMPTY
    if extra.get("client_tool_calls"):
        return SKIP_CLIENT_TOOLS
    if used_tools(traj):
        return RULE_USED_TOOLS  # whatever happened later, the request needed a tool
    if any(extra.get(key) for key in _INFRASTRUCTURE_KEYS):
        return SKIP_INFRASTRUCTURE
    route = route_of(traj)
    outcome = Outcome.parse(traj.outcome)
    if route == FAST:
        if outcome is Outcome.FAILED:
            return RULE_FAST_FAILED
        if outcome is Outcome.PASSED:
            return RULE_FAST_PASSED
        if traj.source == Source.CHAT.value and not isinstance(extra.get("correction"), dict):
            return RULE_FAST_ACCEPTED
        return AMBIGUOUS
    if route == AGENT:
        return RULE_AGENT_NO_TOOLS if outcome is not Outcome.FAILED else AMBIGUOUS
    return UNROUTED


def router_sample(traj: Trajectory, weights: Mapping[RewardSource, float] | None = None) -> RouterSample | None:
    """The training sample of one trajectory, or None when no rule labels it."""
    rule = label_rule(traj)
    label = RULE_LABELS.get(rule)
    if label is None:
        return None
    table = DEFAULT_SOURCE_WEIGHTS if weights is None else weights
    if rule == RULE_FAST_ACCEPTED:
        reward, weight = RewardSource.HEURISTIC, float(table.get(RewardSource.HEURISTIC, 0.3))
    else:
        reward, weight = outcome_source(traj), source_weight(traj, table)
    weight *= confidence_multiplier(traj)
    return RouterSample(
        trajectory_id=traj.id,
        request=RouterRequest.from_trajectory(traj),
        label=label,
        weight=weight,
        rule=rule,
        reward_source=reward.value,
    )


def router_label(traj: Trajectory, weights: Mapping[RewardSource, float] | None = None) -> tuple[float, float] | None:
    """`(label, weight)` for one trajectory, or None (skipped or ambiguous)."""
    sample = router_sample(traj, weights)
    return None if sample is None else (sample.label, sample.weight)


def iter_router_samples(
    trajectories: Iterable[Trajectory], weights: Mapping[RewardSource, float] | None = None
) -> Iterator[RouterSample]:
    """Samples of the labeled trajectories, lazily (one trajectory in memory at a time)."""
    for traj in trajectories:
        sample = router_sample(traj, weights)
        if sample is not None:
            yield sample


__all__ = [
    "AMBIGUOUS",
    "RULE_AGENT_NO_TOOLS",
    "RULE_FAST_ACCEPTED",
    "RULE_FAST_FAILED",
    "RULE_FAST_PASSED",
    "RULE_LABELS",
    "RULE_USED_TOOLS",
    "SKIP_CLIENT_TOOLS",
    "SKIP_EMPTY",
    "SKIP_INFRASTRUCTURE",
    "SKIP_SOURCE",
    "UNROUTED",
    "RouterSample",
    "iter_router_samples",
    "label_rule",
    "route_of",
    "router_label",
    "router_sample",
    "used_tools",
]
