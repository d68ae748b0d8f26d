"""Differential check (issue 19): each site's own fence regex against the shared reader it moves onto.

Run before a site's regex is deleted; replaced by direct behaviour tests once the old code is gone.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from ghost_agent.agent import preferences
from ghost_agent.reflection import parse as reflection_parse
from ghost_agent.text import request_kind
from ghost_agent.text.fences import is_fence_line, strip_fences
from tests.text.fence_shapes import reply

SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(reply())
def test_fence_lines_and_marks(text: str) -> None:
    for line in text.splitlines():
        assert bool(reflection_parse._FENCE_LINE_RE.match(line)) == is_fence_line(line)
    assert len(preferences._FENCE_RE.findall(text)) == text.count("```")


@SETTINGS
@given(reply())
def test_everything_between_backticks(text: str) -> None:
    assert request_kind._without_code(text) == strip_fences(text, " ", "same_line", unclosed=True)
