"""The fenced-block reader: each style's rule on the shapes small models write, and its invariants."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ghost_agent.text.fences import Fence, Style, find_fences, is_fence_line, sole_fence, strip_fences
from tests.text.fence_shapes import reply

Row = tuple[str, str, str, bool]  # (language, info, body, closed)


def _rows(text: str, style: Style = "line", unclosed: bool = False) -> list[Row]:
    return [(f.language, f.info, f.body, f.closed) for f in find_fences(text, style, unclosed=unclosed)]


# (text, blocks, blocks with unclosed=True when they differ)
LINE: list[tuple[str, list[Row], list[Row] | None]] = [
    ("Here:\n```python\nprint(1)\n```\nDone.", [("python", "python", "print(1)\n", True)], None),
    ("  ```py\n  x = 1\n  ```", [("py", "py", "  x = 1\n", True)], None),
    ("```python title=a.py\nx\n```", [("python", "python title=a.py", "x\n", True)], None),
    ("```\n```", [("", "", "", True)], None),
    # a closing line holds only backticks: trailing text does not close, trailing spaces do
    ("```\nx\n``` trailing\n```", [("", "", "x\n``` trailing\n", True)], None),
    (
        "a\n```py\n1\n```\nb\n```text\n2\n```  \nc",
        [("py", "py", "1\n", True), ("text", "text", "2\n", True)],
        None,
    ),
    # an opener mid-line is no opener; a lone closing line at the end has no line break, so it opens nothing
    ("Run ```python\nx\n```", [], []),
    # cut off by max_tokens: only `unclosed` reads the last block
    ("```python\ndef f():\n    return 1\n", [], [("python", "python", "def f():\n    return 1\n", False)]),
    # CRLF: the closing line "```\r" is not only backticks, so the block runs on
    ("```python\r\nx\r\n```\r\n", [], [("python", "python", "x\r\n```\r\n", False)]),
    # four backticks: the fourth is info, and "````" does not close
    ("````python\nx\n````", [], [("", "`python", "x\n````", False)]),
]


@pytest.mark.parametrize(("text", "closed", "unclosed"), LINE)
def test_line_style_reads_markdown_fences(text: str, closed: list[Row], unclosed: list[Row] | None) -> None:
    assert _rows(text) == closed
    assert _rows(text, unclosed=True) == (closed if unclosed is None else unclosed)


def test_spans_cover_the_indentation_and_the_closing_line() -> None:
    text = "intro\n  ```py\nx\n  ```  \nafter"
    (fence,) = find_fences(text)
    assert text[fence.start : fence.end] == "  ```py\nx\n  ```  "
    assert strip_fences(text, " ") == "intro\n \nafter"


INLINE: list[tuple[str, list[Row]]] = [
    ('Here it is: ```json\n{"a": 1}\n```', [("json", "json", '{"a": 1}\n', True)]),
    ("```x```", []),  # one line: no line break after the info string
    ('```py\nprint("```")\n```', [("py", "py", 'print("', True)]),  # closes at the next backticks, wherever
    ("```py`\nx\n```", []),  # a backtick in the info string: no opener
    ("```python\r\nx\r\n```", [("python", "python", "x\r\n", True)]),
    ("```py\nx", []),
]


@pytest.mark.parametrize(("text", "rows"), INLINE)
def test_inline_style_opens_anywhere_and_closes_at_the_next_backticks(text: str, rows: list[Row]) -> None:
    assert _rows(text, "inline") == rows


def test_inline_unclosed_runs_to_the_end() -> None:
    assert _rows("```py\nx", "inline", unclosed=True) == [("py", "py", "x", False)]


def test_languages_filter_the_openers_themselves() -> None:
    python = ("", "python", "python3", "py")
    assert [f.body for f in find_fences("```Python \ndef f(): pass\n```", "inline", languages=python)] == [
        "def f(): pass\n"
    ]
    # "```bash" opens nothing, so the backticks closing it open a block (up to the next backticks) of their own
    text = "```bash\nls\n```\nand\n```python\ndef f(): pass\n```"
    assert [f.body for f in find_fences(text, "inline", languages=python)] == ["and\n"]
    assert find_fences("```py\nx\n```", "inline", languages=()) == []
    with pytest.raises(ValueError):
        find_fences("```{}```", "same_line", languages=["json"])


SAME_LINE: list[tuple[str, list[Row]]] = [
    ('```json {"a": 1}```', [("json", "json", '{"a": 1}', True)]),
    ('```{"a": 1}```', [("", "", '{"a": 1}', True)]),
    ("```json5\n[1]\n```", [("json5", "json5", "[1]\n", True)]),
    ("```c++\n{}```", [("c", "c", "++\n{}", True)]),  # the tag is letters, digits, _ and -: the body starts at "+"
    ("a ```b``` c ```d", [("b", "b", "", True)]),
]


@pytest.mark.parametrize(("text", "rows"), SAME_LINE)
def test_same_line_style_reads_everything_between_backticks(text: str, rows: list[Row]) -> None:
    assert _rows(text, "same_line") == rows


def test_strip_fences_replaces_each_block() -> None:
    assert strip_fences("a ```b``` c ```d", " ", "same_line", unclosed=True) == "a   c  "
    assert strip_fences("x\n```py\n1\n```\ny") == "x\n\ny"
    assert strip_fences("no fences") == "no fences"


def test_sole_fence_is_the_whole_text() -> None:
    fence = sole_fence('\n ```json\n{"a": 1}\n```\n', "inline")
    assert fence is not None and fence.body == '{"a": 1}\n'
    assert sole_fence("```py\nx\n```\nmore", "inline") is None
    assert sole_fence("Here: ```py\nx\n```", "inline") is None
    assert sole_fence("```py\na\n```\n```py\nb\n```", "inline") is None
    assert sole_fence("```py\nx\n```") == Fence("py", "py", "x\n", 0, 11, True)


@pytest.mark.parametrize(
    ("line", "fence"),
    [("```", True), ("```python", True), ("   ```", True), ("\t```json", True), ("\xa0```", True),
     ("x ```", False), ("``", False), ("", False)],
)
def test_is_fence_line(line: str, fence: bool) -> None:
    assert is_fence_line(line) is fence


STYLES = st.sampled_from(["line", "inline", "same_line"])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(reply(), STYLES, st.booleans())
def test_blocks_are_ordered_disjoint_spans_and_strip_removes_exactly_them(
    text: str, style: Style, unclosed: bool
) -> None:
    fences = find_fences(text, style, unclosed=unclosed)
    last = 0
    for fence in fences:
        assert last <= fence.start < fence.end <= len(text)
        assert fence.body in text[fence.start : fence.end]
        assert fence.closed or (unclosed and fence.end == len(text))
        last = fence.end
    cuts = zip([0] + [f.end for f in fences], [f.start for f in fences] + [len(text)], strict=True)
    kept = "".join(text[a:b] for a, b in cuts)
    assert strip_fences(text, "", style, unclosed=unclosed) == kept
    first = fences[0] if fences else None
    whole = first is not None and not text[: first.start].strip() and not text[first.end :].strip()
    assert sole_fence(text, style, unclosed=unclosed) == (first if whole else None)
