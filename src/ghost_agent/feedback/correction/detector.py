"""User-correction classifier: is the user's new message a correction of the agent's previous answer?

The user's next message is the cheapest supervisor free-form chat has. When it corrects the agent, the
prior turn failed by the user's own verdict. `classify_user_correction` scores the message with the lexical
cues of `feedback/correction/cues.py`, combined as `feedback/correction/score.py` says — explicit verdicts
("that's wrong", "not what I asked", "you forgot …", "still doesn't work", "I said …", a leading "no" that
answers no question) are enough on their own; weaker
evidence (a contrast "X, not Y", "it should be …", "that's <something else>", a hedge, a rephrase of the prior
request) needs company — and uses the context to tell a verdict from courtesy: "no thanks", "No, that's all",
a "no" answering the assistant's own question, "Great, now …", "Actually, one more thing: …". A plain
counter-statement with no correction wording ("5040", "the Volga is longer", "It's Ottawa", "It is stable",
"Isn't it Canberra?") is read against the prior request and reply by `feedback/correction/contradiction.py`
(with `exchange.py`, `values.py` and `relations.py`); a form or
count the reply broke ("bullets, please", "I count five there") by `form.py`; sarcasm, shouting and
thanks in any language by `tone.py`.

Measured on the labelled set `tests/feedback/correction/data/user_corrections.jsonl`
(`bench/bench_correction_detector.py`).
The original two-signal rule — an anchored correction phrase AND a rephrase (content-token Jaccard ≥ 0.40), both
required — is kept as `classify_user_correction_legacy` for that comparison: it never false-alarms but misses
almost every correction people actually write ("No, wrong format — tell me what 15% of 2340 dollars is, as
$351.00" overlaps its request by 0.27).

Purely lexical: no model call, no embeddings, no I/O - it runs on the request path before the turn starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ghost_agent.feedback.correction.score import CORRECTION_SCORE_THRESHOLD, score_cues
from ghost_agent.text.words import STOPWORDS, content_tokens, jaccard  # noqa: F401 - STOPWORDS re-exported

JACCARD_REPHRASE_THRESHOLD = 0.40
MIN_CURRENT_TOKENS_FOR_REPHRASE = 2

SIGNAL_PHRASE = "phrase"
SIGNAL_REPHRASE = "rephrase"
# A rephrase of the prior request is supporting evidence only: "Great, now do the same for Java" re-asks too.
REPHRASE_SUPPORT_WEIGHT = 0.3
REPHRASE_SCAN_CHARS = 1000  # overlap and topic are measured on at most this much of each message

# The legacy rule's correction phrases (`match_correction_phrase`), written plainly; `_phrase_pattern` makes
# apostrophes optional (curly or straight) and lets any run of whitespace separate words. Longer phrases first so
# `match_correction_phrase` names the most specific one ("still doesn't work" rather than a shorter overlap).
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

@dataclass(frozen=True)
class CorrectionVerdict:
    """The classifier's answer for one follow-up message.

    `is_correction` is the decision; `signals` names the cues that fired, in the order found (the legacy
    classifier's are "phrase", "rephrase"); `jaccard` is the content-token overlap with the prior user message
    (0.0 when either side has no content tokens); `matched_phrase` is the leading cue the message opens with,
    lowercased ("no", "actually", "wrong", ...), or None; `score` is the summed cue weight (the decision is
    `score >= CORRECTION_SCORE_THRESHOLD`); `reason` is a one-line account for logs and the sidecar.
    """

    is_correction: bool
    signals: tuple[str, ...] = ()
    jaccard: float = 0.0
    matched_phrase: str | None = None
    score: float = 0.0
    reason: str = ""


def classify_user_correction(
    prior_user_text: object, current_user_text: object, prior_reply_text: object = None
) -> CorrectionVerdict:
    """Classify `current_user_text` as a correction of the reply `prior_reply_text` to `prior_user_text`.

    The reply is optional context: when it ended by asking the user something, a leading "no" is an answer, not
    a verdict. Never raises: None or any non-string input is treated as an empty message (→ not a correction).
    Callers holding OpenAI content-part lists should join the text parts first.
    """
    prior = prior_user_text if isinstance(prior_user_text, str) else ""
    current = current_user_text if isinstance(current_user_text, str) else ""
    reply = prior_reply_text if isinstance(prior_reply_text, str) else ""
    current_tokens = content_tokens(_capped(current))
    prior_tokens = content_tokens(_capped(prior))
    overlap = jaccard(prior_tokens, current_tokens)
    context = _stems(prior_tokens) | _stems(content_tokens(_capped(reply)))
    on_topic = not _stems(current_tokens).isdisjoint(context)
    score, hits = score_cues(current, reply, on_topic=on_topic, prior_request=prior)
    signals = [h.name for h in hits]
    if hits and len(current_tokens) >= MIN_CURRENT_TOKENS_FOR_REPHRASE and overlap >= JACCARD_REPHRASE_THRESHOLD:
        signals.append(SIGNAL_REPHRASE)
        score += REPHRASE_SUPPORT_WEIGHT
    is_correction = score >= CORRECTION_SCORE_THRESHOLD - 1e-9  # weights like 0.6 + 0.4 sum in floating point
    lead = next((h.text for h in hits if h.lead), None)
    if lead is None and is_correction:  # "Please try again: …", "That's not what I asked": the legacy phrase list
        lead = match_correction_phrase(current)
    cues = " + ".join(signals) if signals else "no cue"
    return CorrectionVerdict(
        is_correction=is_correction,
        signals=tuple(signals),
        jaccard=overlap,
        matched_phrase=" ".join(lead.split()) if lead else None,
        score=round(score, 3),
        reason=f"{cues} (score={score:.2f}, jaccard={overlap:.2f})",
    )


def _stems(tokens: frozenset[str]) -> set[str]:
    """Tokens with a plural "s" dropped ("haikus" ~ "haiku"), for the on-topic test only."""
    return {t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t for t in tokens}


def _capped(text: str) -> str:
    """Head and tail of a long message (pasted code or logs): enough to measure a rephrase, bounded in cost."""
    if len(text) <= REPHRASE_SCAN_CHARS:
        return text
    half = REPHRASE_SCAN_CHARS // 2
    return text[:half] + " " + text[-half:]


def classify_user_correction_legacy(prior_user_text: object, current_user_text: object) -> CorrectionVerdict:
    """The original two-signal rule, kept for comparison: an anchored correction phrase AND a rephrase.

    Signal A (`phrase`): the message STARTS with a correction phrase (`CORRECTION_PHRASES`, a short filler
    tolerated). Signal B (`rephrase`): content-token Jaccard with the prior user message is at least
    `JACCARD_REPHRASE_THRESHOLD` and the message has at least `MIN_CURRENT_TOKENS_FOR_REPHRASE` content tokens.
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
    is_correction = len(signals) == 2
    return CorrectionVerdict(
        is_correction=is_correction,
        signals=tuple(signals),
        jaccard=score,
        matched_phrase=phrase,
        score=float(len(signals)),
        reason=f"{' + '.join(signals) or 'no signal'} (jaccard={score:.2f})",
    )


def match_correction_phrase(text: object) -> str | None:
    """The correction phrase `text` starts with (lowercased, whitespace squashed), or None."""
    if not isinstance(text, str):
        return None
    m = CORRECTION_RE.match(text)
    if m is None:
        return None
    return " ".join(m.group("phrase").lower().replace("’", "'").split())
