"""Content tokens and their overlap: what the correction detector, lesson relevance and the dream merge share."""

from __future__ import annotations

from ghost_agent.text.words import content_tokens, jaccard


def test_content_tokens_keep_identifiers_and_digits() -> None:
    assert content_tokens("Rename my_var to user_id in v2 of the 2024 report") == {
        "rename", "my_var", "user_id", "v2", "2024", "report",
    }


def test_content_tokens_drop_stopwords_contractions_and_correction_words() -> None:
    assert content_tokens("No, actually I don't think that's what you should do") == frozenset()
    assert content_tokens("dont thats youre") == frozenset()
    assert content_tokens("the user's id") == {"user", "id"}


def test_jaccard_edges() -> None:
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(frozenset({"a"}), frozenset()) == 0.0
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "a"})) == 1.0
