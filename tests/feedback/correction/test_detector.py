"""The user-correction detector's behaviour: corrections people write are caught, thanks, new requests and
agreement are not, the explicit verdicts always count, bad input never raises, and the verdict's shape. These
probes were written for the detector's tests, not for its training set; the model is judged on them as a whole
(it is a classifier: a rate, with the explicit verdicts and the plainest courtesy pinned), and on the labelled set
and blind batches by `bench/bench_correction_detector.py`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ghost_agent.feedback.correction.detector import (
    EXPLICIT_VERDICTS,
    CorrectionVerdict,
    classify_user_correction,
    classify_user_correction_legacy,
    explicit_verdict,
    match_correction_phrase,
)

PRIOR = "How do I reverse a linked list in python?"
ISSUE_PRIOR = "How much is 15% of 2340 dollars? Give me the answer formatted like $1,234.56"
ISSUE_REPLY = "15% of 2340 is 351."
ISSUE_FOLLOW_UP = "No, wrong format — tell me what 15% of 2340 dollars is, as $351.00"

CORRECTIONS = [
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
]

NON_CORRECTIONS = [
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
]


def _caught(cases: list[tuple[str, str, str]]) -> list[bool]:
    return [classify_user_correction(prior, follow_up, reply).is_correction for prior, reply, follow_up in cases]


def test_corrections_of_many_shapes_are_caught() -> None:
    caught = _caught(CORRECTIONS)
    missed = [c[2] for c, hit in zip(CORRECTIONS, caught, strict=True) if not hit]
    assert sum(caught) >= 0.9 * len(CORRECTIONS), missed


def test_courtesy_new_requests_and_context_are_not_corrections() -> None:
    flagged = [c[2] for c, hit in zip(NON_CORRECTIONS, _caught(NON_CORRECTIONS), strict=True) if hit]
    assert len(flagged) <= 0.1 * len(NON_CORRECTIONS), flagged


@pytest.mark.parametrize("follow_up", ["thanks!", "Perfect, that worked. Thank you!", "danke!", "merci beaucoup",
                                       "No worries, got it fixed now", "No, that's all, thanks", "👍"])
def test_thanks_and_courtesy_never_count(follow_up: str) -> None:
    assert classify_user_correction("What is 17 * 23?", follow_up, "17 * 23 = 391").is_correction is False


@pytest.mark.parametrize("follow_up", ["That's wrong, it's 63", "that’s not what I asked", "You misunderstood me",
                                       "still doesn't work", "Thats not right", "Try again, shorter"])
def test_an_explicit_verdict_always_counts(follow_up: str) -> None:
    # even after praise-free courtesy context and after the assistant asked something
    verdict = classify_user_correction("What's 9 * 7?", follow_up, "9 * 7 = 56. Anything else?")
    assert verdict.is_correction is True and "explicit_verdict" in verdict.signals
    assert explicit_verdict(follow_up) is not None


def test_the_explicit_verdicts_are_phrases_not_single_words() -> None:
    assert all(" " in phrase for phrase in EXPLICIT_VERDICTS)
    for text in ("no", "Nope.", "wrong question, sorry", "Actually, one more thing", "I meant to ask: why?",
                 "not right now, thanks"):
        assert explicit_verdict(text) is None, text


def test_the_issue_example_is_a_correction_that_the_legacy_rule_missed() -> None:
    verdict = classify_user_correction(ISSUE_PRIOR, ISSUE_FOLLOW_UP, ISSUE_REPLY)
    assert verdict.is_correction is True and verdict.matched_phrase == "no"
    assert verdict.jaccard == pytest.approx(0.27, abs=0.005)  # the issue's figure: why the legacy rule missed it
    assert classify_user_correction_legacy(ISSUE_PRIOR, ISSUE_FOLLOW_UP).is_correction is False


def test_a_no_that_agrees_or_answers_the_assistants_question_is_not_a_verdict() -> None:
    prior = "Write an email to my landlord about the broken heater"
    assert not classify_user_correction(prior, "nope, keep it friendly", "Should I make it formal?").is_correction
    assert not classify_user_correction("Is it ok to commit .env files?", "No, you're right, I'll add it",
                                        "No, add it to .gitignore.").is_correction


def test_the_reply_is_optional() -> None:
    assert classify_user_correction("What is 17 * 23?", "That's wrong, 17*23 is 391").is_correction is True
    assert classify_user_correction("What is 17 * 23?", "thanks!", None).is_correction is False


# --- the legacy rule (phrase AND rephrase), kept for the benchmark's comparison -----------------------------


def test_the_legacy_rule_needs_a_phrase_and_a_rephrase() -> None:
    assert classify_user_correction_legacy(PRIOR, "No, I meant how to reverse a linked list in python recursively"
                                           ).signals == ("phrase", "rephrase")
    assert classify_user_correction_legacy(PRIOR, "No, that's wrong").is_correction is False  # no rephrase
    assert classify_user_correction_legacy(PRIOR, "how do I reverse a linked list in python in place"
                                           ).is_correction is False  # no phrase


@pytest.mark.parametrize(
    "text, phrase",
    [("no", "no"), ("No.", "no"), ("nope, the other one", "nope"), ("Wrong answer", "wrong"),
     ("That is not right", "that is not right"), ("that’s wrong", "that's wrong"), ("thats wrong", "thats wrong"),
     ("I meant the second file", "i meant"), ("  \n> No!", "no"), ("Sorry, I meant Tuesday", "i meant")],
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


def test_verdict_shape_contract() -> None:
    verdict = classify_user_correction("What's 9 * 7?", "No, that's wrong: it's 63", "9 * 7 = 56")
    assert [f.name for f in dataclasses.fields(CorrectionVerdict)] == [
        "is_correction", "signals", "jaccard", "matched_phrase", "score", "reason",
    ]
    assert verdict.is_correction is True and verdict.signals[:2] == ("explicit_verdict", "model")
    assert all(isinstance(s, str) for s in verdict.signals) and "lead_no" in verdict.signals
    assert 0.0 <= verdict.jaccard <= 1.0 and 0.0 <= verdict.score <= 1.0
    assert verdict.matched_phrase == "that's wrong"  # the explicit verdict after the "no"
    assert "model p=" in verdict.reason and "threshold" in verdict.reason
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.is_correction = False  # type: ignore[misc]


def test_empty_verdict_shape() -> None:
    assert classify_user_correction("", "") == CorrectionVerdict(is_correction=False, reason="empty message")
