"""What the user said they wanted: the stated preference inside a correcting message.

A natural correction has up to three parts: a cue that rejects the reply ("No,", "Not like that —", "that's
not the unit I use."), what the user wants instead ("I write dates as DD/MM/YYYY.", "our style guide wants
SQL keywords in lowercase", "It's Canberra.") and a rephrase of the original request ("What's the date of
Christmas Day 2025?"). The middle part is the best lesson a correction can teach: it is the user's own
words, where a small model's critique often restates the wrong reply or drifts to a generic rule (measured on
the embedded 1.5B: of 8 corrections, 4 critiques stored a lesson that repeated the failed reply).

`stated_preference(request, correction)` keeps the middle part: the correction is cut into sentences (and at
dashes), rejection cues are stripped from each, and what remains is dropped when it only rejects ("that's not
how we write them"), only repeats the request (most of its content words are the request's) or is empty. No
model, no I/O; the result is still user text, which the lesson store sanitises like any other field.
"""

from __future__ import annotations

import re

from ghost_agent.memory.lessons import lesson_tokens

MAX_CHARS = 300  # a preference longer than this is a new request, not a convention
MAX_SEGMENTS = 3
REPHRASE_SHARE = 0.5  # a request-shaped segment with this share of its content words from the request repeats it

# Sentence ends, and dashes between clauses ("Not like that — I use kebab-case").
_SEGMENT_RE = re.compile(r"(?<=[.!?])\s+|\s+[—–-]{1,2}\s+|\n+")
# A rejection cue at the start of a segment; stripped repeatedly ("No, wrong format. ...").
_CUE_RE = re.compile(
    r"^(?:no+|nope|nah|wrong\s+(?:format|answer|again|unit|style)|wrong|incorrect|not\s+(?:quite|really|like\s+that|that|right|correct)|"
    r"that'?s\s+(?:wrong|incorrect|not\s+(?:it|right|correct|quite\s+right|what\s+i\s+(?:asked|wanted|meant)))|"
    r"actually|sorry|hmm+|ugh|oops|try\s+again|again|please)\b"
    r"[\s,.!:;]*",
    re.I,
)
# A segment that only rejects: "that's not how we write them", "this isn't the unit I use".
_COMPLAINT_RE = re.compile(
    r"^(?:that|this|it|these|those)(?:'s|\s+is|\s+isn'?t|\s+are|\s+aren'?t|\s+was|\s+wasn'?t)?\s*(?:not|n'?t)?\s+"
    r"(?:not\s+)?(?:how|what|the\s+(?:\w+\s+){0,2}(?:i|we)\s|right|correct|it|quite|wrong|incorrect)",
    re.I,
)
# Words that only say "wrong" (a segment made of them carries no preference).
_CUE_WORDS = frozenset(
    "wrong incorrect right correct format formatting answer again quite really please thank thanks sorry "
    "mistake error oops hmm fix redo retry try not".split()
)


# A segment shaped like a request: a question, or an imperative / question word first.
_REQUEST_START = frozenset(
    "write give suggest tell show list make create convert translate compute calculate find explain generate "
    "draft do redo put name count sort rewrite answer summarize summarise describe reply respond say use return "
    "print output add send help what how when where which who why whats can could would will is are does did"
    .split()
)


# What makes a sentence a statement rather than a request: a copula or auxiliary, a first-person subject, a
# contrast ("not X"), an equation.
_STATEMENT_RE = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't|wasn't|weren't|has|have|had|does|doesn't|don't|did|didn't|should|"
    r"must|means?|i|we|my|our|not)\b|=",
    re.I,
)


def _segments(text: str) -> list[str]:
    return [s.strip() for s in _SEGMENT_RE.split(text) if s and s.strip()]


def _strip_cues(segment: str) -> str:
    """The segment without leading rejection cues; a complaint clause ("That's wrong, 17*23 is 391") goes up to
    its comma, and a segment that is only a complaint ("that's not how we write them") becomes empty."""
    previous = None
    while previous != segment:
        previous = segment
        segment = _CUE_RE.sub("", segment, count=1).strip()
        if _COMPLAINT_RE.match(segment):
            head, comma, tail = segment.partition(",")
            segment = tail.strip() if comma else ""
    return segment


def _is_rephrase(segment: str, tokens: list[str], request_tokens: set[str]) -> bool:
    """A restatement of the request: it adds no content word of its own (cue words aside); or most of its
    content words are the request's and it is shaped like a request (a question, an imperative or question
    word first) or at least not like a statement ("Sum the numbers 0..4 with numpy and print only the
    number" restates; "Binary search is logarithmic", "I need JSON", "CSV, not bullets" state)."""
    new = [t for t in tokens if t not in request_tokens and t not in _CUE_WORDS]
    shared = len(tokens) - len([t for t in tokens if t not in request_tokens])
    if shared and not new:  # only the request's words (and cue words): "Write it again."
        return True
    if shared < 2 or shared / len(tokens) < REPHRASE_SHARE:
        return False
    lead = re.match(r"[\W_]*([A-Za-z']+)\b", segment)  # "17*23 is 391" starts with no word
    first = lead.group(1).lower().replace("'", "") if lead else ""
    if segment.rstrip().endswith("?") or first in _REQUEST_START:
        return True
    return not _STATEMENT_RE.search(segment)


def stated_preference(request: str, correction: str | None) -> str | None:
    """The part of `correction` (the user's correcting message) that says what they want instead of the
    reply to `request`, in their words; None when it only rejects and/or repeats the request.

    A wish that exists only inside a rephrase ("no, reply with three words exactly: kangaroo trampoline
    metronome") is not cut out of it: it is bound to that one request, and a lesson made of it would replay
    the instance (its words, its numbers) on the next similar request. The critique's lesson covers it.

    >>> stated_preference("When is Christmas Day in 2025? Just give me the date.",
    ...                   "No, I write dates as DD/MM/YYYY. What's the date of Christmas Day 2025?")
    'I write dates as DD/MM/YYYY.'
    """
    if not correction or not correction.strip():
        return None
    request_tokens = set(lesson_tokens(request or ""))
    kept: list[str] = []
    for raw in _segments(correction):
        segment = _strip_cues(raw)
        tokens = lesson_tokens(segment)
        if not tokens or all(t in _CUE_WORDS for t in tokens):
            continue
        if _is_rephrase(segment, tokens, request_tokens):
            continue
        kept.append(segment)
        if len(kept) == MAX_SEGMENTS:
            break
    text = " ".join(kept).strip()
    if not text or len(text) > MAX_CHARS:
        return None
    return text[0].upper() + text[1:]


LESSON_SOURCE = "preference"  # the lesson store's `source` for a lesson made of the user's stated preference
LEAD = "As the user put it: "
_QUOTED_RE = re.compile(r'^As the user put it: "(.+)"$', re.S)


def preference_solution(preference: str) -> str:
    """The lesson's solution for a stated preference: the user's words, quoted (`preference_text` reads it)."""
    return f'{LEAD}"{preference}"'


def preference_text(solution: str) -> str | None:
    """The user's words inside a preference lesson's solution (None when `solution` is not one)."""
    match = _QUOTED_RE.match(solution.strip())
    return match.group(1).strip() if match else None


__all__ = ["LEAD", "LESSON_SOURCE", "MAX_CHARS", "preference_solution", "preference_text", "stated_preference"]
