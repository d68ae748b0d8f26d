"""Pasted data in a message: CSV/TSV runs, JSON documents and fenced data blocks are found; prose, code and
short comma-separated phrases are not; the work is bounded on any input."""

from __future__ import annotations

import time

from ghost_agent.text.inline_data import find_inline_data


def test_a_pasted_csv_run_is_found_with_its_header() -> None:
    text = "here is a CSV:\n\nregion,revenue\nWest,120\nEast,80\n\nWhat is the total for West?"
    [block] = find_inline_data(text)
    assert block.kind == "csv" and block.text == "region,revenue\nWest,120\nEast,80\n"
    assert block.suffix == ".csv"


def test_tsv_json_and_fenced_blocks() -> None:
    tsv = "name\tage\nAna\t31\nBen\t40\n"
    assert [(b.kind, b.text) for b in find_inline_data("data:\n" + tsv)] == [("tsv", tsv)]
    doc = 'orders:\n[{"id": 1, "total": 5},\n {"id": 2, "total": 7}]\nsum the totals'
    [block] = find_inline_data(doc)
    assert block.kind == "json" and block.text.startswith("[{") and block.text.endswith("}]")
    fenced = "```csv\na,b\n1,2\n```\nand\n```\nx,y\n3,4\n```"
    assert [b.kind for b in find_inline_data(fenced)] == ["csv", "csv"]
    assert [b.kind for b in find_inline_data('```json\n{"a": 1}\n```')] == ["json"]


def test_code_prose_and_lists_are_not_data() -> None:
    assert find_inline_data("```python\nx = [1, 2, 3]\nprint(x, x)\ny = (1, 2)\n```") == []
    assert find_inline_data("I like apples, pears and plums. Do you, too?") == []
    assert find_inline_data("Dear Ana,\nthanks, really.\nBest, Ben") == []  # comma counts differ
    assert find_inline_data("") == []
    assert find_inline_data("{not json at all}") == []


def test_bounded_on_hostile_input() -> None:
    hostile = "[\n" + "]\n" * 20000
    started = time.perf_counter()
    find_inline_data(hostile)
    assert time.perf_counter() - started < 2.0
