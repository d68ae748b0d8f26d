"""Lenient JSON: the shared scan (whole text, fences, prose) and the strict reader built on it."""

from __future__ import annotations

from typing import Any

from ghost_agent.text.lenient_json import iter_json, json_values, scan_json


def test_iter_json_reads_the_whole_text_then_fences_then_the_prose() -> None:
    assert list(iter_json('[1, 2]')) == [[1, 2], [1, 2]]
    assert list(iter_json('x {"b": 2} ```json\n{"a": 1}\n```')) == [{"a": 1}, {"b": 2}, {"a": 1}]
    assert list(iter_json('x {"b": 2} ```{"a": 1}```')) == [{"a": 1}, {"b": 2}, {"a": 1}]  # a one-line fence
    assert list(iter_json('note {"a": {"b": 1}} and [1, [2]]')) == [{"a": {"b": 1}}, [1, [2]]]  # nested once


def test_iter_json_takes_only_letters_as_a_fence_tag() -> None:
    # "```json5" is no fence to this reader (its body would start "5"): the value is found in the prose only
    assert list(iter_json('x {"b": 2} ```json5\n{"a": 1}\n```')) == [{"b": 2}, {"a": 1}]


def test_iter_json_is_strict_and_never_raises_on_broken_or_odd_input() -> None:
    assert list(iter_json('{"a": 1,}')) == []
    assert list(iter_json("{'a': 1}")) == []
    assert list(iter_json(None)) == []  # type: ignore[arg-type]
    assert list(iter_json("{" * 5000)) == []


def test_the_prose_scan_is_bounded_by_brackets_or_by_tries() -> None:
    text = "[" + "[], " * 70 + '[]] {"late": 1}'
    assert [v for _, _, v in scan_json(text, max_brackets=64)] == [[[]] * 71]  # the 64 include the nested ones
    assert [v for _, _, v in scan_json(text, max_tries=2)][-1] == {"late": 1}  # tries count only decodes
    prose = "a [1] b {x} c {"
    assert [prose[a:b] for a, b, _ in scan_json(prose)] == ["[1]"]
    assert [prose[a:b] for a, b, _ in scan_json(prose, opens="{")] == []
    assert list(iter_json(text))[-1] != {"late": 1}


def test_json_values_takes_the_readers_decoders() -> None:
    def raw(chunk: str) -> Any:
        return chunk

    assert list(json_values("{x} ```[y]``` z", decode=raw)) == ["{x} ```[y]``` z", "[y]"]
    assert list(json_values("```js\n[1]\n```", decode=raw, fence=lambda f: f.language != "js")) == [[1]]
