"""Words of a message: content tokens (stopwords dropped) and their overlap.

Shared by the correction detector (is a follow-up a rephrase of the request?), lesson relevance in memory and
the dream phase's duplicate merge: one notion of "the words that say what is asked".
"""

from __future__ import annotations

import re

# Words dropped before the overlap is measured. Function words (articles, pronouns, auxiliaries, modal
# verbs, quantifiers, prepositions, conjunctions, question words) and generic request verbs say nothing
# about WHAT is asked, so they would make unrelated messages look alike. The correction phrases' own words
# ("no", "actually", "wrong", "meant", "try", "again", ...) are dropped too: they appear in the correction
# but not in the question it re-asks, so they would dilute the overlap of a genuine rephrase, and when the
# prior message happened to contain them they would inflate it.
_STOPWORD_TEXT = """
    a an the
    i me my mine myself you your yours yourself we us our ours he him his she her hers it its itself
    they them their theirs this that these those there here
    i'm i've i'd i'll you're you've you'd you'll it's that's there's here's what's let's we're they're
    is are was were be been being am do does did done doing have has had having
    isn't aren't wasn't weren't don't doesn't didn't haven't hasn't hadn't
    can could will would shall should may might must
    can't cannot couldn't won't wouldn't shouldn't mustn't
    all any some each every few many much more most none both either neither several other another such
    own same lot lots
    of in on at to for with by from about into onto over under as than then so if or and but nor because
    while also just very too up out off via per
    what which who whom whose how why when where
    please thanks thank ok okay hi hello hey yes yeah
    want need like get give tell show let know think make
    no nope nah not wrong actually right correct incorrect quite mean meant misunderstood misunderstand
    misread got try again redo work works worked working still asked wanted sorry hmm um uh well
"""
# Chat is often typed without apostrophes ("thats", "dont"), so contractions are also listed bare - except
# where the bare form is a content word of its own ("id" from "i'd", "ill" from "i'll").
_BARE_CONTRACTIONS = {w.replace("'", "") for w in _STOPWORD_TEXT.split() if "'" in w} - {"id", "ill"}
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split()) | _BARE_CONTRACTIONS

_TOKEN_RE = re.compile(r"\w+(?:'\w+)*")


def content_tokens(text: object) -> frozenset[str]:
    """The distinct content tokens of `text`: lowercased words minus `STOPWORDS`.

    Words are runs of letters, digits and underscores (so `snake_case` names and numbers survive whole),
    with inner apostrophes kept so contractions can be matched as stopwords; a possessive "'s" is dropped.
    """
    if not isinstance(text, str):
        return frozenset()
    tokens: set[str] = set()
    for raw in _TOKEN_RE.findall(text.lower().replace("’", "'")):
        if raw in STOPWORDS:
            continue
        token = raw[:-2] if raw.endswith("'s") else raw
        if token and token not in STOPWORDS:
            tokens.add(token)
    return frozenset(tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|, and 0.0 when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0
