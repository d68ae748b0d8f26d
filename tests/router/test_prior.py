"""The untrained router's prior: a labelled table it must get 100% right, its place in dispatch, its cost."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from ghost_agent.router.dispatch import Router, RouterDecision
from ghost_agent.router.features import ROUTER_FEATURE_NAMES
from ghost_agent.router.model import RouterModel
from ghost_agent.router.prior import PriorVerdict, prior_verdict

FAST = "fast"
AGENT = "agent"
UNSURE = "unsure"  # agent, reason prior_uncertain: neither kind of signal

HUMANEVAL_0 = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """ Check if in given list of numbers, are any two numbers closer to each other than
    given threshold.
    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False
    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)
    True
    """
'''

# (request, expected): the prior's specification. Tricky cases carry a comment saying what they test.
TABLE: list[tuple[str, str]] = [
    # --- conversation → fast
    ("hi", FAST),
    ("Hello!", FAST),
    ("hey there", FAST),
    ("good morning", FAST),
    ("thanks!", FAST),
    ("Thank you so much, that was helpful.", FAST),
    ("bye", FAST),
    ("Good night!", FAST),
    ("how are you?", FAST),
    ("What's up?", FAST),
    ("nice to meet you", FAST),
    ("who are you?", FAST),
    ("what can you do?", FAST),
    ("I'm feeling a bit down today.", FAST),  # "today" alone is not the clock
    ("hi! what's the capital of Japan?", FAST),
    # --- jokes, stories, poems → fast
    ("tell me a joke", FAST),
    ("Tell me a fun fact about octopuses.", FAST),
    ("Tell me a story about a brave little mouse.", FAST),
    ("Write a haiku about autumn leaves.", FAST),  # "write" without code
    ("Write a short poem about the sea.", FAST),
    ("Write a cover letter for a barista job.", FAST),
    # --- short factual and definitional questions → fast
    ("Who wrote Hamlet?", FAST),
    ("What is the capital of France?", FAST),
    ("When did World War II end?", FAST),
    ("Where is Mount Kilimanjaro?", FAST),
    ("Why is the sky blue?", FAST),
    ("What does 'ephemeral' mean?", FAST),  # "mean" without a quantity is not statistics
    ("Define photosynthesis.", FAST),
    ("What is the difference between weather and climate?", FAST),
    ("Who painted the Mona Lisa?", FAST),
    ("Explain how vaccines work.", FAST),
    ("How does a rainbow form?", FAST),
    ("Describe the water cycle.", FAST),
    ("Who was the first person to walk on the moon?", FAST),
    ("What year did the Berlin Wall fall?", FAST),
    ("Who was president of the United States in 1990?", FAST),  # one year is not a computation
    ("How many legs does a spider have?", FAST),  # "how many" with no quantity to compute with
    ("What is the function of the liver?", FAST),  # "function of" is biology, not code
    ("Is a tomato a fruit or a vegetable?", FAST),
    ("What's the meaning of life?", FAST),
    ("How old was Mozart when he died?", FAST),
    # --- opinions and advice → fast
    ("What do you think about remote work?", FAST),
    ("Which is better for a beginner, guitar or piano?", FAST),
    ("Should I read Dune or Foundation first?", FAST),
    ("Can you recommend a good mystery novel?", FAST),
    ("Give me some tips for sleeping better.", FAST),
    ("Recommend three sci-fi movies.", FAST),
    ("Give me 5 ideas for a birthday party", FAST),  # a count of ideas is not a computation
    # --- rewrites of prose → fast
    ("Rewrite this sentence to sound more formal: hey, can u send me the report asap", FAST),
    ("Rephrase: The meeting has been moved to next week because several people are away.", FAST),
    ("Proofread this: Their going to the park tomorow, weather permitting.", FAST),
    ("Translate 'good night' into Spanish.", FAST),
    ("Fix the grammar: me and him goes to school every days.", FAST),  # "fix" prose, not code
    ("Make this email friendlier: Please send the documents by Friday. Failure to do so will delay your "
     "application.", FAST),
    ("Summarize the following paragraph in one sentence: The industrial revolution began in Britain in the late "
     "eighteenth century. It transformed manufacturing, transport and daily life, and spread to Europe and North "
     "America over the following century.", FAST),
    # --- numbers to compute → agent
    ("what is 15% of 2340?", AGENT),
    ("What is 2+2?", AGENT),
    ("calculate 17 * 23", AGENT),
    ("What's 1234 divided by 7?", AGENT),
    ("What is 3/4 as a percentage?", AGENT),
    ("What is the square root of 144?", AGENT),
    ("Is 7919 a prime number?", AGENT),
    ("Average of 3, 8 and 10?", AGENT),
    ("Solve for x: 3x + 7 = 22", AGENT),
    ("Compute the compound interest on $1000 at 5% for 3 years.", AGENT),
    ("If a train travels at 60 miles per hour for 2.5 hours, how far does it go?", AGENT),  # word problem
    ("Sarah has three boxes with twelve apples each. She gives away five apples. How many apples does she have "
     "left?", AGENT),  # a word problem in words, no digits
    ("A shirt costs $40 and is on sale for 25 percent off. What is the sale price?", AGENT),
    ("Convert 72 degrees Fahrenheit to Celsius.", AGENT),
    ("How many centimeters are in 5 feet?", AGENT),  # unit conversion phrased as a question
    ("How much is 20 euros in dollars?", AGENT),
    ("How many r's are in the word strawberry?", AGENT),  # letter counting: models miscount
    ("count the number of vowels in 'onomatopoeia'", AGENT),
    ("Sort these numbers: 5, 3, 9, 1, 7", AGENT),
    # --- dates and the clock → agent
    ("how many days between 2024-03-01 and 2024-07-15?", AGENT),
    ("What day of the week was July 4, 1976?", AGENT),
    ("what's today's date?", AGENT),
    # --- code → agent
    ("Write a Python function that reverses a string.", AGENT),
    ("write a function to check if a number is a palindrome", AGENT),
    ("Fix this code: ```python\ndef add(a, b):\n    return a - b\n```", AGENT),
    ("explain what this code does: ```js\nconst f = xs => xs.filter(x => x % 2).map(x => x * x);\n```", AGENT),
    ("Why does `len(None)` raise a TypeError?", AGENT),
    ('def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""', AGENT),  # a bare signature
    (HUMANEVAL_0, AGENT),  # a long HumanEval-style prompt
    ("Complete the function below so the tests pass:\n\ndef is_even(n):\n    pass", AGENT),
    ("What's the output of print(3 * 'ab')?", AGENT),
    ("I get 'ModuleNotFoundError: No module named numpy' when I run my script. What should I do?", AGENT),
    ("Refactor this class to use dataclasses.", AGENT),
    ("Implement quicksort in Rust.", AGENT),
    ("What is the time complexity of binary search?", AGENT),
    ("Explain the difference between a list and a tuple in Python.", AGENT),  # explaining code is code
    ("what is a closure in javascript?", AGENT),
    ("Rewrite this function to be faster: def f(xs): return [x for x in xs if x in set(xs)]", AGENT),
    ("Translate this Python to JavaScript: print('hi')", AGENT),  # "translate" code, not prose
    ("Tell me a joke about Python programmers", AGENT),  # an agent signal beats a fast one
    # --- regex, SQL, shell, data, files, URLs → agent
    ("What does this regex match: ^[a-z0-9_-]{3,16}$", AGENT),
    ("Write a SQL query to find the top 5 customers by total order value.", AGENT),
    ("How do I list all files larger than 100MB in a directory with bash?", AGENT),
    ("run ls -la", AGENT),
    ("Read data.csv and tell me the average of the price column.", AGENT),
    ("Open /etc/hosts and show me its contents.", AGENT),
    ('Parse this JSON and give me the names: {"users": [{"name": "a"}, {"name": "b"}]}', AGENT),
    ("Check whether https://example.com is up.", AGENT),
    ("Tell me what's in my workspace folder", AGENT),
    ("Summarize the file notes.txt", AGENT),  # "summarize" a file, not pasted prose
    # --- run / test / check → agent
    ("test my function with a few inputs", AGENT),
    ("Check if 'racecar' is a palindrome.", AGENT),
    ("thanks! now run the tests again", AGENT),  # thanks, then a task
    ("hi, can you write a function that adds two numbers?", AGENT),  # a greeting, then a task
    ("What is the capital of France? Also compute 12*12.", AGENT),
    ("Who wrote Hamlet? Save the answer to answer.txt", AGENT),
    ("Generate a random password with 16 characters.", AGENT),
    # --- neither → agent, unsure (the fail-safe)
    ("Make a plan for my week", UNSURE),
    ("yes, do it", UNSURE),
    ("Please go ahead", UNSURE),
    ("Plan a 3-day trip to Rome.", UNSURE),
]


def test_the_table_is_big_and_balanced() -> None:
    counts = {label: sum(1 for _, e in TABLE if e == label) for label in (FAST, AGENT, UNSURE)}
    assert len(TABLE) >= 60 and counts[FAST] >= 30 and counts[AGENT] >= 30 and counts[UNSURE] >= 3
    assert len({text for text, _ in TABLE}) == len(TABLE)  # no duplicates


def test_prior_is_100_percent_on_the_table() -> None:
    wrong = []
    for text, expected in TABLE:
        verdict = prior_verdict(text)
        reason = {FAST: "prior_fast", AGENT: "prior_agent", UNSURE: "prior_uncertain"}[expected]
        if (verdict.route, verdict.reason) != (FAST if expected == FAST else AGENT, reason):
            wrong.append(f"{text[:70]!r}: expected {expected}, got {verdict}")
    assert not wrong, f"{len(wrong)}/{len(TABLE)} wrong:\n" + "\n".join(wrong)


def test_untrained_router_routes_by_the_prior() -> None:
    router = Router()
    for text, expected in TABLE:
        body = {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]}
        decision = router.dispatch(body)
        assert decision.p is None and decision.model_id is None
        assert decision.route == (FAST if expected == FAST else AGENT), text
        assert decision.reason == prior_verdict(text).reason


def test_prior_reads_the_last_user_message_only() -> None:
    body = {"messages": [
        {"role": "user", "content": "write a python script that lists /tmp"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "thanks!"},
    ]}
    assert Router().dispatch(body) == RouterDecision("fast", None, "prior_fast", None)


@pytest.mark.parametrize(("p", "route"), [(0.9, "agent"), (0.1, "fast")])
def test_a_loaded_model_overrides_the_prior(p: float, route: str) -> None:
    model = RouterModel(weights=np.zeros(len(ROUTER_FEATURE_NAMES)), bias=math.log(p / (1.0 - p)))
    router = Router(model)
    # the prior says fast for "hi" and agent for arithmetic; the model's constant p wins both times
    for text in ("hi", "what is 15% of 2340?"):
        decision = router.dispatch(text)
        assert decision.route == route and decision.reason.startswith("confident_")
        assert decision.model_id == model.model_id and decision.p == pytest.approx(p)


@pytest.mark.parametrize(("mode", "route"), [("always-agent", "agent"), ("always-fast", "fast")])
def test_forced_modes_ignore_the_prior(mode: str, route: str) -> None:
    router = Router(mode=mode)
    for text in ("hi", "what is 15% of 2340?", ""):
        assert router.dispatch(text) == RouterDecision(route, None, "forced", None)  # type: ignore[arg-type]


def test_empty_and_malformed_requests_stay_fail_safe_without_a_model() -> None:
    assert Router().dispatch("  ") == RouterDecision("agent", None, "empty_request", None)
    assert Router().dispatch({"messages": "nope"}) == RouterDecision("agent", None, "error", None)


def test_prior_never_raises_on_odd_input() -> None:
    for value in (None, 42, "\x00" * 10, "🙂" * 5000, "?" * 30_000, "a" * 100_000):
        verdict = prior_verdict(value)
        assert isinstance(verdict, PriorVerdict) and verdict.route in ("fast", "agent")


def test_prior_is_cheap() -> None:
    texts = [f"{text} #{i}" for i in range(20) for text, _ in TABLE]  # distinct texts: no cache hits
    t0 = time.perf_counter()
    for text in texts:
        prior_verdict(text)
    per_call_us = (time.perf_counter() - t0) / len(texts) * 1e6
    assert per_call_us < 1000, f"{per_call_us:.0f} µs per uncached call"  # measured ~20 µs; generous for CI
    t0 = time.perf_counter()
    for _ in range(1000):
        prior_verdict("hi")
    assert (time.perf_counter() - t0) / 1000 * 1e6 < 50  # cached
