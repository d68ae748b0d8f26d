"""Differential check (issue 19): each site's own fence regex against the shared reader it moves onto.

Run before a site's regex is deleted; replaced by direct behaviour tests once the old code is gone.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings

from ghost_agent.agent import form, preferences, protocol
from ghost_agent.reflection import parse as reflection_parse
from ghost_agent.text import lenient_json
from ghost_agent.text.fences import find_fences, is_fence_line, strip_fences
from tests.text.fence_shapes import reply

SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(reply())
def test_same_line_style_is_the_json_readers_rule(text: str) -> None:
    fences = find_fences(text, "same_line")
    assert [(m.start(), m.end(), m.group(2)) for m in protocol._FENCE_RE.finditer(text)] == [
        (f.start, f.end, f.body) for f in fences
    ]
    old = [m.group(1).strip() for m in lenient_json._FENCE_RE.finditer(text)]
    new = [f.body.strip() for f in fences if f.language.isalpha() or not f.language]
    assert [c for c in old if c[:1] in "[{"] == [c for c in new if c[:1] in "[{"]
    assert re.sub(r"```.*?(?:```|\Z)", " ", text, flags=re.S) == strip_fences(text, " ", "same_line", unclosed=True)


@SETTINGS
@given(reply())
def test_fence_lines_and_marks(text: str) -> None:
    for line in text.splitlines():
        assert bool(reflection_parse._FENCE_LINE_RE.match(line)) == is_fence_line(line)
    assert len(preferences._FENCE_RE.findall(text)) == text.count("```")


def _object_at(text: str, start: int) -> tuple[object, int] | None:
    span = protocol._balanced(text, start)
    value = None if span is None else protocol._decode(text[start:span])
    return None if value is None or span is None else (value, span)


def _extract_json_shared(text: str) -> str | None:
    found = [b.strip() for b in [f.body for f in find_fences(text, "inline")][:20] if form._parses(b)]
    if not found:
        found = [text[start:end] for start, end, _ in lenient_json.scan_json(text, max_tries=200)]
    return found[0] if len(set(found)) == 1 else None


@SETTINGS
@given(reply())
def test_the_json_readers_share_one_scan(text: str) -> None:
    shared = lenient_json.json_values
    assert repr(list(lenient_json.iter_json(text))) == repr(
        list(shared(text, decode=lenient_json._loads, fence=lenient_json._letters_tag))
    )
    assert repr(list(protocol._json_values(text))) == repr(
        list(shared(text, decode=protocol._decode, decode_at=_object_at, opens="{", max_brackets=64))
    )
    assert form._extract_json(text) == _extract_json_shared(text)
