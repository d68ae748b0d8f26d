"""The reward adapter's contract (seed 002): the Reward tuple, labels, kwarg filtering, CRASH on a raising
verifier, thresholds, serialization and GRPO's group advantage."""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

import pytest

from ghost_agent.eval.verifiers import contains, is_refusal, mcq_letter, numeric_match
from ghost_agent.learned.reward import FailureLabel, Reward, RewardAdapter, RewardError, group_advantage

# --- FailureLabel ---------------------------------------------------------------------------------------------


def test_the_vocabulary_has_ten_string_labels_and_only_infra_failures_are_noise() -> None:
    assert len(FailureLabel) == 10
    assert FailureLabel("keep") is FailureLabel.KEEP and FailureLabel.KEEP == "keep"
    noise = {label for label in FailureLabel if not label.is_informational}
    assert noise == {FailureLabel.CRASH, FailureLabel.TIMEOUT, FailureLabel.TRANSPORT_ERROR}
    for label in FailureLabel:  # every label is documented in the class table
        assert f"| {label.name} " in (FailureLabel.__doc__ or "")


# --- Reward ---------------------------------------------------------------------------------------------------


def test_scalar_is_the_partial_credit_score_when_present_else_the_pass_bit() -> None:
    assert Reward(True, FailureLabel.KEEP).scalar == 1.0
    assert Reward(False, FailureLabel.DISCARD).scalar == 0.0
    assert Reward(False, FailureLabel.PARTIAL, {"score": 0.25}).scalar == 0.25
    assert Reward(True, FailureLabel.KEEP, {"score": 0.8}).scalar == 0.8
    assert Reward(False, FailureLabel.DISCARD, {"score": "n/a"}).scalar == 0.0  # not a number: the pass bit
    assert Reward(False, FailureLabel.DISCARD, {"score": True}).scalar == 0.0  # a bool is not a score


def test_success_must_agree_with_the_label() -> None:
    with pytest.raises(RewardError, match="contradicts"):
        Reward(True, FailureLabel.DISCARD)
    with pytest.raises(RewardError, match="contradicts"):
        Reward(False, FailureLabel.KEEP)
    with pytest.raises(RewardError, match="FailureLabel"):
        Reward(False, "discard")  # type: ignore[arg-type]


def test_to_dict_and_from_dict_round_trip() -> None:
    reward = Reward(False, FailureLabel.PARTIAL, {"score": 0.5, "verifier": "contains"})
    data = reward.to_dict()
    assert data == {"success": False, "failure_class": "partial", "scalar": 0.5,
                    "auxiliary": {"score": 0.5, "verifier": "contains"}}
    assert Reward.from_dict(data) == reward
    assert Reward.from_dict({"success": True, "failure_class": "keep"}) == Reward(True, FailureLabel.KEEP)
    for bad in ({}, {"success": False, "failure_class": "nope"}, {"success": True, "failure_class": "discard"}):
        with pytest.raises(RewardError):
            Reward.from_dict(bad)


def test_timeout_crash_and_transport_constructors() -> None:
    t = Reward.timeout(30, task="t1")
    assert (t.success, t.failure_class, t.auxiliary) == (False, FailureLabel.TIMEOUT, {"timeout_s": 30.0, "task": "t1"})
    assert not t.is_informational and t.scalar == 0.0
    assert Reward.timeout("read timed out").auxiliary == {"error": "read timed out"}
    c = Reward.crash(ValueError("boom"))
    assert c.failure_class is FailureLabel.CRASH and c.auxiliary["error"] == "ValueError: boom"
    e = Reward.transport_error("HTTP 502")
    assert e.failure_class is FailureLabel.TRANSPORT_ERROR and e.auxiliary == {"error": "HTTP 502"}


# --- RewardAdapter --------------------------------------------------------------------------------------------


@dataclass
class Rollout:
    predicted: Any
    expected: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None


def test_a_pass_is_keep_and_a_miss_is_discard_with_the_score_kept() -> None:
    adapter = RewardAdapter(numeric_match)
    keep = adapter.score({"predicted": "The answer is 338,350.", "expected": 338350})
    assert keep.success and keep.failure_class is FailureLabel.KEEP
    assert keep.auxiliary == {"verifier": "numeric_match", "threshold": 1.0, "score": 1.0}
    miss = adapter.score(Rollout("The answer is 12.", 338350))
    assert not miss.success and miss.failure_class is FailureLabel.DISCARD and miss.auxiliary["score"] == 0.0


def test_kwargs_are_filtered_to_what_the_verifier_accepts() -> None:
    seen: list[dict[str, Any]] = []

    def strict(predicted: str, expected: Any, *, case: bool = False) -> float:
        seen.append({"case": case})
        return 1.0

    def open_ended(predicted: str, expected: Any, **kw: Any) -> float:
        seen.append(dict(kw))
        return 1.0

    options = {"rel_tolerance": 0.1, "case": True, "sandbox": object()}
    adapter = RewardAdapter(strict, scorer_kwargs=options)
    assert adapter.scorer_kwargs == {"case": True} and adapter.dropped_kwargs == ("rel_tolerance", "sandbox")
    assert adapter.score({"predicted": "x", "kwargs": {"rel_tolerance": 9, "case": False}}).success  # no TypeError
    assert seen.pop() == {"case": False}  # per-rollout kwargs override, filtered the same way
    opened = RewardAdapter(open_ended, scorer_kwargs=options)
    opened.score({"predicted": "x", "kwargs": {"extra": 1}})
    assert seen.pop() == {**options, "extra": 1}  # **kwargs receives everything


def test_numeric_match_never_receives_an_option_it_does_not_take_and_uses_the_one_it_does() -> None:
    adapter = RewardAdapter(numeric_match, scorer_kwargs={"rel_tolerance": 0.05, "choices": "AB"})
    assert adapter.scorer_kwargs == {"rel_tolerance": 0.05}
    assert adapter.score({"predicted": "about 103", "expected": 100}).failure_class is FailureLabel.KEEP
    assert RewardAdapter(numeric_match).score({"predicted": "about 103", "expected": 100}).success is False


def test_the_expected_and_predicted_names_never_leak_in_as_kwargs() -> None:
    def verifier(got: str, want: Any, *, n: int = 0) -> float:
        return float(got == want)

    adapter = RewardAdapter(verifier, scorer_kwargs={"got": "x", "want": "y", "n": 1})
    assert adapter.scorer_kwargs == {"n": 1}
    assert adapter.score({"predicted": "a", "expected": "a"}).success


def test_a_raising_or_misbehaving_verifier_is_a_crash_reward_and_the_group_survives() -> None:
    def flaky(predicted: str, expected: Any) -> float:
        if predicted == "boom":
            raise ZeroDivisionError("division by zero")
        return 1.0

    rewards = RewardAdapter(flaky).score_group([{"predicted": "ok"}, {"predicted": "boom"}, {"predicted": "ok"}])
    assert [r.failure_class for r in rewards] == [FailureLabel.KEEP, FailureLabel.CRASH, FailureLabel.KEEP]
    assert rewards[1].auxiliary["error"] == "ZeroDivisionError: division by zero"
    assert rewards[1].auxiliary["verifier"] == "flaky" and not rewards[1].is_informational
    for bad in (None, "1.0", math.nan, math.inf):
        crash = RewardAdapter(lambda p, e, bad=bad: bad).score({"predicted": "x"})
        assert crash.failure_class is FailureLabel.CRASH and "not a finite number" in crash.auxiliary["error"]
    assert RewardAdapter(lambda p, e: True).score({"predicted": "x"}).success  # a bool verdict is 1.0 / 0.0
    # A malformed task (numeric_match cannot parse expected) is a crash, not a scored miss.
    assert RewardAdapter(numeric_match).score({"predicted": "4", "expected": "four"}).failure_class is \
        FailureLabel.CRASH


def test_thresholds_decide_keep_and_partial_credit_is_labelled() -> None:
    needles = ["alpha", "beta", "gamma", "delta"]
    rollout = {"predicted": "alpha beta gamma", "expected": needles}
    strict = RewardAdapter(contains).score(rollout)
    assert strict.failure_class is FailureLabel.PARTIAL and strict.scalar == 0.75
    lenient = RewardAdapter(contains, pass_threshold=0.75).score(rollout)
    assert lenient.success and lenient.scalar == 0.75
    assert not RewardAdapter(contains, pass_threshold=0.76).score(rollout).success
    assert RewardAdapter(contains).score({"predicted": "none", "expected": needles}).failure_class is \
        FailureLabel.DISCARD


@pytest.mark.parametrize("threshold", [0, -0.5, 1.01, math.nan, "1", True])
def test_bad_thresholds_are_caller_errors(threshold: Any) -> None:
    with pytest.raises(RewardError, match="pass_threshold"):
        RewardAdapter(contains, pass_threshold=threshold)


def test_caller_mistakes_raise_reward_error() -> None:
    with pytest.raises(RewardError, match="callable"):
        RewardAdapter("numeric_match")  # type: ignore[arg-type]
    with pytest.raises(RewardError, match="mapping"):
        RewardAdapter(contains, scorer_kwargs=[("a", 1)])  # type: ignore[arg-type]
    adapter = RewardAdapter(contains)
    for rollout in ({}, {"predicted": None}, Rollout(None), "a bare string", 42):
        with pytest.raises(RewardError, match="no prediction"):
            adapter.score(rollout)
    with pytest.raises(RewardError, match="must be a string"):
        adapter.score({"predicted": 42})
    with pytest.raises(RewardError, match="kwargs must be a mapping"):
        adapter.score({"predicted": "x", "expected": "x", "kwargs": ["case_sensitive"]})


def test_miss_labels_empty_refusal_truncated_format_error() -> None:
    adapter = RewardAdapter(numeric_match)
    label = lambda **r: adapter.score({"expected": 7, **r}).failure_class  # noqa: E731
    assert label(predicted="   \n") is FailureLabel.EMPTY
    refusal = adapter.score({"predicted": "I'm sorry, but I can't help with that.", "expected": 7})
    assert refusal.failure_class is FailureLabel.REFUSAL and refusal.auxiliary["refusal"] is True
    assert label(predicted="The sum is 1, 2, and then", finish_reason="length") is FailureLabel.TRUNCATED
    assert label(predicted="The answer is seven.") is FailureLabel.FORMAT_ERROR  # nothing numeric to grade
    assert label(predicted="The answer is 8.") is FailureLabel.DISCARD
    assert label(predicted="It is 7.", finish_reason="length") is FailureLabel.KEEP  # a pass is a pass
    letters = RewardAdapter(mcq_letter)
    assert letters.score({"predicted": "Hmm, hard to say.", "expected": "B"}).failure_class is \
        FailureLabel.FORMAT_ERROR
    assert letters.score({"predicted": "Answer: C", "expected": "B"}).failure_class is FailureLabel.DISCARD
    quiet = RewardAdapter(numeric_match, detect_refusal=False)
    assert quiet.score({"predicted": "I cannot help with that.", "expected": 7}).failure_class is \
        FailureLabel.FORMAT_ERROR


def test_a_task_that_expects_a_refusal_keeps_it() -> None:
    adapter = RewardAdapter(is_refusal)
    assert adapter.score({"predicted": "I won't help with that."}).failure_class is FailureLabel.KEEP
    assert adapter.score({"predicted": "Sure, here it is."}).failure_class is FailureLabel.DISCARD


def test_a_partial_verifier_is_named_by_its_function() -> None:
    adapter = RewardAdapter(functools.partial(numeric_match, rel_tolerance=0.5))
    assert adapter.name == "numeric_match"
    assert adapter.score({"predicted": "140", "expected": 100}).success


# --- group_advantage ------------------------------------------------------------------------------------------


def test_group_advantage_standardizes_with_the_population_std() -> None:
    adv = group_advantage([1.0, 0.0, 0.0, 1.0], eps=0.0)
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0])
    values = [0.0, 0.25, 1.0]
    mean, std = statistics.fmean(values), statistics.pstdev(values)
    assert group_advantage(values) == pytest.approx([(v - mean) / (std + 1e-8) for v in values], rel=1e-12)
    assert sum(group_advantage(values)) == pytest.approx(0.0, abs=1e-12)


def test_group_advantage_without_std_only_centers() -> None:
    assert group_advantage([1.0, 0.0, 0.5], normalize_std=False) == pytest.approx([0.5, -0.5, 0.0])
    assert group_advantage([3, 1], normalize_std=False) == [1.0, -1.0]


def test_eps_guards_the_division() -> None:
    # [1, 0]: mean 0.5, population std 0.5; a big eps visibly shrinks the advantages.
    assert group_advantage([1.0, 0.0], eps=0.5) == pytest.approx([0.5, -0.5])
    assert group_advantage([1.0, 0.0]) == pytest.approx([1.0, -1.0])
    with pytest.raises(RewardError, match="eps"):
        group_advantage([1.0, 0.0], eps=-1e-8)


def test_a_degenerate_group_has_zero_advantage() -> None:
    assert group_advantage([1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]
    assert group_advantage([0.1, 0.1, 0.1]) == [0.0, 0.0, 0.0]  # even where the float mean is not exactly 0.1
    assert group_advantage([0.0, 0.0], normalize_std=False) == [0.0, 0.0]
    assert group_advantage([0.7]) == [0.0]
    assert group_advantage([]) == []


def test_group_advantage_takes_rewards_by_their_scalar() -> None:
    group = [Reward(True, FailureLabel.KEEP), Reward(False, FailureLabel.PARTIAL, {"score": 0.5}),
             Reward.crash("boom"), True]
    assert group_advantage(group, normalize_std=False) == pytest.approx([0.375, -0.125, -0.625, 0.375])
    for bad in ([1.0, math.nan], [1.0, "0.5"], [math.inf, 0.0]):
        with pytest.raises(RewardError, match="finite"):
            group_advantage(bad)  # type: ignore[arg-type]
