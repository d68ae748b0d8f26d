"""The regex rules (the fallback, and the model's `r:` features): numbers inside code do not make a request
quantitative. The learned decision has its own tests (test_kind_model.py)."""

from __future__ import annotations

import pytest

from ghost_agent.text.request_kind import classify_rules


@pytest.mark.parametrize(
    ("request_text", "quantitative"),
    [
        ("What is the total of 3 and 4?", True),
        ("What is the total of 3 and 4? ```py\nx = 1\n```", True),
        ("What is the total?\n```\nx = 3 + 4\n```", False),
        ("What is the total? ```3 + 4```", False),  # a one-line fence is code too
        ("What is the total? ```\n3 + 4", False),  # and so is an unclosed one
    ],
)
def test_numbers_inside_backticks_are_code_not_quantities(request_text: str, quantitative: bool) -> None:
    assert classify_rules(request_text).quantitative is quantitative
