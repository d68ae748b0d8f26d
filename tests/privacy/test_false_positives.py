"""Ordinary requests come out of redaction unchanged (`tests/ordinary_corpus.py`): numbers, dates, hashes,
git SHAs, UUIDs, version strings, order ids that fail Luhn, ISBNs, phone and part numbers, ports on command
lines, code and prose that mention passwords or cookies. Target: 0 redactions."""

from __future__ import annotations

import random

import pytest

from ghost_agent.privacy.redact import redact_obj, redact_text
from tests.ordinary_corpus import FIXED, ordinary_texts


@pytest.mark.parametrize("text", FIXED)
def test_fixed_ordinary_text_is_unchanged(text: str) -> None:
    assert redact_text(text) == text


def test_generated_ordinary_text_is_unchanged() -> None:
    changed = {
        category: [(text, out) for text in texts if (out := redact_text(text)) != text]
        for category, texts in ordinary_texts(random.Random(20), per_category=300).items()
    }
    assert {category: pairs[:3] for category, pairs in changed.items() if pairs} == {}


def test_an_ordinary_record_is_returned_as_it_is() -> None:
    texts = ordinary_texts(random.Random(21), per_category=20)
    record = {"messages": [{"role": "user", "content": text} for text in texts.pop("fixed")],
              "tool_args": {"inputs": list(texts.values())}}
    assert redact_obj(record) is record
