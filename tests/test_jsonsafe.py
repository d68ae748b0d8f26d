"""`jsonsafe`: the door check finds every value orjson cannot write, and sanitize always yields writable data."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghost_agent.jsonsafe import INT_MAX, INT_MIN, MAX_DEPTH, dumps, find_problem, sanitize


def deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        ({"a": ["x", "y\ud800"]}, "a.1", "lone surrogate U+D800"),
        ({"k\udc00": 1}, "", "key"),
        ({"seed": 2**64}, "seed", "64 bits"),
        ({"seed": INT_MIN - 1}, "seed", "64 bits"),
        ({"t": math.nan}, "t", "NaN"),
        ({"t": [math.inf]}, "t.0", "NaN and Infinity"),
        ({"deep": deep(MAX_DEPTH)}, "deep", f"deeper than {MAX_DEPTH}"),
    ],
)
def test_find_problem_names_the_place(value: Any, path: str, words: str) -> None:
    problem = find_problem(value)
    assert problem is not None
    assert problem.path == path
    assert words in problem.message


@pytest.mark.parametrize(
    "value",
    [{"e": "\N{GRINNING FACE}"}, {"s": INT_MAX, "t": INT_MIN}, deep(MAX_DEPTH), {"f": 1.5, "b": None}, "é"],
)
def test_writable_values_pass(value: Any) -> None:
    assert find_problem(value) is None
    orjson.dumps(value)


def test_big_ints_may_be_allowed_and_are_then_written_by_the_stdlib() -> None:
    value = {"a": [2**80, -(2**70)]}
    assert find_problem(value, big_ints=True) is None
    assert dumps(value) == b'{"a":[1208925819614629174706176,-1180591620717411303424]}'
    assert dumps({"b": 1}) == orjson.dumps({"b": 1})
    with pytest.raises(ValueError):
        dumps({"c": "\ud800"})


def test_depth_is_checked_without_recursion() -> None:
    assert find_problem(json.loads("[" * 900 + "]" * 900)) is not None  # what Python's parser accepts


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats()
    | st.text(alphabet=st.characters(codec=None)),  # surrogates included
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(alphabet=st.characters(codec=None), max_size=4), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_check_agrees_with_orjson_and_sanitize_always_writes(value: Any) -> None:
    problem = find_problem(value)
    try:
        orjson.dumps(value)
        writable = True
    except TypeError:
        writable = False
    # NaN/Infinity orjson writes as null (silently changing the value): the door refuses them anyway.
    if writable and problem is not None:
        assert "NaN" in problem.message
    if not writable:
        assert problem is not None
    cleaned = sanitize(value)
    orjson.dumps(cleaned)
    assert find_problem(cleaned) is None


def test_sanitize_keeps_what_it_can() -> None:
    raw: dict[Any, Any] = {"a\ud800": "x\udc00y", 3: 2**80, "d": deep(MAX_DEPTH + 2), "t": (1, 2)}
    raw["a" + chr(0xDFFF)] = 1
    cleaned = sanitize(raw)
    assert cleaned["a\ufffd"] == "x\ufffdy"
    assert cleaned["a\ufffd#"] == 1  # two keys that clean to the same text both survive
    assert cleaned["3"] == str(2**80)
    assert cleaned["t"] == [1, 2]
    assert find_problem(cleaned) is None
