"""Label derivation (seed 000): γ-discounted MC values, outcomes, floors of the spec, prefix-only states, laziness."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_agent.learned.training import RewardSource
from ghost_agent.prm.features import ActionCandidate, PlanState
from ghost_agent.prm.labels import (
    StepLabelSpec,
    StepSample,
    derive_step_labels,
    iter_step_samples,
    reconstruct_state,
)
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Source, Trajectory
from tests.prm.samplehelp import TOOLS, refire_world, step, store, traj


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[TrajectoryCollector]:
    with TrajectoryCollector(tmp_path / "trajectories") as c:
        yield c


def samples(*trajectories: Trajectory, spec: StepLabelSpec | None = None) -> list[StepSample]:
    return list(iter_step_samples(trajectories, spec or StepLabelSpec()))


# ------------------------------------------------------------------------------------------- γ math


def test_gamma_09_four_steps_matches_the_seed() -> None:
    labels = derive_step_labels(traj(Outcome.PASSED, ["bash"] * 4), StepLabelSpec())
    assert labels == pytest.approx([0.729, 0.81, 0.9, 1.0])


@pytest.mark.parametrize(("gamma", "n"), [(0.5, 3), (0.9, 1), (0.75, 6), (1.0, 5), (0.01, 2)])
def test_value_is_gamma_to_the_steps_remaining(gamma: float, n: int) -> None:
    labels = derive_step_labels(traj(Outcome.PASSED, ["bash"] * n), StepLabelSpec(discount_factor=gamma))
    assert labels is not None and len(labels) == n
    for i, value in enumerate(labels):
        assert value == pytest.approx(gamma ** (n - i - 1))
    assert labels[-1] == 1.0  # the step right before the win gets full credit


def test_values_increase_toward_the_end_of_a_win() -> None:
    labels = derive_step_labels(traj(Outcome.PASSED, ["bash"] * 7), StepLabelSpec())
    assert labels is not None
    assert all(a < b for a, b in zip(labels, labels[1:], strict=False))


# ------------------------------------------------------------------------------------------- outcomes


def test_failed_trajectory_labels_every_step_zero() -> None:
    assert derive_step_labels(traj(Outcome.FAILED, ["bash"] * 3), StepLabelSpec()) == [0.0, 0.0, 0.0]


def test_failed_trajectory_is_dropped_when_include_failed_is_off() -> None:
    spec = StepLabelSpec(include_failed=False)
    assert derive_step_labels(traj(Outcome.FAILED, ["bash"] * 3), spec) is None
    assert derive_step_labels(traj(Outcome.PASSED, ["bash"] * 3), spec) == pytest.approx([0.81, 0.9, 1.0])
    assert samples(traj(Outcome.FAILED), traj(Outcome.PASSED, ["bash"]), spec=spec)[0].value == 1.0


def test_unknown_trajectory_is_skipped_not_guessed() -> None:
    assert derive_step_labels(traj(Outcome.UNKNOWN, ["bash"] * 3), StepLabelSpec()) is None
    got = samples(traj(Outcome.UNKNOWN, ["bash"] * 3), traj(Outcome.PASSED, ["python"]))
    assert [(s.action.tool_name, s.value) for s in got] == [("python", 1.0)]


def test_outcome_given_as_a_string_is_parsed() -> None:
    t = traj(Outcome.PASSED, ["bash", "bash"])
    t.outcome = "FAILED"  # type: ignore[assignment]  # a caller that skipped the enum
    assert derive_step_labels(t, StepLabelSpec()) == [0.0, 0.0]
    assert samples(t)[0].outcome is Outcome.FAILED


# ------------------------------------------------------------------------------------------- the spec


def test_min_steps_floor() -> None:
    spec = StepLabelSpec(min_steps=3)
    assert derive_step_labels(traj(Outcome.PASSED, ["bash"] * 2), spec) is None
    assert derive_step_labels(traj(Outcome.PASSED, ["bash"] * 3), spec) is not None
    assert samples(traj(Outcome.PASSED, ["bash"] * 2), spec=spec) == []


def test_a_trajectory_without_steps_is_never_labeled() -> None:
    assert derive_step_labels(traj(Outcome.PASSED, []), StepLabelSpec(min_steps=0)) is None


@pytest.mark.parametrize("gamma", [math.nan, math.inf, -math.inf, 0.0, -0.5, 1.5, "0.5", None, True])
def test_bad_discount_factor_falls_back_to_09(gamma: object) -> None:
    spec = StepLabelSpec(discount_factor=gamma)  # type: ignore[arg-type]
    assert spec.discount_factor == 0.9
    labels = derive_step_labels(traj(Outcome.PASSED, ["bash"] * 4), spec)
    assert labels == pytest.approx([0.729, 0.81, 0.9, 1.0])
    assert labels is not None and all(math.isfinite(v) for v in labels)


def test_bad_min_steps_and_threshold_fall_back_to_defaults() -> None:
    spec = StepLabelSpec(min_steps=-2, binary_threshold=math.nan)
    assert (spec.min_steps, spec.binary_threshold) == (1, 0.5)
    assert StepLabelSpec(binary_threshold=1.5).binary_threshold == 0.5
    assert StepLabelSpec(min_steps=0).min_steps == 0


def test_spec_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        StepLabelSpec().discount_factor = 0.5  # type: ignore[misc]


def test_binary_label_is_the_value_thresholded() -> None:
    spec = StepLabelSpec(discount_factor=0.5)
    got = samples(traj(Outcome.PASSED, ["bash"] * 3), traj(Outcome.FAILED, ["bash"]), spec=spec)
    assert [(s.value, s.binary) for s in got] == [(0.25, 0), (0.5, 1), (1.0, 1), (0.0, 0)]
    strict = samples(traj(Outcome.PASSED, ["bash"] * 3), spec=StepLabelSpec(discount_factor=0.5, binary_threshold=0.9))
    assert [s.binary for s in strict] == [0, 0, 1]


# ------------------------------------------------------------------------------------ sample contents


def test_sample_carries_action_identity_and_outcome() -> None:
    t = traj(Outcome.PASSED, ["python", "file_system"], request="sum the csv")
    t.steps[1].tool_args = {"path": "data/a.csv"}
    got = samples(t)
    assert [s.step_index for s in got] == [0, 1]
    assert all(s.trajectory_id == t.id and s.outcome is Outcome.PASSED for s in got)
    assert got[1].action == ActionCandidate("call file_system (1)", "file_system", {"path": "data/a.csv"})
    assert got[0].state.user_request == "sum the csv"


def test_prefix_state_counts_only_earlier_steps() -> None:
    t = traj(Outcome.FAILED, [("bash", False), "python", ("web_search", False), "python"])
    states = [s.state for s in samples(t)]
    assert [s.steps_so_far for s in states] == [0, 1, 2, 3]
    assert [s.failures_so_far for s in states] == [0, 1, 1, 2]
    assert states[0].tools_used == frozenset()
    assert states[2].tools_used == {"bash", "python"}
    assert states[3].tools_failed == {"bash", "web_search"}


def test_a_later_failing_step_never_shows_in_an_earlier_state() -> None:
    # step 1 fails with python; the samples for steps 0 and 1 were decided before that failure happened
    t = traj(Outcome.FAILED, ["bash", ("python", False), "python"])
    s0, s1, s2 = samples(t)
    for early in (s0.state, s1.state):
        assert early.failures_so_far == 0
        assert "python" not in early.tools_failed and "python" not in early.tools_used
    assert s2.state.tools_failed == {"python"} and s2.state.failures_so_far == 1


def test_state_of_step_i_is_the_same_whatever_came_after() -> None:
    rng = random.Random(11)
    for _ in range(50):
        t, _truth = refire_world(rng)
        full = samples(t)
        for i in range(len(t.steps)):
            truncated = Trajectory(id=t.id, user_request=t.user_request, steps=t.steps[: i + 1], outcome=Outcome.PASSED)
            assert samples(truncated)[i].state == full[i].state


def test_pending_count_and_plan_depth_come_from_the_recorded_state() -> None:
    t = traj(Outcome.PASSED, ["bash", "bash", "bash"])
    t.steps[0].extra["prm_state"] = {"pending_count": 4, "plan_depth": 2}
    t.steps[2].extra["prm_state"] = {"pending_count": 1}
    got = [s.state for s in samples(t)]
    assert [(s.pending_count, s.plan_depth) for s in got] == [(4, 2), (0, 0), (1, 0)]


def test_pending_count_is_not_derived_from_the_trajectory_length() -> None:
    short = traj(Outcome.PASSED, ["bash", "bash"])
    long = traj(Outcome.PASSED, ["bash"] * 6)
    assert samples(short)[0].state == samples(long)[0].state  # N must not leak into the state


@pytest.mark.parametrize("recorded", [{"pending_count": "many", "plan_depth": -3}, ["not", "a", "dict"], "x",
                                      {"pending_count": math.nan, "plan_depth": None}])
def test_malformed_recorded_state_reads_as_zero(recorded: object) -> None:
    t = Trajectory(user_request="q", steps=[step(0, prm_state=recorded)], outcome=Outcome.PASSED)
    (sample,) = samples(t)
    assert (sample.state.pending_count, sample.state.plan_depth) == (0, 0)


def test_malformed_tool_args_and_names_do_not_raise() -> None:
    circular: list[object] = []
    circular.append(circular)
    t = Trajectory(
        user_request="q",
        steps=[step(0, args=circular), step(1, args=None), step(2, args="bare string"), step(3, args=b"\x00\xff"),
               step(4, args={"deep": [[[[{"x": "\x00"}]]]]})],
        outcome=Outcome.PASSED,
    )
    t.steps[1].tool_name = 42  # type: ignore[assignment]  # a hand-written record may hold anything here
    t.steps[2].tool_name = ["list"]  # type: ignore[assignment]
    got = samples(t)
    assert len(got) == 5
    assert got[1].action.tool_name is None and got[2].action.tool_name is None
    assert got[3].state.tools_used == {"bash"}  # the unusable names never enter the state


def test_reconstruct_state_matches_the_samples_and_checks_range() -> None:
    rng = random.Random(3)
    t, _truth = refire_world(rng)
    for sample in samples(t):
        assert reconstruct_state(t, sample.step_index) == sample.state
    with pytest.raises(IndexError):
        reconstruct_state(t, len(t.steps))
    with pytest.raises(IndexError):
        reconstruct_state(t, -1)
    assert isinstance(reconstruct_state(t, 0), PlanState)


# ---------------------------------------------------------------------------------------------- laziness


def _exploding(good: list[Trajectory]) -> Iterator[Trajectory]:
    yield from good
    raise AssertionError("the input was consumed ahead of need")


def test_iter_step_samples_is_lazy() -> None:
    stream = iter_step_samples(_exploding([traj(Outcome.PASSED, ["bash", "python"])]))  # nothing pulled yet
    first = next(stream)
    second = next(stream)
    assert (first.step_index, second.step_index) == (0, 1)
    with pytest.raises(AssertionError, match="ahead of need"):
        next(stream)


def test_iter_step_samples_pulls_one_trajectory_at_a_time() -> None:
    pulled = 0

    def source() -> Iterator[Trajectory]:
        nonlocal pulled
        for k in range(1000):
            pulled += 1
            yield traj(Outcome.PASSED, ["bash"], request=f"r{k}")

    stream = iter_step_samples(source())
    for _ in range(3):
        next(stream)
    assert pulled == 3


# --------------------------------------------------------------------------------- weights by provenance


def test_weight_follows_who_decided_the_outcome() -> None:
    chat = traj(Outcome.PASSED, ["bash"])  # a chat outcome nobody checked: heuristic
    play = traj(Outcome.PASSED, ["bash"], source=Source.SELF_PLAY.value)
    voted = traj(Outcome.PASSED, ["bash"], extra={"self_consistency": {"agreement": 0.8, "labelled": True}})
    got = samples(chat, play, voted)
    assert [(s.reward_source, s.weight) for s in got] == [
        (RewardSource.HEURISTIC, 0.3), (RewardSource.SELF, 0.6), (RewardSource.TEACHER, 0.1)
    ]


def test_router_confidence_does_not_scale_step_weights() -> None:
    """Seed 004's confidence modulation is for the routing policy: PRM step samples keep the source weight."""
    unsure = traj(Outcome.PASSED, ["bash"])
    unsure.router = {"decision": "agent", "p": 0.4, "reason": "uncertain", "model": "r1", "confidence": 0.0}
    assert [s.weight for s in samples(unsure)] == [0.3]


def test_custom_weight_table_overrides_the_defaults() -> None:
    table = {RewardSource.HEURISTIC: 2.0}
    got = list(iter_step_samples([traj(Outcome.PASSED, ["bash"])], StepLabelSpec(), table))
    assert got[0].weight == 2.0


def test_user_correction_in_the_sidecar_changes_labels_and_weights(collector: TrajectoryCollector) -> None:
    passed, unknown = store(collector, [traj(Outcome.PASSED, ["bash", "python"]), traj(Outcome.UNKNOWN, ["bash"])])
    before = list(iter_step_samples(collector.iter_trajectories()))
    assert [(s.trajectory_id, s.value, s.weight) for s in before] == [
        (passed.id, pytest.approx(0.9), 0.3), (passed.id, 1.0, 0.3)
    ]

    collector.update_outcome(passed.id, Outcome.FAILED, "that was wrong", source="user_correction")
    collector.update_outcome(unknown.id, Outcome.PASSED, "verified", source="verifier")
    after = list(iter_step_samples(collector.iter_trajectories()))
    by_id = {(s.trajectory_id, s.step_index): s for s in after}
    corrected = [by_id[(passed.id, 0)], by_id[(passed.id, 1)]]
    assert [s.value for s in corrected] == [0.0, 0.0]
    assert all(s.weight == 1.0 and s.reward_source is RewardSource.HUMAN for s in corrected)
    promoted = by_id[(unknown.id, 0)]
    assert (promoted.value, promoted.weight, promoted.reward_source) == (1.0, 0.6, RewardSource.SELF)


def test_every_tool_of_the_world_can_appear_in_a_state() -> None:
    # sanity for the synthetic world the trainer's learning check uses: re-fires are visible in the state
    rng = random.Random(5)
    seen_refire = False
    for _ in range(200):
        t, truth = refire_world(rng)
        for sample, good in zip(samples(t), truth, strict=True):
            assert sample.action.tool_name in TOOLS
            refire = sample.action.tool_name in sample.state.tools_failed
            assert refire is (not good)
            seen_refire = seen_refire or refire
    assert seen_refire
