"""The user-correction classifier: the cue scorer's shapes and context rules, the legacy two-signal rule it
replaced (kept for comparison), tokens, bad inputs and the verdict contract. Precision/recall over the labelled
set: `test_labelled_set.py`."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ghost_agent.feedback.correction import detector as uc
from ghost_agent.feedback.correction.detector import (
    JACCARD_REPHRASE_THRESHOLD,
    MIN_CURRENT_TOKENS_FOR_REPHRASE,
    CorrectionVerdict,
    classify_user_correction,
    classify_user_correction_legacy,
    match_correction_phrase,
)
from ghost_agent.feedback.correction.score import CORRECTION_SCORE_THRESHOLD

PRIOR = "How do I reverse a linked list in python?"
ISSUE_PRIOR = "How much is 15% of 2340 dollars? Give me the answer formatted like $1,234.56"
ISSUE_REPLY = "15% of 2340 is 351."
ISSUE_FOLLOW_UP = "No, wrong format — tell me what 15% of 2340 dollars is, as $351.00"


# --- the cue scorer: corrections people actually write ------------------------------------------------------


def test_the_issue_example_is_a_correction_that_the_legacy_rule_missed() -> None:
    verdict = classify_user_correction(ISSUE_PRIOR, ISSUE_FOLLOW_UP, ISSUE_REPLY)
    assert verdict.is_correction is True
    assert verdict.matched_phrase == "no"
    assert {"no", "format_complaint"} <= set(verdict.signals)
    assert verdict.jaccard == pytest.approx(0.27, abs=0.005)  # the issue's figure: why the legacy rule missed it
    assert classify_user_correction_legacy(ISSUE_PRIOR, ISSUE_FOLLOW_UP).is_correction is False


@pytest.mark.parametrize(
    "prior, reply, follow_up",
    [
        # explicit rejections, with and without a rephrase
        ("what's the capital of australia", "The capital of Australia is Sydney.", "No. It's Canberra."),
        ("What is 17 * 23?", "17 * 23 = 381", "That's wrong, 17*23 is 391"),
        ("Who wrote Pride and Prejudice?", "Charlotte Brontë.", "that's incorrect, it was Jane Austen"),
        ("Give me a bash one-liner to count lines", "Here's a Python script...", "That's not what I asked for."),
        ("Show me how to read a CSV with pandas", "Use the csv module...", "I asked about pandas, not the csv module"),
        ("Give me the formula for a circle", "Circumference = 2πr", "I meant area, not circumference"),
        ("When did Apollo 11 land?", "July 20, 1968.", "Actually it was 1969"),
        ("List the three largest US states as JSON", "Alaska, Texas and California.", "wrong format, I need JSON"),
        ("Name a prime between 90 and 100", "91 is prime.", "Redo that, 91 = 7*13"),
        ("Write a haiku about autumn", "Leaves fall down...", "try again but with the right syllable count, 5-7-5"),
        ("Give me a packing list, including sunscreen", "Towel, swimsuit, hat", "you forgot the sunscreen"),
        ("What's 2 to the power of 10?", "2^10 = 1000", "It should be 1024, not 1000"),
        ("How many continents are there?", "There are 5.", "Hmm, I think that's incorrect — most sources say 7"),
        ("How many ounces in a pound?", "12.", "Hm, I could be wrong but I thought it was 16"),
        ("Who painted the Mona Lisa?", "Michelangelo.", "Are you sure? I'm pretty sure it was Leonardo da Vinci."),
        ("How do I fix 'permission denied'?", "Run `chmod 644 script.sh`.", "still getting permission denied"),
        ("Flatten [[1,2],[3]] in one line", "flat = sum(lists)", "that throws TypeError: unsupported operand"),
        ("Reply only yes or no: is Paris in France?", "Yes, Paris is...", "I told you to reply only with yes or no"),
        ("Explain a closure", "A function with no access to outer variables.", "That's the opposite of what it is."),
        ("What's the formula for kinetic energy?", "KE = mv", "That's momentum."),
        ("How many letters in the English alphabet?", "24.", "26*"),
        ("What's the capital of Scotland?", "Glasgow.", "Close, but it's Edinburgh"),
        ("How do I check my python version?", "python --verison", "typo, it's --version"),
        ("Give me a JSON object with name and age", "{name: 'Ann'}", "that isn't valid JSON, keys need quotes"),
        ("how many seconds in an hour", "360 seconds.", "3600 not 360"),
        # terse, and in other casing / punctuation
        ("What's 9 * 7?", "9 * 7 = 56", "wrong"),
        ("capital of canada?", "Toronto", "nope"),
        ("Is 51 prime?", "Yes, 51 is prime.", "No."),
        ("What's the largest ocean?", "The Atlantic.", "Incorrect."),
        ("what's 100 divided by 8", "13.5", "not quite"),
        ("How many minutes in a day?", "1,400.", "NO. 24*60 = 1440"),
        ("Spell 'necessary'", "neccessary", "WRONG!!! there's one c"),
        ("What does `git pull` do?", "It uploads your commits.", "Thats Not Right, that's git push"),
        ("Make the title bold in markdown", "*My Title*", "THAT’S ITALIC"),  # curly apostrophe
    ],
)
def test_corrections_of_many_shapes(prior: str, reply: str, follow_up: str) -> None:
    verdict = classify_user_correction(prior, follow_up, reply)
    assert verdict.is_correction is True, verdict.reason
    assert verdict.score >= CORRECTION_SCORE_THRESHOLD


@pytest.mark.parametrize(
    "prior, reply, follow_up",
    [
        ("What is 17 * 23?", "17 * 23 = 391", "thanks!"),
        ("How do I undo my last commit?", "`git reset --soft HEAD~1`", "Perfect, that worked. Thank you!"),
        # follow-ups that reuse most of the request's words
        ("Write a python function that reverses a linked list", "def reverse(head): ...",
         "Great, now write a python function that reverses a doubly linked list"),
        ("What's 15% of 2340 dollars?", "$351.00", "And what's 20% of 2340 dollars?"),
        ("What is the capital of Australia?", "Canberra.", "and also, what about the capital of Australia?"),
        # "no" that is not a verdict
        ("Sorry for the long code dump", "No problem! The bug is on line 12.", "No worries, got it fixed now"),
        ("How do I center a div?", "Use flexbox. Anything else you need?", "No, that's all, thanks"),
        ("Is it ok to commit .env files?", "No, add it to .gitignore.", "No, you're right, I'll add it"),
        ("What is the capital of Australia?", "Canberra.", "No, I think you're right"),
        ("What tools can I use to build a website?", "WordPress, Hugo...", "No-code tools for building a CRM?"),
        ("How do I delete a git branch?", "`git branch -d name`", "Is there no way to delete it on the remote too?"),
        ("What's a good first language?", "Python.", "No one in my class knows Python though, is JS ok?"),
        ("What's the best way to learn guitar?", "Open chords, daily.", "No time for lessons though, any apps?"),
        ("Write a function to parse log dates", "Sure. Should I include timezone handling?", "No, all logs are UTC."),
        ("Write a tagline for a coffee shop", "Brewed for the bold.", "not bad!"),
        ("Is coffee bad for you?", "In moderation it's fine.", "Not what I hoped to hear, but okay"),
        # "actually", "wrong", "try" in other senses
        ("What's the capital of Peru?", "Lima.", "Actually, one more thing: what's the capital of Chile?"),
        (PRIOR, "Iterate with prev/curr pointers.", "Actually, can you also explain binary search trees?"),
        ("Handle errors in async code?", "Wrap awaits in try/except.", "What could go wrong if I forget to await?"),
        ("Why does my function return None?", "Add `return total`.", "Thanks! I was wrong about the loop then."),
        ("Explain python decorators", "A decorator wraps...", "I meant to ask earlier — staticmethod vs classmethod?"),
        ("Write a haiku about autumn", "Crisp leaves drift...", "Try another one about winter"),
        # context added without rejecting, and questions about the answer
        ("Suggest a name for my bakery", "Rise & Shine.", "It's a vegan bakery, by the way, if that changes anything"),
        ("How do I set an environment variable?", "`export VAR=value`", "For context I'm on Windows — same idea?"),
        ("How do I undo my last commit?", "`git reset --soft HEAD~1`", "What does --soft do exactly?"),
    ],
)
def test_non_corrections(prior: str, reply: str, follow_up: str) -> None:
    verdict = classify_user_correction(prior, follow_up, reply)
    assert verdict.is_correction is False, verdict.reason


def test_a_no_that_answers_the_assistants_question_is_not_a_verdict() -> None:
    prior = "Write an email to my landlord about the broken heater"
    asked = classify_user_correction(prior, "nope, keep it friendly", "Should I make it formal?")
    told = classify_user_correction(prior, "nope, keep it friendly", "Dear Sir or Madam, I write to inform you...")
    assert asked.is_correction is False
    assert told.is_correction is True and told.matched_phrase == "nope"


def test_an_explicit_verdict_still_counts_after_the_assistant_asked_something() -> None:
    verdict = classify_user_correction("What's 9 * 7?", "That's wrong, it's 63", "9 * 7 = 56. Anything else?")
    assert verdict.is_correction is True


def test_praise_keeps_only_explicit_verdicts() -> None:
    prior, reply = "Give me the SQL for recent orders", "SELECT * FROM orders ORDER BY created_at DESC;"
    assert classify_user_correction(prior, "Great, now do it for Java, not Python", reply).is_correction is False
    assert classify_user_correction(prior, "Thanks, but it still doesn't work", reply).is_correction is True


def test_a_rephrase_alone_is_never_a_correction_but_supports_a_cue() -> None:
    verdict = classify_user_correction(PRIOR, "how do I reverse a linked list in python in place", "Use prev/curr.")
    assert verdict.jaccard >= JACCARD_REPHRASE_THRESHOLD
    assert verdict.signals == () and verdict.is_correction is False  # a question typed without "?" claims nothing
    supported = classify_user_correction(PRIOR, "No, I meant how to reverse a linked list in python recursively")
    assert "rephrase" in supported.signals


def test_the_reply_is_optional() -> None:
    assert classify_user_correction("What is 17 * 23?", "That's wrong, 17*23 is 391").is_correction is True
    assert classify_user_correction("What is 17 * 23?", "thanks!", None).is_correction is False


# --- the legacy rule (phrase AND rephrase), kept for the benchmark's comparison -----------------------------


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
def test_legacy_corrections_fire_both_signals_and_the_new_scorer_agrees(prior: str, current: str) -> None:
    verdict = classify_user_correction_legacy(prior, current)
    assert verdict.is_correction is True
    assert verdict.signals == ("phrase", "rephrase")
    assert verdict.jaccard >= JACCARD_REPHRASE_THRESHOLD
    assert classify_user_correction(prior, current).is_correction is True


def test_legacy_phrase_without_rephrase_is_not_a_correction() -> None:
    verdict = classify_user_correction_legacy("What is the capital of Australia?", "No, I think you're right")
    assert verdict.signals == ("phrase",)
    assert verdict.is_correction is False


def test_legacy_rephrase_without_phrase_is_not_a_correction() -> None:
    verdict = classify_user_correction_legacy(
        "What is the capital of Australia?", "and also, what about the capital of Australia?"
    )
    assert verdict.signals == ("rephrase",)
    assert verdict.is_correction is False


def test_legacy_anchoring_blocks_an_inner_no_which_the_new_scorer_reads_as_i_said() -> None:
    prior, current = "reverse a linked list in python", "I said no recursion: reverse a linked list in python"
    legacy = classify_user_correction_legacy(prior, current)
    assert "rephrase" in legacy.signals and legacy.matched_phrase is None and legacy.is_correction is False
    verdict = classify_user_correction(prior, current)
    assert verdict.is_correction is True and "i_said" in verdict.signals


def test_legacy_threshold_constants() -> None:
    assert JACCARD_REPHRASE_THRESHOLD == 0.40
    assert MIN_CURRENT_TOKENS_FOR_REPHRASE == 2
    assert CORRECTION_SCORE_THRESHOLD == 1.0


def test_legacy_pair_exactly_at_the_threshold_fires() -> None:
    # prior {parse, json, config, file}, current {parse, json, output}: 2 shared of 5 → exactly 0.40.
    verdict = classify_user_correction_legacy("parse the json config file", "no, parse json output")
    assert verdict.jaccard == JACCARD_REPHRASE_THRESHOLD
    assert verdict.is_correction is True


def test_legacy_pair_just_below_the_threshold_does_not_fire() -> None:
    verdict = classify_user_correction_legacy("parse the json config file", "no, parse json output today")
    assert verdict.jaccard == pytest.approx(2 / 6)
    assert verdict.signals == ("phrase",)


def test_legacy_threshold_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc, "JACCARD_REPHRASE_THRESHOLD", 0.41)
    assert classify_user_correction_legacy("parse the json config file", "no, parse json output").is_correction is False


def test_legacy_bare_no_cannot_be_a_rephrase() -> None:
    verdict = classify_user_correction_legacy("list files in the directory", "no")
    assert verdict.signals == ("phrase",)
    assert verdict.jaccard == 0.0


def test_legacy_min_current_tokens_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = classify_user_correction_legacy("python?", "No, python")
    assert verdict.jaccard == 1.0 and verdict.signals == ("phrase",)
    monkeypatch.setattr(uc, "MIN_CURRENT_TOKENS_FOR_REPHRASE", 1)
    assert classify_user_correction_legacy("python?", "No, python").is_correction is True


# --- the legacy phrase list (also the new verdict's fallback `matched_phrase`) ------------------------------


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
        ("You misunderstood me", "you misunderstood"),
        ("Try again", "try again"),
        ("redo it", "redo"),
        ("still doesn't work", "still doesn't work"),
        ("That's not what I asked for", "that's not what i asked"),
        ("  \n> No!", "no"),
        ("Sorry, I meant Tuesday", "i meant"),
        ("NO   WAY", "no"),
    ],
)
def test_phrase_coverage(text: str, phrase: str) -> None:
    assert match_correction_phrase(text) == phrase


@pytest.mark.parametrize(
    "text",
    ["I said no to that", "nobody told me", "notice the second column", "wrongful termination law in Ohio",
     "No one answered my question", "No problem, next: list the tables", "Great, now add tests", ""],
)
def test_phrase_does_not_fire(text: str) -> None:
    assert match_correction_phrase(text) is None


def test_matched_phrase_falls_back_to_the_phrase_list_for_a_correction() -> None:
    verdict = classify_user_correction("summarize the report", "Please try again: summarize it briefly")
    assert verdict.is_correction is True and verdict.matched_phrase == "try again"
    assert classify_user_correction("x", "No thanks, that's fine.").matched_phrase is None


# --- defensive inputs and the verdict shape -----------------------------------------------------------------


@pytest.mark.parametrize(
    "prior, current, reply",
    [(None, None, None), ("x", 12, None), ([], {}, []), (b"no", b"no", b"?"), ("a", "", "b"), ("a", "  \n ", "b")],
)
def test_non_string_or_empty_messages_are_never_a_correction(prior: Any, current: Any, reply: Any) -> None:
    assert classify_user_correction(prior, current, reply).is_correction is False
    assert classify_user_correction_legacy(prior, current).is_correction is False


def test_a_non_string_prior_or_reply_still_reads_the_message() -> None:
    verdict = classify_user_correction(None, "That's wrong, it's Canberra", 42)
    assert verdict.is_correction is True and verdict.jaccard == 0.0
    assert classify_user_correction(5, "no", None).is_correction is True  # a bare "no" after a statement


def test_verdict_shape_contract() -> None:
    verdict = classify_user_correction(PRIOR, "No, I meant how to reverse a linked list in python recursively")
    assert isinstance(verdict, CorrectionVerdict)
    assert [f.name for f in dataclasses.fields(CorrectionVerdict)] == [
        "is_correction", "signals", "jaccard", "matched_phrase", "score", "reason",
    ]
    assert isinstance(verdict.is_correction, bool)
    assert isinstance(verdict.signals, tuple) and all(isinstance(s, str) for s in verdict.signals)
    assert 0.0 <= verdict.jaccard <= 1.0
    assert verdict.matched_phrase == "no"
    assert verdict.score >= CORRECTION_SCORE_THRESHOLD
    assert verdict.reason.startswith("no + ") and "score=" in verdict.reason and "jaccard=" in verdict.reason
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.is_correction = False  # type: ignore[misc]


def test_empty_verdict_shape() -> None:
    assert classify_user_correction("", "") == CorrectionVerdict(
        is_correction=False, signals=(), jaccard=0.0, matched_phrase=None, score=0.0,
        reason="no cue (score=0.00, jaccard=0.00)",
    )


def test_a_verdict_built_the_old_way_still_works() -> None:
    # Callers (hooks, tests) construct verdicts with the original four fields only.
    verdict = CorrectionVerdict(is_correction=True)
    assert (verdict.score, verdict.reason) == (0.0, "")
