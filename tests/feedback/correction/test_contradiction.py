"""The contradiction signal: a short follow-up that states a different value than the reply gave is a correction
("5040", "the Volga is longer"); one that answers the reply's question, describes the user's own setup, adds a
remark about the answer or asks the next thing is not.

The cases here were written while the signal was built (they are development cases, like the dev split of the
labelled set); the shapes added later (polarity, denial, lists, hedged questions, …) are in
`test_relations.py`, and the held-out figures in `tests/feedback/correction/data/README.md`.
"""

from __future__ import annotations

import time

import pytest

from ghost_agent.feedback.correction.contradiction import (
    STRONG,
    WEAK,
    contradiction,
    describes_own_setup,
    is_value_request,
    reply_requests_info,
    subject_in_exchange,
)
from ghost_agent.feedback.correction.detector import classify_user_correction
from ghost_agent.feedback.correction.score import score_cues


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up", "shape"),
    [
        ("What's 7 factorial?", "7! = 2520", "5040", "value"),
        ("What's the population of France?", "About 48 million.", "68 million", "value"),
        ("Who invented the telephone?", "Thomas Edison invented the telephone.", "Alexander Graham Bell", "value"),
        ("When did WW1 start?", "1918.", "1914", "value"),
        ("How tall is the Eiffel Tower?", "About 150 metres.", "It's 330 m", "restated"),
        ("What's the capital of Canada?", "Toronto.", "It's Ottawa", "restated"),
        ("What's the default branch name in new GitHub repos?", "master", "It's main now", "restated"),
        ("How many ml in a teaspoon?", "A teaspoon is 15 ml.", "15 is a tablespoon, a teaspoon is 5", "claim+number"),
        (
            "Name the author of 1984",
            "Aldous Huxley wrote 1984.",
            "Huxley wrote Brave New World. 1984 is Orwell.",
            "answer",
        ),
        ("Is a whale a fish?", "Yes, whales are large fish.", "whales are mammals...", "class"),
        ("Translate 'cat' to German", "Hund", "Hund means dog!", "class"),
        ("Who wrote Hamlet?", "Christopher Marlowe.", "Shakespeare wrote it", "attribution"),
        ("What's the capital of Japan?", "Kyoto.", "Tokyo is the capital", "attribution"),
        (
            "What's the longest river in Europe?",
            "The Danube is the longest river in Europe.",
            "the Volga is longer",
            "comparison",
        ),
        (
            "Who was the first person on the moon?",
            "Buzz Aldrin was the first.",
            "Neil Armstrong was first",
            "comparison",
        ),
        (
            "List the planets in order from the sun",
            "Mercury, Venus, Mars, Earth, Jupiter",
            "Earth comes before Mars",
            "order",
        ),
        ("Remove duplicates from [3,1,3,2] keeping order", "list(set(x))", "set doesn't keep the order", "falls_short"),
        (
            "Write a shell command to show the first 5 lines of a file",
            "tail -n 5 file",
            "tail is the end of the file. head -n 5",
            "claim+value",
        ),
    ],
)
def test_counter_statements_are_corrections(prior: str, reply: str, follow_up: str, shape: str) -> None:
    hit = contradiction(follow_up, prior, reply)
    assert hit is not None and hit.weight == STRONG
    assert hit.text.startswith(shape + ":"), hit.text
    verdict = classify_user_correction(prior, follow_up, reply)
    assert verdict.is_correction and "contradiction" in verdict.signals


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up"),
    [
        # answers to the reply's own question
        ("Help me pick a laptop", "Sure. What's your budget?", "around $800"),
        ("Calculate my loan payment", "I need the rate — is it 5% or something else?", "6.5%"),
        # the user's own setup, or a reading of it
        (
            "How do I install packages from requirements.txt?",
            "pip install -r requirements.txt",
            "It's a conda environment actually",
        ),
        ("How do I check which python version I have?", "python --version", "It says 3.9.7"),
        ("Write a script to resize images", "from PIL import Image ...", "The images are 4000x3000 JPEGs"),
        (
            "Give me a SQL query for users older than 30",
            "SELECT * FROM users WHERE age > 30;",
            "The table has about 3 million rows.",
        ),
        ("How long should I boil rice?", "About 18 minutes for white rice, covered.", "It's brown rice."),
        # remarks about the answer, or about something else
        ("What's the capital of Canada?", "Ottawa.", "Ottawa is in Ontario"),
        ("What's the capital of Canada?", "Ottawa.", "Canada is a big country"),
        ("What's the largest planet?", "Jupiter.", "Jupiter is a gas giant"),
        ("Who wrote 1984?", "George Orwell.", "Orwell is British"),
        ("Translate 'cat' to German", "Katze", "Katze is feminine"),
        ("What's the largest desert?", "Antarctica.", "Antarctica is cold"),
        ("Which is closer to the sun, Venus or Mercury?", "Mercury.", "Venus is brighter"),
        ("Which came first, the iPhone or the iPad?", "The iPhone, in 2007.", "The iPod was even earlier"),
        ("What's the population of France?", "About 68 million.", "Germany has about 84 million"),
        ("How many strings does a guitar have?", "Six on a standard guitar.", "Bass guitars have 4"),
        ("Who directed Jaws?", "Steven Spielberg, in 1975.", "Spielberg was 27 then"),
        ("What's the capital of Spain?", "Madrid.", "Most people guess Barcelona"),
        # the next request, typed as a value
        ("What's 7 factorial?", "5040", "10 factorial"),
        ("Convert 10 kg to pounds", "About 22 lb.", "15 kg"),
        ("What's 15% of 80?", "12", "20% of 80"),
        ("What's 7 factorial?", "5040", "and 10?"),
    ],
)
def test_look_alikes_are_not_corrections(prior: str, reply: str, follow_up: str) -> None:
    assert not classify_user_correction(prior, follow_up, reply).is_correction


def test_a_claim_about_something_the_reply_named_is_weak_alone_and_adds_up() -> None:
    prior, reply = "What's the chemical formula of table salt?", "KCl"
    hit = contradiction("KCl is potassium chloride", prior, reply)
    assert hit is not None and hit.weight == WEAK
    assert not classify_user_correction(prior, "KCl is potassium chloride", reply).is_correction
    both = contradiction("KCl is potassium chloride. table salt is NaCl", prior, reply)
    assert both is not None and both.weight == STRONG


def test_a_bare_new_value_is_strong_a_bare_value_asked_back_is_weak() -> None:
    # A next request comes with "and …?" / "what about …?"; a bare new word where the reply gave its answer is a
    # counter-answer ("ohms" after "… measured in amperes."). Asked back without doubt ("Chile?") it may be either.
    hit = contradiction("Chile", "What's the capital of Peru?", "Lima.")
    assert hit is not None and hit.weight == STRONG
    hit = contradiction("Leonardo da Vinci", "Who painted the Mona Lisa?", "Michelangelo painted the Mona Lisa.")
    assert hit is not None and hit.weight == STRONG
    hit = contradiction("Chile?", "What's the capital of Peru?", "Lima.")
    assert hit is not None and hit.weight == WEAK
    assert not classify_user_correction("What's the capital of Peru?", "Chile?", "Lima.").is_correction
    assert contradiction("and Chile?", "What's the capital of Peru?", "Lima.") is None


def test_the_contradiction_replaces_the_bare_claim_rather_than_adding_to_it() -> None:
    # Both read the same short statement; counting both would make every weak claim a correction.
    score, hits = score_cues(
        "Jupiter is a gas giant", "Jupiter.", on_topic=True, prior_request="What's the largest planet?"
    )
    assert [h.name for h in hits] == ["contradiction"] and score == WEAK
    score, hits = score_cues("Ottawa is in Ontario", "Ottawa.", on_topic=True, prior_request="What's the capital?")
    assert [h.name for h in hits] == ["bare_claim"] and score == WEAK  # a description: no contradiction


def test_gates() -> None:
    hit = contradiction("5040?", "What's 7 factorial?", "2520")  # a bare value asked back: half
    assert hit is not None and hit.weight == WEAK
    hit = contradiction("Isn't it 5040?", "What's 7 factorial?", "2520")  # asked back in doubt: in full
    assert hit is not None and hit.weight == STRONG
    assert contradiction("Is that right?", "What's 7 factorial?", "2520") is None  # a question
    assert contradiction("I get 5040", "What's 7 factorial?", "2520") is not None  # judging, not own context
    assert contradiction("my calculator says 5040", "What's 7 factorial?", "2520") is None  # own context
    assert contradiction("5040 👍", "What's 7 factorial?", "2520") is None  # a reaction
    assert contradiction("so 5040 then", "What's 7 factorial?", "2520") is None  # an inference
    assert contradiction("5040", "What's 7 factorial?", "") is None  # nothing to contradict
    assert contradiction("5040", "Write a factorial function", "def f(n): ...") is None  # not a value request


def test_helpers() -> None:
    assert is_value_request("what's the capital of canada?") and is_value_request("convert 10 kg to pounds")
    assert not is_value_request("how do i install numpy?") and not is_value_request("what's a good name for a cat?")
    assert reply_requests_info("sure. what's your budget?")
    assert not reply_requests_info("ottawa. anything else?") and not reply_requests_info("ottawa.")
    assert describes_own_setup("it's a mac", "how do i open a terminal?", "press ctrl+alt+t.")
    assert not describes_own_setup("it's a fruit", "is a tomato a vegetable?", "yes, a tomato is a vegetable.")
    assert subject_in_exchange("an ounce ", "how many grams in an ounce?", "about 20 grams.")
    assert not subject_in_exchange("bass guitars ", "how many strings does a guitar have?", "six.")


@pytest.mark.parametrize(
    ("follow_up", "reply"),
    [
        ("5040 " * 20_000, "2520"),
        ("5040", "2520 " * 50_000),
        ("X is Y. " * 5000, "Z"),
        ("a, " * 10_000, "b"),
        ("Canberra", "Sydney " * 20_000 + "?"),
    ],
)
def test_long_messages_stay_cheap(follow_up: str, reply: str) -> None:
    start = time.perf_counter()
    contradiction(follow_up, "What's the capital of Australia? " * 500, reply)
    classify_user_correction("What's the capital of Australia? " * 500, follow_up, reply)
    assert time.perf_counter() - start < 0.25
