"""Self-consistency: answer normalization, the vote, (failed, passed) pairs, and labelling trajectories."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ghost_agent.feedback.self_consistency import (
    AGREEMENT_THRESHOLD,
    MIN_SAMPLES_FOR_MARKING,
    Sample,
    mark_trajectories_by_agreement,
    normalize_answer,
    numeric_key,
    pairwise_pass_fail,
    vote,
)
from ghost_agent.trajectories.record import Outcome, Trajectory

# --- normalization ------------------------------------------------------------------------------------------


def test_normalize_answer() -> None:
    assert normalize_answer("  The  Answer\nIS\tParis.  ") == "the answer is paris"
    assert normalize_answer("Really?!") == "really"
    assert normalize_answer("a, b;") == "a, b"  # only trailing punctuation goes
    assert normalize_answer(None) == ""
    assert normalize_answer(42) == "42"
    assert normalize_answer(" ... ") == ""


def test_numeric_key() -> None:
    assert {numeric_key(s) for s in ["42", "42.0", "4.2e1", "+42", "42.000"]} == {"42"}
    assert numeric_key("1,000") == numeric_key("1000") == "1000"
    assert numeric_key("-0") == numeric_key("0.0") == "0"
    assert numeric_key("0.50") == "0.5"
    for text in ["", "abc", "e5", "+", "1.2.3", "nan", "inf", "12abc"]:
        assert numeric_key(text) is None


def test_numeric_key_keeps_long_numbers_apart_and_short() -> None:
    a, b = "12345678901234567890123456789012345", "12345678901234567890123456789012346"
    assert numeric_key(a) != numeric_key(b)
    huge = numeric_key("1e999999999")
    assert huge is not None and len(huge) < 20


# --- the vote -----------------------------------------------------------------------------------------------


def test_majority_and_agreement() -> None:
    result = vote(["Paris", "paris.", " PARIS ", "Lyon", "Marseille"])
    assert result.majority == "paris"
    assert result.agreement == 0.6
    assert result.counts == {"paris": 3, "lyon": 1, "marseille": 1}
    assert result.normalized == ("paris", "paris", "paris", "lyon", "marseille")
    assert result.n == 5
    assert result.numeric is False


def test_numeric_answers_compare_numerically_when_all_parse() -> None:
    result = vote(["42", "42.0", "4.2e1", "41"])
    assert result.numeric is True
    assert result.majority == "42"
    assert result.agreement == 0.75


def test_mixed_numbers_and_words_compare_as_text() -> None:
    result = vote(["42", "42.0", "forty-two"])
    assert result.numeric is False
    assert result.majority is None  # "42" and "42.0" differ as text: a three-way tie


def test_tie_has_no_majority_but_reports_agreement() -> None:
    result = vote(["a", "a", "b", "b", "c"])
    assert result.majority is None
    assert result.agreement == 0.4


def test_empty_input() -> None:
    result = vote([])
    assert (result.majority, result.agreement, result.counts, result.normalized) == (None, 0.0, {}, ())


def test_abstentions_count_in_n_but_never_win() -> None:
    result = vote(["", None, "  ", "7"])
    assert result.majority == "7"
    assert result.agreement == 0.25
    assert vote([None, ""]).majority is None


def test_samples_and_strings_vote_alike() -> None:
    assert vote([Sample("x", "t1"), "X", Sample("y")]).majority == "x"


# --- pairwise_pass_fail -------------------------------------------------------------------------------------


def test_pairs_are_the_failed_by_passed_cross_product_in_input_order() -> None:
    samples = [Sample("4", "t0"), Sample("5", "t1"), Sample("4.0", "t2"), Sample("", "t3"), Sample("4", "t4")]
    pairs = pairwise_pass_fail(samples)
    assert [(f.trajectory_id, p.trajectory_id) for f, p in pairs] == [
        ("t1", "t0"),
        ("t1", "t2"),
        ("t1", "t4"),
        ("t3", "t0"),
        ("t3", "t2"),
        ("t3", "t4"),
    ]


def test_plain_strings_come_back_as_samples() -> None:
    assert pairwise_pass_fail(["a", "a", "b", None]) == [
        (Sample("b"), Sample("a")),
        (Sample("b"), Sample("a")),
        (Sample(""), Sample("a")),
        (Sample(""), Sample("a")),
    ]


def test_degenerate_cases_produce_no_pairs() -> None:
    assert pairwise_pass_fail([]) == []
    assert pairwise_pass_fail(["same", "Same.", " same "]) == []  # all agree
    assert pairwise_pass_fail(["a", "b"]) == []  # tie
    assert pairwise_pass_fail(["a", "a", "b", "b", "c"]) == []  # tied top
    assert pairwise_pass_fail([None, ""]) == []  # nothing answered
    assert pairwise_pass_fail(["only"]) == []


def test_min_agreement_gates_pairs() -> None:
    samples = ["a", "a", "b", "c", "d"]  # plurality "a" at 0.4
    assert len(pairwise_pass_fail(samples)) == 3 * 2
    assert pairwise_pass_fail(samples, min_agreement=0.5) == []


answers = st.one_of(
    st.none(), st.sampled_from(["a", "A ", "a.", "b", "c", "", "1", "1.0", "2", " 2 "]), st.text(max_size=4)
)


@given(st.lists(answers, max_size=12))
def test_pairs_only_join_a_non_majority_to_a_majority_answer(raw: list[str | None]) -> None:
    samples = [Sample("" if a is None else a, str(i)) for i, a in enumerate(raw)]
    result = vote(samples)
    assert 0.0 <= result.agreement <= 1.0
    pairs = pairwise_pass_fail(samples)
    if result.majority is None:
        assert pairs == []
        return
    keys = {s.trajectory_id: result.normalized[i] for i, s in enumerate(samples)}
    for failed, passed in pairs:
        assert keys[passed.trajectory_id] == result.majority
        assert keys[failed.trajectory_id] != result.majority
    on_majority = sum(1 for k in result.normalized if k == result.majority)
    assert result.agreement == on_majority / len(samples)
    assert len(pairs) == (len(samples) - on_majority) * on_majority


# --- labelling trajectories ---------------------------------------------------------------------------------


def batch(*answers: str) -> list[Trajectory]:
    return [Trajectory(source="self_consistency", user_request="6*7?", final_response=a) for a in answers]


def test_threshold_constants() -> None:
    assert 0.5 < AGREEMENT_THRESHOLD <= 1.0
    assert MIN_SAMPLES_FOR_MARKING == 3


def test_marks_majority_passed_and_the_rest_failed() -> None:
    trajs = batch("42", "42.0", "41", "42")
    result = mark_trajectories_by_agreement(trajs)
    assert result.majority == "42"
    assert [t.outcome for t in trajs] == [Outcome.PASSED, Outcome.PASSED, Outcome.FAILED, Outcome.PASSED]
    assert trajs[2].failure_reason == "self_consistency: answer '41' disagrees with majority '42' (agreement 0.75)"
    assert trajs[0].failure_reason is None
    assert trajs[0].extra["self_consistency"] == {"majority": "42", "agreement": 0.75, "n": 4, "labelled": True}


def test_agreement_exactly_at_the_threshold_labels() -> None:
    trajs = batch("x", "x", "x", "y", "z")  # 3/5 = 0.6
    mark_trajectories_by_agreement(trajs, threshold=0.6)
    assert [t.outcome for t in trajs] == [Outcome.PASSED] * 3 + [Outcome.FAILED] * 2


def test_below_threshold_labels_nothing_but_records_the_vote() -> None:
    trajs = batch("x", "x", "y", "z", "w")  # 0.4
    mark_trajectories_by_agreement(trajs)
    assert all(t.outcome is Outcome.UNKNOWN for t in trajs)
    assert trajs[0].extra["self_consistency"]["labelled"] is False


def test_too_few_samples_label_nothing() -> None:
    trajs = batch("x", "x")
    mark_trajectories_by_agreement(trajs)
    assert all(t.outcome is Outcome.UNKNOWN for t in trajs)


def test_tie_labels_nothing() -> None:
    trajs = batch("x", "x", "y", "y")
    mark_trajectories_by_agreement(trajs, threshold=0.0)
    assert all(t.outcome is Outcome.UNKNOWN for t in trajs)


def test_decided_outcomes_stand() -> None:
    trajs = batch("x", "x", "x", "y")
    trajs[3].outcome = Outcome.PASSED  # a validator said so
    trajs[0].outcome = Outcome.FAILED
    mark_trajectories_by_agreement(trajs)
    assert [t.outcome for t in trajs] == [Outcome.FAILED, Outcome.PASSED, Outcome.PASSED, Outcome.PASSED]
    assert "self_consistency" not in trajs[3].extra


def test_answer_extractor() -> None:
    trajs = batch("The answer is 42", "So... 42", "I get 41")
    result = mark_trajectories_by_agreement(trajs, answer_of=lambda t: t.final_response.split()[-1])
    assert result.majority == "42"
    assert [t.outcome for t in trajs] == [Outcome.PASSED, Outcome.PASSED, Outcome.FAILED]


def test_empty_batch() -> None:
    assert mark_trajectories_by_agreement([]).majority is None
