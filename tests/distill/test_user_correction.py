"""The user-correction classifier: phrase coverage, single-signal guards, anchoring, thresholds, bad inputs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ghost_agent.distill import user_correction as uc
from ghost_agent.distill.user_correction import (
    JACCARD_REPHRASE_THRESHOLD,
    MIN_CURRENT_TOKENS_FOR_REPHRASE,
    CorrectionVerdict,
    classify_user_correction,
    content_tokens,
    jaccard,
    match_correction_phrase,
)

PRIOR = "How do I reverse a linked list in python?"


# --- both signals: genuine corrections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "prior, current",
    [
        (PRIOR, "No, I meant how to reverse a linked list in python recursively"),
        (PRIOR, "Actually, reverse the linked list in place in python"),
        ("parse the json config file", "Nope, parse the yaml config file"),
        ("convert 100 usd to eur", "Wrong - convert 100 usd to gbp"),
        ("write a bash script to rename all jpg files", "That's not what I asked. A bash script to rename jpg files"),
        ("fix the failing test_login_flow test", "still doesn't work, test_login_flow test fails"),
        ("sort the users table by signup_date", "  ...you misunderstood: sort users by signup_date descending"),
        ("summarize the quarterly report", "Please try again: summarize the quarterly report briefly"),
    ],
)
def test_genuine_corrections_fire_both_signals(prior: str, current: str) -> None:
    verdict = classify_user_correction(prior, current)
    assert verdict.is_correction is True
    assert verdict.signals == ("phrase", "rephrase")
    assert verdict.jaccard >= JACCARD_REPHRASE_THRESHOLD


# --- Signal A: phrase coverage, anchoring, word boundaries --------------------------------------------------


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("no", "no"),
        ("No.", "no"),
        ("nope, the other one", "nope"),
        ("Wrong answer", "wrong"),
        ("actually I need the sum", "actually"),
        ("That's not right", "that's not right"),
        ("That is not right", "that is not right"),
        ("that’s wrong", "that's wrong"),  # curly apostrophe
        ("thats wrong", "thats wrong"),  # no apostrophe at all
        ("Not quite.", "not quite"),
        ("Incorrect, it's 7", "incorrect"),
        ("I meant the second file", "i meant"),
        ("I mean the second file", "i mean"),
        ("You misunderstood me", "you misunderstood"),
        ("you got it wrong", "you got it wrong"),
        ("Try again", "try again"),
        ("redo it", "redo"),
        ("didn't work", "didn't work"),
        ("Doesn't work for me", "doesn't work"),
        ("still doesn't work", "still doesn't work"),
        ("That's not what I asked for", "that's not what i asked"),
        ("that's not what I wanted", "that's not what i wanted"),
        ("  \n> No!", "no"),  # leading whitespace and punctuation/quote markup
        ("Sorry, I meant Tuesday", "i meant"),  # a short filler before the phrase
        ("Hmm, not quite", "not quite"),
        ("NO   WAY", "no"),
    ],
)
def test_phrase_coverage(text: str, phrase: str) -> None:
    assert match_correction_phrase(text) == phrase


@pytest.mark.parametrize(
    "text",
    [
        "I said no to that",  # "no" not at the start
        "Thanks! Actually great answer",  # "actually" not at the start
        "nobody told me about the cache",  # word boundary
        "notice the second column",
        "knowledge of the API would help",
        "nowhere in the docs",
        "redone already, thanks",
        "wrongful termination law in Ohio",
        "No one answered my question about caching",  # "no one" is not a verdict
        "No problem, next: list the tables",
        "Great, now add tests",
        "",
    ],
)
def test_phrase_does_not_fire(text: str) -> None:
    assert match_correction_phrase(text) is None


# --- single-signal guards -----------------------------------------------------------------------------------


def test_phrase_without_rephrase_is_not_a_correction() -> None:
    verdict = classify_user_correction("What is the capital of Australia?", "No, I think you're right")
    assert verdict.signals == ("phrase",)
    assert verdict.is_correction is False


def test_rephrase_without_phrase_is_not_a_correction() -> None:
    verdict = classify_user_correction(
        "What is the capital of Australia?", "and also, what about the capital of Australia?"
    )
    assert verdict.signals == ("rephrase",)
    assert verdict.jaccard >= JACCARD_REPHRASE_THRESHOLD
    assert verdict.is_correction is False


def test_anchoring_blocks_a_rephrase_with_an_inner_no() -> None:
    verdict = classify_user_correction(
        "reverse a linked list in python", "I said no recursion: reverse a linked list in python"
    )
    assert "rephrase" in verdict.signals
    assert verdict.matched_phrase is None
    assert verdict.is_correction is False


def test_phrase_on_an_unrelated_follow_up_is_not_a_correction() -> None:
    verdict = classify_user_correction(PRIOR, "Actually, can you also explain binary search trees?")
    assert verdict.signals == ("phrase",)
    assert verdict.is_correction is False


# --- thresholds pinned to the constants ---------------------------------------------------------------------


def test_threshold_constants() -> None:
    assert JACCARD_REPHRASE_THRESHOLD == 0.40
    assert MIN_CURRENT_TOKENS_FOR_REPHRASE == 2


def test_a_pair_exactly_at_the_threshold_fires() -> None:
    # prior {parse, json, config, file}, current {parse, json, output}: 2 shared of 5 → exactly 0.40.
    verdict = classify_user_correction("parse the json config file", "no, parse json output")
    assert verdict.jaccard == JACCARD_REPHRASE_THRESHOLD
    assert verdict.is_correction is True


def test_a_pair_just_below_the_threshold_does_not_fire() -> None:
    # One more new token: 2 shared of 6.
    verdict = classify_user_correction("parse the json config file", "no, parse json output today")
    assert verdict.jaccard == pytest.approx(2 / 6)
    assert verdict.signals == ("phrase",)


def test_threshold_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc, "JACCARD_REPHRASE_THRESHOLD", 0.41)
    assert classify_user_correction("parse the json config file", "no, parse json output").is_correction is False


def test_bare_no_cannot_be_a_rephrase() -> None:
    verdict = classify_user_correction("list files in the directory", "no")
    assert verdict.signals == ("phrase",)
    assert verdict.jaccard == 0.0


def test_min_current_tokens_guard_holds_even_at_full_overlap() -> None:
    # One content token on each side, identical: Jaccard 1.0, but one token is not enough to call it a rephrase.
    verdict = classify_user_correction("python?", "No, python")
    assert verdict.jaccard == 1.0
    assert len(content_tokens("No, python")) < MIN_CURRENT_TOKENS_FOR_REPHRASE
    assert verdict.signals == ("phrase",)
    assert verdict.is_correction is False


def test_min_tokens_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc, "MIN_CURRENT_TOKENS_FOR_REPHRASE", 1)
    assert classify_user_correction("python?", "No, python").is_correction is True


# --- tokens -------------------------------------------------------------------------------------------------


def test_content_tokens_keep_identifiers_and_digits() -> None:
    assert content_tokens("Rename my_var to user_id in v2 of the 2024 report") == {
        "rename",
        "my_var",
        "user_id",
        "v2",
        "2024",
        "report",
    }


def test_content_tokens_drop_stopwords_contractions_and_correction_words() -> None:
    assert content_tokens("No, actually I don't think that's what you should do") == frozenset()
    assert content_tokens("dont thats youre") == frozenset()
    assert content_tokens("the user's id") == {"user", "id"}


def test_jaccard_edges() -> None:
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(frozenset({"a"}), frozenset()) == 0.0
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "a"})) == 1.0


# --- defensive inputs and the verdict shape -----------------------------------------------------------------


@pytest.mark.parametrize(
    "prior, current",
    [
        (None, None),
        (None, "No, parse the yaml config"),
        ("parse yaml config", None),
        (5, "no"),
        ("x", 12),
        ([], {}),
        (b"no", b"no"),
    ],
)
def test_non_string_inputs_are_never_a_correction(prior: Any, current: Any) -> None:
    verdict = classify_user_correction(prior, current)
    assert verdict.is_correction is False


def test_none_prior_still_reports_the_phrase() -> None:
    verdict = classify_user_correction(None, "No, parse the yaml config")
    assert verdict.signals == ("phrase",)
    assert verdict.jaccard == 0.0


def test_verdict_shape_contract() -> None:
    verdict = classify_user_correction(PRIOR, "No, I meant how to reverse a linked list in python recursively")
    assert isinstance(verdict, CorrectionVerdict)
    assert [f.name for f in dataclasses.fields(CorrectionVerdict)] == [
        "is_correction",
        "signals",
        "jaccard",
        "matched_phrase",
    ]
    assert isinstance(verdict.is_correction, bool)
    assert isinstance(verdict.signals, tuple)
    assert isinstance(verdict.jaccard, float)
    assert 0.0 <= verdict.jaccard <= 1.0
    assert verdict.matched_phrase == "no"
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.is_correction = False  # type: ignore[misc]


def test_empty_verdict_shape() -> None:
    assert classify_user_correction("", "") == CorrectionVerdict(
        is_correction=False, signals=(), jaccard=0.0, matched_phrase=None
    )
