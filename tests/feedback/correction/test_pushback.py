"""Pushback said around a counter-fact (`feedback/correction/pushback.py`): politely, ironically, tersely, or by
showing what happened. Scratch probes written during the round after batch g (not in the labelled set)."""

from __future__ import annotations

import pytest

from ghost_agent.feedback.correction.detector import classify_user_correction

CORRECTIONS = [
    ("How many legs does a spider have?", "Spiders have 6 legs.", "Thanks, but I'm pretty sure spiders have 8 legs."),
    ("Who painted the Mona Lisa?", "Michelangelo.", "sorry, but wasn't it Leonardo da Vinci?"),
    ("Who wrote Hamlet?", "Christopher Marlowe.", "wrong playwright"),
    ("Sort descending: 4, 9, 1", "1, 4, 9", "?? that's ascending"),
    ("How do I print in Python 3?", "Use `print x`.", "SyntaxError: Missing parentheses in call to 'print'"),
    (
        "My page shows a blank screen after login",
        "Clear your cache with Ctrl+Shift+R.",
        "tried that, still a blank screen",
    ),
    (
        "Give me a slogan for my bakery",
        "Bakeries should focus on fresh bread and friendly service.",
        "I just need a slogan. short and punchy",
    ),
    (
        "How long do I boil an egg for soft yolk?",
        "Boil it for 15 minutes.",
        "sure, if I want rubber. 6 minutes is soft",
    ),
    (
        "Which has more caffeine, tea or coffee?",
        "Black tea has more caffeine per cup than coffee.",
        "Coffee has about twice as much per cup.",
    ),
]

NOT_CORRECTIONS = [
    ("How many feet are in a mile?", "A mile is 5,280 feet.", "Thanks, though I think I'll use metres for my project"),
    ("How many feet are in a mile?", "A mile is 5,280 feet.", "Thanks! though I read a nautical mile is 6,076 feet"),
    (
        "How long should I bake a frozen pizza at 220°C?",
        "About 12-15 minutes, until the crust is golden.",
        "great, if I want it crispier should I go longer?",
    ),
    (
        "What's the tallest building in the world?",
        "The Burj Khalifa in Dubai, 828 m.",
        "sure, in 2030 maybe the Jeddah Tower will beat it",
    ),
    ("Who composed The Four Seasons?", "Antonio Vivaldi.", "wrong thread, sorry"),
    ("Who composed The Four Seasons?", "Antonio Vivaldi.", "?? what do you mean by that"),
    (
        "Give me a title for my blog post about saving money",
        '"Save Big: Smart Grocery Habits"',
        "I also need a subtitle",
    ),
    (
        "What does HTTP 404 mean?",
        "Not found: the server can't find the resource.",
        "TypeError: cannot read property of undefined — unrelated, but how do I fix this?",
    ),
    (
        "My CSS grid only shows one column. I want 3.",
        "Add `grid-template-columns: repeat(3, 1fr);`",
        "did that, still wondering about the gap between columns though",
    ),
    (
        "Give me a guacamole recipe",
        "Ingredients: 3 avocados, 1 lime, salt. Mash and mix.",
        "um, where is the nearest store?",
    ),
    (
        "Which has more caffeine, tea or coffee?",
        "Coffee has more caffeine per cup than black tea.",
        "Tea has more antioxidants though",
    ),
    ("When did the Chernobyl disaster happen?", "It happened on April 26, 1986.", "Fukushima was March 11, 2011."),
    (
        "What's the difference between a crane and a heron?",
        "Both are large wading birds; cranes fly with necks out.",
        "the herons, obviously, are my favourite",
    ),
    ("How do you say 'good night' in German?", "Gute Nacht.", "that's good to know"),
    ("Convert this JSON to YAML", "a: 1", 'Now convert this JSON to YAML too: {"b": [1, 2]}'),
]


@pytest.mark.parametrize(("request_text", "reply", "follow_up"), CORRECTIONS)
def test_pushback_around_a_counter_fact_is_a_correction(request_text: str, reply: str, follow_up: str) -> None:
    verdict = classify_user_correction(request_text, follow_up, reply)
    assert verdict.is_correction, verdict.reason


@pytest.mark.parametrize(("request_text", "reply", "follow_up"), NOT_CORRECTIONS)
def test_the_same_frames_without_a_counter_fact_are_not(request_text: str, reply: str, follow_up: str) -> None:
    verdict = classify_user_correction(request_text, follow_up, reply)
    assert not verdict.is_correction, verdict.reason
