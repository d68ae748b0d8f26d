"""User-correction classifier: is the user's new message a correction of the agent's previous answer?

The user's next message is the cheapest supervisor free-form chat has. When it corrects the agent, the
prior turn failed by the user's own verdict. Two lexical signals must BOTH fire (either alone has too many
false positives - "No, I think you're right" is a phrase without a rephrase; a follow-up on the same topic
is a rephrase without a phrase):

* **A - `phrase`**: the current message STARTS with a correction phrase ("no", "actually", "that's wrong",
  "I meant", "try again", "still doesn't work", ...). Anchoring matters: a "no" inside a sentence is a
  discourse word, not a verdict. Leading whitespace/punctuation and a short filler ("please", "sorry",
  "hmm", "um", "uh", "well") are tolerated, so "Sorry, I meant X" and "Please try again" still count.
* **B - `rephrase`**: the content-token Jaccard overlap between the prior and the current user message is
  at least `JACCARD_REPHRASE_THRESHOLD`, and the current message has at least
  `MIN_CURRENT_TOKENS_FOR_REPHRASE` content tokens (a bare "no" cannot look like a rephrase of anything).

Purely lexical: no model call, no embeddings, no I/O - it runs on the request path before the turn starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

JACCARD_REPHRASE_THRESHOLD = 0.40
MIN_CURRENT_TOKENS_FOR_REPHRASE = 2

SIGNAL_PHRASE = "phrase"
SIGNAL_REPHRASE = "rephrase"

# Correction phrases, written plainly; `_phrase_pattern` makes apostrophes optional (curly or straight)
# and lets any run of whitespace separate words. Longer phrases first so `matched_phrase` names the most
# specific one ("still doesn't work" rather than a shorter overlap).
CORRECTION_PHRASES: tuple[str, ...] = (
    "that's not what i asked",
    "that's not what i wanted",
    "that's not what i meant",
    "that is not what i asked",
    "that is not what i wanted",
    "that is not what i meant",
    "not what i asked",
    "not what i wanted",
    "not what i meant",
    "that's not right",
    "that is not right",
    "that's not correct",
    "that is not correct",
    "that's incorrect",
    "that is incorrect",
    "that's wrong",
    "that is wrong",
    "that's not it",
    "you're wrong",
    "you are wrong",
    "you got it wrong",
    "you got that wrong",
    "you misunderstood",
    "you misunderstand",
    "you misread",
    "still doesn't work",
    "still does not work",
    "still didn't work",
    "still not working",
    "still wrong",
    "it didn't work",
    "it doesn't work",
    "that didn't work",
    "that doesn't work",
    "didn't work",
    "doesn't work",
    "did not work",
    "does not work",
    "not working",
    "not quite",
    "not right",
    "incorrect",
    "try again",
    "redo",
    "i meant",
    "i mean",
    "actually",
    "wrong",
    "nope",
    "nah",
    "no",
)

# Tolerated before the phrase: punctuation/markup (quotes, "> ", "-", "..."), and one filler word.
_LEAD = r"^[\W_]*(?:(?:please|sorry|hmm+|um+|uh+|well)\b[\W_]*)?"
# "No one answered", "no problem" and "no worries" open with "no" but are not verdicts on the answer.
_NO_EXCEPTIONS = r"(?![\s-]*one\b|\s+(?:problem|worries)\b)"


def _phrase_pattern(phrase: str) -> str:
    words = [re.escape(w).replace("'", "['’]?") for w in phrase.split()]
    pattern = r"\s+".join(words)
    return pattern + _NO_EXCEPTIONS if phrase == "no" else pattern


# `(?![\w'’])` is the word boundary: "nobody", "notice", "nope's" prefixes must not match "no".
CORRECTION_RE = re.compile(
    _LEAD + r"(?P<phrase>" + "|".join(_phrase_pattern(p) for p in CORRECTION_PHRASES) + r")(?![\w'’])",
    re.IGNORECASE,
)

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


@dataclass(frozen=True)
class CorrectionVerdict:
    """The classifier's answer for one (prior, current) pair of user messages.

    `is_correction` is True only when both signals fired; `signals` names those that fired, in the order
    ("phrase", "rephrase"); `jaccard` is the content-token overlap (computed even when the token floor kept
    Signal B from firing, 0.0 when either side has no content tokens); `matched_phrase` is the correction
    phrase Signal A matched, lowercased, or None.
    """

    is_correction: bool
    signals: tuple[str, ...] = ()
    jaccard: float = 0.0
    matched_phrase: str | None = None


def classify_user_correction(prior_user_text: object, current_user_text: object) -> CorrectionVerdict:
    """Classify `current_user_text` as a correction of the turn that answered `prior_user_text`.

    Never raises: None or any non-string input is treated as an empty message (→ not a correction).
    Callers holding OpenAI content-part lists should join the text parts first.
    """
    prior = prior_user_text if isinstance(prior_user_text, str) else ""
    current = current_user_text if isinstance(current_user_text, str) else ""
    phrase = match_correction_phrase(current)
    current_tokens = content_tokens(current)
    score = jaccard(content_tokens(prior), current_tokens)
    signals: list[str] = []
    if phrase is not None:
        signals.append(SIGNAL_PHRASE)
    if len(current_tokens) >= MIN_CURRENT_TOKENS_FOR_REPHRASE and score >= JACCARD_REPHRASE_THRESHOLD:
        signals.append(SIGNAL_REPHRASE)
    return CorrectionVerdict(
        is_correction=len(signals) == 2,
        signals=tuple(signals),
        jaccard=score,
        matched_phrase=phrase,
    )


def match_correction_phrase(text: object) -> str | None:
    """The correction phrase `text` starts with (lowercased, whitespace squashed), or None."""
    if not isinstance(text, str):
        return None
    m = CORRECTION_RE.match(text)
    if m is None:
        return None
    return " ".join(m.group("phrase").lower().replace("’", "'").split())


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
