"""The number readers behind numeric_match and the `number` delivery check."""

from __future__ import annotations

import pytest

from ghost_agent.text.numbers import last_number, numbers_in


@pytest.mark.parametrize(("text", "number"), [
    ("The total is 338,350, which is large.", 338350.0),
    ("-1,234.5 degrees", -1234.5),
    ("1,2,3", 3.0),  # a list, not a thousands group
    ("pages 3-5", 5.0),  # a range's dash is not a minus sign
    ("x = -5", -5.0),
    ("\u22123.5", -3.5),  # unicode minus
    ("answer: 42.", 42.0),  # the sentence's full stop is not a decimal point
    ("1e3 ms", 1000.0),
    ("costs $.50", 0.5),
    ("First 12, then 7, so \\boxed{12} - I misspoke, 7", 12.0),  # \boxed wins over the last number
    ("no digits here", None),
])
def test_last_number(text: str, number: float | None) -> None:
    assert last_number(text) == number


def test_numbers_in_lists_every_number() -> None:
    assert numbers_in("From 1,024 to -3.5, then 7") == [1024.0, -3.5, 7.0]
    assert numbers_in("none here") == []
