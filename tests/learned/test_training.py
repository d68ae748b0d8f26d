"""What the trainers share: reward-source provenance and weights, the data floors, the report."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ghost_agent.feedback.outcome_heuristics import apply_chat_outcome_heuristics
from ghost_agent.feedback.self_consistency import mark_trajectories_by_agreement
from ghost_agent.learned.training import (
    DEFAULT_SOURCE_WEIGHTS,
    Floors,
    RewardSource,
    TrainerReport,
    confidence_multiplier,
    is_labeled,
    outcome_source,
    router_confidence,
    source_weight,
)
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory
from tests.trajectories.trajhelp import make_traj


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[TrajectoryCollector]:
    with TrajectoryCollector(tmp_path / "trajectories") as c:
        yield c


def stored(collector: TrajectoryCollector, traj: Trajectory) -> Trajectory:
    """`traj` after a round trip through the real store (corrections overlaid)."""
    collector.append(traj)
    found = collector.get(traj.id)
    assert found is not None
    return found


# ------------------------------------------------------------------------------------------ weights


def test_default_source_weights() -> None:
    assert dict(DEFAULT_SOURCE_WEIGHTS) == {
        RewardSource.HUMAN: 1.0,
        RewardSource.SELF: 0.6,
        RewardSource.HEURISTIC: 0.3,
        RewardSource.TEACHER: 0.1,
    }
    assert {s.value for s in RewardSource} == {"human", "self", "heuristic", "teacher"}


# ------------------------------------------------------------------- confidence-modulated reinforcement


def routed_traj(**router: object) -> Trajectory:
    """A fast-path chat turn whose router record is `{decision, p, reason, model}` plus `router`'s keys."""
    record = {"decision": "fast", "p": 0.2, "reason": "confident_fast", "model": "r1", **router}
    return make_traj(outcome=Outcome.PASSED, router=record)


def test_missing_confidence_leaves_the_weight_unchanged(collector: TrajectoryCollector) -> None:
    old_record = stored(collector, routed_traj())  # written before the key existed
    unmodelled = stored(collector, routed_traj(p=None, reason="prior_fast", model=None, confidence=None))
    unrouted = stored(collector, make_traj(outcome=Outcome.PASSED))
    for traj in (old_record, unmodelled, unrouted):
        assert router_confidence(traj) is None
        assert confidence_multiplier(traj) == 1.0
        assert source_weight(traj) == 0.3  # the source weight itself never changes


@pytest.mark.parametrize(
    ("confidence", "multiplier"), [(0.0, 0.5), (0, 0.5), (1.0, 1.0), (1, 1.0), (0.6, 0.8), (0.8, 0.9)]
)
def test_multiplier_is_half_plus_half_the_confidence(
    collector: TrajectoryCollector, confidence: float, multiplier: float
) -> None:
    traj = stored(collector, routed_traj(confidence=confidence))
    assert router_confidence(traj) == confidence
    assert confidence_multiplier(traj) == pytest.approx(multiplier)


@pytest.mark.parametrize(("confidence", "clamped"), [(-0.5, 0.0), (-1e300, 0.0), (1.5, 1.0), (1e300, 1.0)])
def test_out_of_range_confidence_is_clamped(collector: TrajectoryCollector, confidence: float, clamped: float) -> None:
    traj = stored(collector, routed_traj(confidence=confidence))
    assert router_confidence(traj) == clamped
    assert confidence_multiplier(traj) == 0.5 + 0.5 * clamped


@pytest.mark.parametrize("bad", ["0.9", "", True, False, [0.9], {"p": 0.9}])
def test_malformed_stored_confidence_gives_multiplier_one(collector: TrajectoryCollector, bad: object) -> None:
    traj = stored(collector, routed_traj(confidence=bad))
    assert router_confidence(traj) is None and confidence_multiplier(traj) == 1.0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_confidence_gives_multiplier_one(bad: float) -> None:
    # JSON cannot carry these (orjson writes null), so they can only arrive on an in-memory record
    traj = routed_traj(confidence=bad)
    assert router_confidence(traj) is None and confidence_multiplier(traj) == 1.0


@pytest.mark.parametrize("router", ["fast", ["fast", 0.9], 0.9])
def test_a_router_record_that_is_not_an_object_gives_multiplier_one(router: object) -> None:
    traj = make_traj(outcome=Outcome.PASSED)
    traj.router = router  # type: ignore[assignment]
    assert confidence_multiplier(traj) == 1.0


# ------------------------------------------------------------------------------------ outcome_source


def test_unchecked_chat_outcome_is_heuristic(collector: TrajectoryCollector) -> None:
    traj = stored(collector, make_traj(outcome=Outcome.PASSED))
    assert outcome_source(traj) is RewardSource.HEURISTIC
    assert source_weight(traj) == 0.3


@pytest.mark.parametrize(
    ("correction_source", "expected"),
    [
        ("user_correction", RewardSource.HUMAN),
        ("verifier", RewardSource.SELF),
        ("self_play", RewardSource.SELF),
        ("eval", RewardSource.SELF),
        ("heuristic", RewardSource.HEURISTIC),
    ],
)
def test_correction_overlay_decides(
    collector: TrajectoryCollector, correction_source: str, expected: RewardSource
) -> None:
    traj = make_traj(outcome=Outcome.UNKNOWN, source="self_consistency")
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.FAILED, "wrong answer", source=correction_source)
    found = collector.get(traj.id)
    assert found is not None and found.outcome is Outcome.FAILED
    assert found.extra["correction"]["source"] == correction_source
    assert outcome_source(found) is expected
    assert source_weight(found) == DEFAULT_SOURCE_WEIGHTS[expected]


def test_latest_correction_wins(collector: TrajectoryCollector) -> None:
    traj = make_traj()
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.PASSED, None, source="heuristic")
    collector.update_outcome(traj.id, Outcome.FAILED, "user said no", source="user_correction")
    found = collector.get(traj.id)
    assert found is not None and outcome_source(found) is RewardSource.HUMAN and source_weight(found) == 1.0


def test_teacher_correction_source() -> None:
    # The store's sidecar does not accept "teacher" yet; a record carrying it (e.g. from a newer writer) maps.
    traj = make_traj(outcome=Outcome.PASSED)
    traj.extra["correction"] = {"source": "teacher", "reason": None, "ts": "2026-04-26T10:00:00+00:00"}
    assert outcome_source(traj) is RewardSource.TEACHER and source_weight(traj) == 0.1


def test_unknown_correction_source_falls_through(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.PASSED, source="self_play")
    traj.extra["correction"] = {"source": "robot", "reason": None, "ts": None}
    assert outcome_source(stored(collector, traj)) is RewardSource.SELF


def test_explicit_outcome_source_wins(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.PASSED, extra={"outcome_source": "teacher"})
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.PASSED, None, source="user_correction")
    found = collector.get(traj.id)
    assert found is not None and outcome_source(found) is RewardSource.TEACHER


def test_invalid_explicit_outcome_source_is_ignored(collector: TrajectoryCollector) -> None:
    for bogus in ("robot", 7, None):
        traj = stored(collector, make_traj(outcome=Outcome.PASSED, source="eval", extra={"outcome_source": bogus}))
        assert outcome_source(traj) is RewardSource.SELF


def test_heuristic_promotion(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.UNKNOWN)
    traj.final_response = "Giving up. [ATTEMPT_ABORTED_TOO_MANY_ERRORS]"
    apply_chat_outcome_heuristics(traj)
    assert traj.outcome is Outcome.FAILED and traj.extra["heuristics"]["promoted"] is True
    found = stored(collector, traj)
    assert outcome_source(found) is RewardSource.HEURISTIC and source_weight(found) == 0.3


def test_heuristic_signal_without_promotion_does_not_decide(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.PASSED, source="self_play")
    traj.final_response = "[ATTEMPT_ABORTED_X]"
    apply_chat_outcome_heuristics(traj)
    assert traj.extra["heuristics"]["promoted"] is False
    assert outcome_source(stored(collector, traj)) is RewardSource.SELF  # the validator's verdict stands


def test_self_consistency_vote_is_a_teacher(collector: TrajectoryCollector) -> None:
    group = [make_traj(source="self_consistency") for _ in range(4)]
    for traj, answer in zip(group, ["42", "42", "42.0", "41"], strict=True):
        traj.final_response = answer
    mark_trajectories_by_agreement(group)
    assert [t.outcome for t in group] == [Outcome.PASSED] * 3 + [Outcome.FAILED]
    for traj in group:
        found = stored(collector, traj)
        assert outcome_source(found) is RewardSource.TEACHER and source_weight(found) == 0.1


@pytest.mark.parametrize("source", ["self_play", "eval"])
def test_validator_sources_are_self(collector: TrajectoryCollector, source: str) -> None:
    traj = stored(collector, make_traj(outcome=Outcome.PASSED, source=source))
    assert outcome_source(traj) is RewardSource.SELF and source_weight(traj) == 0.6


def test_verifier_verdict_is_self(collector: TrajectoryCollector) -> None:
    for verdict in ("REFUTED", "CONFIRMED"):
        with_verdict = stored(collector, make_traj(outcome=Outcome.FAILED, verifier={"verdict": verdict}))
        assert outcome_source(with_verdict) is RewardSource.SELF
    for verifier in ({}, {"verdict": ""}, {"verdict": None}, {"verdict": "UNSURE", "error": "timeout"}):
        traj = stored(collector, make_traj(outcome=Outcome.FAILED, verifier=verifier))
        assert outcome_source(traj) is RewardSource.HEURISTIC


def test_correction_beats_heuristic_promotion(collector: TrajectoryCollector) -> None:
    traj = make_traj(outcome=Outcome.UNKNOWN)
    traj.final_response = "[ATTEMPT_ABORTED_LOOP]"
    apply_chat_outcome_heuristics(traj)
    collector.append(traj)
    collector.update_outcome(traj.id, Outcome.PASSED, None, source="user_correction")
    found = collector.get(traj.id)
    assert found is not None and found.outcome is Outcome.PASSED
    assert outcome_source(found) is RewardSource.HUMAN


def test_non_dict_extra_is_tolerated() -> None:
    traj = make_traj(source="eval")
    traj.extra = None  # type: ignore[assignment]
    assert outcome_source(traj) is RewardSource.SELF
    traj.extra = ["not", "a", "dict"]  # type: ignore[assignment]
    assert outcome_source(traj) is RewardSource.SELF


def test_source_weight_with_a_custom_table() -> None:
    human = make_traj(extra={"outcome_source": "human"})
    teacher = make_traj(extra={"outcome_source": "teacher"})
    table = {RewardSource.HUMAN: 2.0, RewardSource.TEACHER: 0.0}
    assert source_weight(human, table) == 2.0
    assert source_weight(teacher, table) == 0.0
    assert source_weight(make_traj(), table) == 0.3  # missing from the table: the heuristic default


def test_is_labeled(collector: TrajectoryCollector) -> None:
    assert is_labeled(make_traj(outcome=Outcome.PASSED)) and is_labeled(make_traj(outcome=Outcome.FAILED))
    unknown = make_traj(outcome=Outcome.UNKNOWN)
    assert not is_labeled(unknown)
    collector.append(unknown)
    collector.update_outcome(unknown.id, Outcome.PASSED, None, source="eval")
    found = collector.get(unknown.id)
    assert found is not None and is_labeled(found)


def test_steps_are_irrelevant_to_provenance() -> None:
    traj = Trajectory(user_request="x", steps=[Step(i=0, tool_name="bash", ok=False, error="boom")],
                      outcome=Outcome.FAILED, source="eval")
    assert outcome_source(traj) is RewardSource.SELF


# ----------------------------------------------------------------------------------------------- floors


def test_floor_defaults() -> None:
    f = Floors()
    assert (f.min_trajectories, f.min_samples, f.min_class_fraction) == (5, 20, 0.05)


def test_floors_pass_exactly_at_the_limits() -> None:
    assert Floors().check(trajectories=5, samples=20, positives=1) is None  # 1/20 = 5% exactly
    assert Floors().check(trajectories=5, samples=20, positives=19) is None
    assert Floors().check(trajectories=500, samples=10_000, positives=5_000) is None


def test_too_few_trajectories() -> None:
    reason = Floors().check(trajectories=4, samples=100, positives=50)
    assert reason == "only 4 usable trajectories (need at least 5); waiting for more data"


def test_too_few_samples() -> None:
    reason = Floors().check(trajectories=5, samples=19, positives=9)
    assert reason == "only 19 training samples (need at least 20); waiting for more data"


def test_too_few_positives() -> None:
    reason = Floors().check(trajectories=10, samples=40, positives=1)
    assert reason is not None
    assert reason.startswith("class balance too lopsided: 1 positive / 39 negative samples")
    assert "the positive class is 2.5% (need at least 5% each)" in reason


def test_too_few_negatives() -> None:
    reason = Floors().check(trajectories=10, samples=40, positives=40)
    assert reason is not None and "40 positive / 0 negative" in reason and "the negative class is 0.0%" in reason


def test_first_failing_floor_is_reported() -> None:
    reason = Floors().check(trajectories=0, samples=0, positives=0)
    assert reason is not None and reason.startswith("only 0 usable trajectories")


def test_custom_floors() -> None:
    loose = Floors(min_trajectories=1, min_samples=2, min_class_fraction=0.25)
    assert loose.check(1, 4, 1) is None
    reason = loose.check(1, 5, 1)
    assert reason is not None and "need at least 25% each" in reason
    zero = Floors(min_trajectories=0, min_samples=0)
    assert zero.check(0, 0, 0) is not None  # no samples at all is still a lopsided (empty) balance


# ----------------------------------------------------------------------------------------------- report


def test_report_defaults_to_dict() -> None:
    report = TrainerReport(kind="prm")
    d = report.to_dict()
    assert d["kind"] == "prm" and d["fit_attempted"] is False and d["class_balance"] is None
    assert orjson.loads(orjson.dumps(d)) == d
    assert set(d) == {
        "kind", "fit_attempted", "fit_succeeded", "bail_reason", "trajectories_seen", "trajectories_used",
        "samples", "positives", "negatives", "class_balance", "weight_by_source", "metrics", "fit",
        "checkpoint", "model_id", "seconds", "error", "gate", "rejected_model_id",
    }


def test_report_class_balance_and_rounding() -> None:
    report = TrainerReport(kind="router", samples=3, positives=1, negatives=2, seconds=1.234567)
    assert report.class_balance == pytest.approx(1 / 3)
    d = report.to_dict()
    assert d["class_balance"] == 0.3333 and d["seconds"] == 1.2346


def test_render_bail() -> None:
    reason = Floors().check(2, 10, 5)
    report = TrainerReport(kind="prm", bail_reason=reason, trajectories_seen=7, trajectories_used=2, samples=10,
                           positives=5, negatives=5)
    text = report.render()
    lines = text.splitlines()
    assert lines[0] == "prm trainer: did not fit"
    assert lines[1] == f"  reason: {reason}"
    assert "trajectories: 2 used of 7 read; samples: 10 (5 positive / 5 negative)" in text
    assert "checkpoint" not in text and "solver" not in text


def test_render_success_with_checkpoint() -> None:
    report = TrainerReport(
        kind="prm", fit_attempted=True, fit_succeeded=True, trajectories_seen=12, trajectories_used=10,
        samples=40, positives=25, negatives=15, weight_by_source={"self": 12.0, "human": 3.0},
        metrics={"auc": 0.91234, "n": 40}, fit={"iterations": 7, "converged": True, "seconds": 0.0123},
        checkpoint="/tmp/prm.json", model_id="abc123def456",
    )
    text = report.render()
    assert text.splitlines()[0] == "prm trainer: fitted"
    assert "  sample weight by outcome source: human 3, self 12" in text
    assert "  train metrics: auc 0.9123, n 40" in text
    assert "  solver: 7 iterations, converged=True, 12.3 ms" in text
    assert "  checkpoint: /tmp/prm.json (model abc123def456)" in text


def test_render_in_memory_and_error() -> None:
    fitted = TrainerReport(kind="router", fit_attempted=True, fit_succeeded=True, model_id="m1")
    assert "  model m1 kept in memory (no checkpoint path given)" in fitted.render()
    failed = TrainerReport(kind="router", fit_attempted=True, error="FitError: no sample has a positive weight")
    text = failed.render()
    assert "did not fit" in text and "  error: FitError: no sample has a positive weight" in text
    assert "kept in memory" not in text
