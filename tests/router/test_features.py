"""Request-shape features: the 11 router features on crafted texts, caching, n_messages coercion."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ghost_agent.router.features import (
    REQUEST_FEATURE_NAMES,
    ROUTER_FEATURE_NAMES,
    SCAN_CHARS,
    _request_features,
    request_features,
    router_features,
    text_of,
)

IDX = {name: i for i, name in enumerate(ROUTER_FEATURE_NAMES)}


def feat(text: Any, name: str, n_messages: Any = 1) -> float:
    return router_features(text, n_messages)[IDX[name]]


def test_names_are_the_frozen_contract() -> None:
    assert REQUEST_FEATURE_NAMES == (
        "req_length_log",
        "req_has_code_fence",
        "req_has_url",
        "req_imperative_count",
        "req_jargon_count",
        "req_question_word_ratio",
        "req_has_question_mark",
        "req_line_count_log",
    )
    assert ROUTER_FEATURE_NAMES == (*REQUEST_FEATURE_NAMES, "req_has_filepath", "req_number_count_log",
                                    "conv_messages_log")
    assert len(set(ROUTER_FEATURE_NAMES)) == 11


def test_shapes_and_types() -> None:
    r = router_features("hello there", 3)
    assert len(r) == 11 and all(type(v) is float for v in r)
    q = request_features("hello there")
    assert len(q) == 8 and q == r[:8]


def test_empty_text_is_all_zero_except_messages() -> None:
    assert request_features("") == (0.0,) * 8
    assert router_features("", 1) == (0.0,) * 10 + (math.log(2),)


@pytest.mark.parametrize(("text", "expected"), [("abcd", 4), ("é" * 10, 10), ("x" * 1000, 1000)])
def test_length_log(text: str, expected: int) -> None:
    assert feat(text, "req_length_log") == pytest.approx(math.log1p(expected))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("```python\nprint(1)\n```", 1.0), ("use `inline` code", 0.0), ("``", 0.0), ("see ``` here", 1.0)],
)
def test_code_fence(text: str, expected: float) -> None:
    assert feat(text, "req_has_code_fence") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("read https://example.com/a", 1.0),
        ("HTTP://EXAMPLE.COM", 1.0),
        ("ftp://files.example.org", 1.0),
        ("go to www.example.com please", 1.0),
        ("www.com", 0.0),
        ("example dot com", 0.0),
        ("mailto:someone", 0.0),
    ],
)
def test_has_url(text: str, expected: float) -> None:
    assert feat(text, "req_has_url") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Write a script. Run it! please fix the bug", 3.0),  # text start, after a sentence, after please
        ("write", 1.0),
        ("rewrite it", 0.0),  # word boundary
        ("I want to write", 0.0),  # not at a clause start
        ("list: find x", 2.0),
        ("Please  summarize this", 1.0),
        ("hello\ncount the lines\nsort them", 2.0),
        ("", 0.0),
    ],
)
def test_imperative_count(text: str, expected: float) -> None:
    assert feat(text, "req_imperative_count") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("python json api JSON", 4.0), ("filesystem", 0.0), ("a bug in the SQL query", 3.0), ("hello", 0.0)],
)
def test_jargon_count(text: str, expected: float) -> None:
    assert feat(text, "req_jargon_count") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("what is this", 1 / 3), ("How? WHY", 1.0), ("somewhat whatever", 0.0), ("!!!", 0.0), ("", 0.0)],
)
def test_question_word_ratio(text: str, expected: float) -> None:
    assert feat(text, "req_question_word_ratio") == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), [("ok?", 1.0), ("ok.", 0.0), ("¿qué", 0.0)])
def test_has_question_mark(text: str, expected: float) -> None:
    assert feat(text, "req_has_question_mark") == expected


@pytest.mark.parametrize(("text", "lines"), [("one", 1), ("a\nb\nc", 3), ("a\n", 2), ("\n\n", 3), ("", 0)])
def test_line_count_log(text: str, lines: int) -> None:
    assert feat(text, "req_line_count_log") == pytest.approx(math.log1p(lines))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /etc/hosts", 1.0),
        ("edit data.csv now", 1.0),
        ("run ./run.sh", 1.0),
        ("look in ~/notes", 1.0),
        ("path='/tmp/x'", 1.0),
        ("and/or", 0.0),
        ("no paths here", 0.0),
        ("version 1.2", 0.0),
    ],
)
def test_has_filepath(text: str, expected: float) -> None:
    assert feat(text, "req_has_filepath") == expected


@pytest.mark.parametrize(
    ("text", "count"),
    [("1 2.5 -3 +4 v1 1.2.3 x9", 4), ("no numbers", 0), ("42", 1), ("3.14, 2.71 and 1e5", 2)],
)
def test_number_count_log(text: str, count: int) -> None:
    assert feat(text, "req_number_count_log") == pytest.approx(math.log1p(count))


@pytest.mark.parametrize(
    ("n_messages", "expected"),
    [
        (1, 1.0),
        (7, 7.0),
        (0, 0.0),
        (-3, 0.0),
        ("4", 4.0),
        (2.5, 2.5),
        (True, 1.0),
        (None, 1.0),
        ("many", 1.0),
        ([1, 2], 1.0),
        (math.nan, 1.0),
        (math.inf, 1.0),
        (-math.inf, 0.0),
        (10**400, 1.0),  # float() overflows: treated like any unusable count
    ],
)
def test_messages_coercion(n_messages: Any, expected: float) -> None:
    value = feat("hi", "conv_messages_log", n_messages)
    assert value == pytest.approx(math.log1p(expected))
    assert math.isfinite(value)


def test_default_messages_is_one() -> None:
    assert router_features("hi") == router_features("hi", 1)


def test_caching_returns_equal_tuples_and_hits_the_cache() -> None:
    text = "cache me: write a python script that counts lines in data.csv?"
    first = router_features(text, 2)
    hits = _request_features.cache_info().hits
    second = router_features(text, 2)
    assert first == second and isinstance(second, tuple)
    assert _request_features.cache_info().hits == hits + 1
    assert request_features(text) == first[:8]
    assert router_features(text, 5)[:10] == first[:10]  # the text part is shared across message counts


def test_text_of_never_raises() -> None:
    class Hostile:
        def __str__(self) -> str:
            raise RuntimeError("no")

    class NotAString:
        def __str__(self) -> Any:
            return 42

    assert text_of(None) == ""
    assert text_of("x") == "x"
    assert text_of(12) == "12"
    assert text_of(Hostile()) == ""
    assert text_of(NotAString()) == ""
    assert router_features(Hostile(), 1) == router_features("", 1)
    assert request_features(None) == request_features("")
    assert request_features(123) == request_features("123")


def test_huge_text_counts_length_but_scans_a_prefix() -> None:
    text = "a " * (SCAN_CHARS // 2) + "see https://example.com ? ```"  # signals past the scan window
    r = router_features(text)
    assert r[IDX["req_length_log"]] == pytest.approx(math.log1p(len(text)))
    assert r[IDX["req_has_url"]] == 0.0 and r[IDX["req_has_question_mark"]] == 0.0
    assert r[IDX["req_has_code_fence"]] == 0.0
    inside = router_features("see https://example.com ? ```" + "a " * SCAN_CHARS)
    assert inside[IDX["req_has_url"]] == 1.0 and inside[IDX["req_has_code_fence"]] == 1.0


def test_one_megabyte_request_is_finite() -> None:
    text = ("line with python and https://x.org/a.py 42?\n" * 25_000)[:1_000_000]
    r = router_features(text, 10)
    assert all(math.isfinite(v) for v in r)
    assert r[IDX["req_line_count_log"]] == pytest.approx(math.log1p(text.count("\n") + 1))


def test_control_characters_and_null_bytes() -> None:
    r = router_features("\x00\x01write\x00 a \x1b[31mscript\x7f\n\r\t", 1)
    assert all(math.isfinite(v) for v in r) and len(r) == 11
