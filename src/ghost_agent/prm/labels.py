"""PRM labels: Monte Carlo value backprop from a trajectory's terminal outcome (seed 000, "Label derivation").

For a trajectory of N steps with terminal value T (PASSED → 1.0, FAILED → 0.0, UNKNOWN → skipped):

    V(step_i) = γ^(N−i−1) · T        (γ = 0.9 and N = 4 → [0.729, 0.81, 0.9, 1.0])

The step right before the win gets full credit, earlier steps exponentially less; every step of a lost
rollout is a counterexample. UNKNOWN trajectories are dropped, not guessed at.

Each sample pairs the label with the state the agent was in *before* the step fired, rebuilt from the
trajectory's prefix only (steps[:i]) plus what the agent itself recorded at decision time in
`step.extra["prm_state"]`. Nothing from step i or later may reach the state: a PRM that sees the future
learns to read the answer off it and is useless at decision time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ghost_agent.learned.training import RewardSource, outcome_source, source_weight
from ghost_agent.prm.features import ActionCandidate, PlanState
from ghost_agent.trajectories.record import Outcome, Step, Trajectory

DEFAULT_GAMMA = 0.9
DEFAULT_THRESHOLD = 0.5
PRM_STATE_KEY = "prm_state"  # step.extra key the tool loop records {"pending_count", "plan_depth"} under


def _finite_in(value: Any, lo: float, hi: float, *, lo_open: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    f = float(value)
    return math.isfinite(f) and (f > lo if lo_open else f >= lo) and f <= hi


@dataclass(frozen=True)
class StepLabelSpec:
    """How step labels are derived. Bad values fall back to the defaults instead of raising.

    `discount_factor` γ must be a finite number in (0, 1] (NaN, inf, 0, negatives, > 1 → 0.9);
    `min_steps` must be an int ≥ 0 (else 1); `binary_threshold` must be finite in [0, 1] (else 0.5).
    """

    discount_factor: float = DEFAULT_GAMMA
    min_steps: int = 1
    include_failed: bool = True
    binary_threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        # Clamp rather than raise: a spec comes from settings or a caller's arithmetic, and a NaN γ must not
        # poison every label of a training pass (seed 000's invariants table).
        gamma = self.discount_factor
        object.__setattr__(
            self, "discount_factor", float(gamma) if _finite_in(gamma, 0.0, 1.0, lo_open=True) else DEFAULT_GAMMA
        )
        steps = self.min_steps
        ok_steps = isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0
        object.__setattr__(self, "min_steps", steps if ok_steps else 1)
        object.__setattr__(self, "include_failed", bool(self.include_failed))
        threshold = self.binary_threshold
        object.__setattr__(
            self,
            "binary_threshold",
            float(threshold) if _finite_in(threshold, 0.0, 1.0, lo_open=False) else DEFAULT_THRESHOLD,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (saved in checkpoint metadata)."""
        return {
            "discount_factor": self.discount_factor,
            "min_steps": self.min_steps,
            "include_failed": self.include_failed,
            "binary_threshold": self.binary_threshold,
        }


def terminal_value(traj: Trajectory, spec: StepLabelSpec) -> float | None:
    """1.0 for PASSED, 0.0 for FAILED (None when `include_failed` is off), None for UNKNOWN."""
    outcome = Outcome.parse(traj.outcome)
    if outcome is Outcome.PASSED:
        return 1.0
    if outcome is Outcome.FAILED and spec.include_failed:
        return 0.0
    return None


def derive_step_labels(traj: Trajectory, spec: StepLabelSpec = StepLabelSpec()) -> list[float] | None:
    """`[γ^(N−i−1) · T for i in range(N)]`, or None when the trajectory yields no labels.

    None for UNKNOWN outcomes, for FAILED when `spec.include_failed` is False, and for trajectories with
    fewer than `spec.min_steps` steps (a trajectory with no steps is never labeled: nothing to credit).
    """
    terminal = terminal_value(traj, spec)
    if terminal is None:
        return None
    n = len(traj.steps)
    if n == 0 or n < spec.min_steps:
        return None
    gamma = spec.discount_factor
    return [gamma ** (n - i - 1) * terminal for i in range(n)]


@dataclass(frozen=True)
class StepSample:
    """One training sample: the prefix state, the action taken from it, and its label and weight."""

    state: PlanState
    action: ActionCandidate
    value: float
    binary: int
    trajectory_id: str
    step_index: int
    outcome: Outcome
    weight: float
    reward_source: RewardSource


def _tool(step: Step) -> str | None:
    """The step's tool name if it is a usable one (a malformed record may hold anything there)."""
    name = step.tool_name
    return name if isinstance(name, str) and name else None


def _recorded(step: Step) -> tuple[Any, Any]:
    """`(pending_count, plan_depth)` the agent recorded when it decided on `step` (missing → 0)."""
    extra = step.extra if isinstance(step.extra, dict) else {}
    recorded = extra.get(PRM_STATE_KEY)
    if not isinstance(recorded, dict):
        return 0, 0
    # PlanState coerces malformed counts to non-negative ints, so odd values cannot raise here
    return recorded.get("pending_count", 0), recorded.get("plan_depth", 0)


def step_action(step: Step) -> ActionCandidate:
    """The action a recorded step took, as the PRM scores it (malformed fields read as empty)."""
    description = step.description if isinstance(step.description, str) else ""
    return ActionCandidate(description=description, tool_name=_tool(step), tool_args=step.tool_args)


class _Prefix:
    """The running state of a trajectory's prefix; `state_before(step)` never looks past `step`."""

    def __init__(self, user_request: Any) -> None:
        self.user_request = user_request if isinstance(user_request, str) else ""
        self.steps = 0
        self.failures = 0
        self.used: set[str] = set()
        self.failed: set[str] = set()

    def state_before(self, step: Step) -> PlanState:
        pending, depth = _recorded(step)
        return PlanState(
            user_request=self.user_request,
            steps_so_far=self.steps,
            failures_so_far=self.failures,
            pending_count=pending,
            plan_depth=depth,
            tools_used=frozenset(self.used),
            tools_failed=frozenset(self.failed),
        )

    def advance(self, step: Step) -> None:
        tool = _tool(step)
        self.steps += 1
        if tool is not None:
            self.used.add(tool)
        if not step.ok:
            self.failures += 1
            if tool is not None:
                self.failed.add(tool)


def reconstruct_state(traj: Trajectory, i: int) -> PlanState:
    """The PlanState right before step `i` fired, from `traj.steps[:i]` and step i's recorded prm_state.

    Raises IndexError unless 0 ≤ i < len(traj.steps).
    """
    if not 0 <= i < len(traj.steps):
        raise IndexError(f"step {i} out of range for a trajectory of {len(traj.steps)} steps")
    prefix = _Prefix(traj.user_request)
    for step in traj.steps[:i]:
        prefix.advance(step)
    return prefix.state_before(traj.steps[i])


def iter_step_samples(
    trajectories: Iterable[Trajectory],
    spec: StepLabelSpec = StepLabelSpec(),
    weights: Mapping[RewardSource, float] | None = None,
) -> Iterator[StepSample]:
    """Lazily yield one StepSample per labeled step, pulling one trajectory at a time from the input.

    Unlabeled trajectories (UNKNOWN, too short, FAILED with `include_failed` off) yield nothing. `weights`
    overrides the reward-source weight table (`training.DEFAULT_SOURCE_WEIGHTS`). The router's decision
    confidence (`training.confidence_multiplier`) deliberately does not scale these weights: it measures the
    fast-vs-agent choice, not the steps the tool loop took afterwards, which is what the PRM scores.
    """
    threshold = spec.binary_threshold
    for traj in trajectories:
        labels = derive_step_labels(traj, spec)
        if labels is None:
            continue
        outcome = Outcome.parse(traj.outcome)
        source = outcome_source(traj)
        weight = source_weight(traj, weights)
        prefix = _Prefix(traj.user_request)
        for i, (step, value) in enumerate(zip(traj.steps, labels, strict=True)):
            yield StepSample(
                state=prefix.state_before(step),
                action=step_action(step),
                value=value,
                binary=1 if value >= threshold else 0,
                trajectory_id=str(traj.id),
                step_index=i,
                outcome=outcome,
                weight=weight,
                reward_source=source,
            )
            prefix.advance(step)


__all__ = [
    "DEFAULT_GAMMA",
    "PRM_STATE_KEY",
    "StepLabelSpec",
    "StepSample",
    "derive_step_labels",
    "iter_step_samples",
    "reconstruct_state",
    "step_action",
    "terminal_value",
]
