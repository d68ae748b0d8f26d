"""User-correction detector: is the user's new message a correction of the agent's previous answer?

The user's next message is the cheapest supervisor free-form chat has. When it corrects the agent, the prior
turn failed by the user's own verdict. Two layers decide:

1. **Explicit verdicts** (`explicit_verdict`): a message that opens with one of a short list of unambiguous
   phrases ("that's wrong", "that's not what I asked", "you misunderstood", "still doesn't work", …), or with a
   "no" followed by what the user needs or does when the reply asked nothing ("No, I write dates as
   DD/MM/YYYY": the correction that teaches a preference), is a correction whatever else it says. This is the
   only rule layer, kept because it is exact and needs no model.
2. **The correction model** (`model.py`, `features.py`): a logistic regression over the follow-up's words and
   bigrams, a few dozen cue families (a leading "no", agreement, thanks in several languages, a
   verdict in another language, irony, a hedge, the user fixing their own request, a new request, …) and how the
   follow-up relates to the request and the reply (a number the reply did not state, a name new to the exchange,
   overlap, a quotation of the reply, whether the reply asked something). Its weights are fitted by
   `scripts/train_correction.py` on the labelled exchanges, and its threshold is chosen for precision by
   leave-one-batch-out cross-validation: the cues are evidence with learned weights, not decisions.

When the checkpoint cannot be used the explicit verdicts decide alone (a warning says so once). The original
two-signal rule (an anchored correction phrase AND a rephrase) is kept as `classify_user_correction_legacy` for
the benchmark's comparison. Measured by `bench/bench_correction_detector.py` on
`tests/feedback/correction/data/user_corrections.jsonl` and on blind batches.

No model call, no embeddings, no I/O: it runs on the request path before the turn starts (well under a
millisecond).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ghost_agent.feedback.correction.features import features, reply_asks, says_thanks
from ghost_agent.feedback.correction.model import default_model
from ghost_agent.text.sparse_model import SparseModel
from ghost_agent.text.words import content_tokens, jaccard

JACCARD_REPHRASE_THRESHOLD = 0.40
MIN_CURRENT_TOKENS_FOR_REPHRASE = 2

SIGNAL_PHRASE = "phrase"
SIGNAL_REPHRASE = "rephrase"
SIGNAL_VERDICT = "explicit_verdict"
SIGNAL_MODEL = "model"
OVERLAP_SCAN_CHARS = 1000  # the overlap with the request is measured on at most this much of each message

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

# The explicit-verdict rule layer: the phrases above that are a verdict wherever they open a message. The single
# words ("no", "nope", "wrong", "actually", "i meant", …) are not among them: "No, that's exactly right", "Actually,
# one more thing", "wrong question, sorry" — those are for the model, which reads them with the rest.
EXPLICIT_VERDICTS: frozenset[str] = frozenset(p for p in CORRECTION_PHRASES if " " in p and p not in (
    "not right", "i meant", "i mean", "not quite",
))

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

_LEADING_NO = re.compile(r"[\W_]*(?:no+|nope|nah)\b[\s,.;:!—–-]+", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"(?:i|we|my|our)\b", re.IGNORECASE)
_COURTESY = re.compile(
    r"(?:i['’]?m|we['’]?re)\s+(?:good|fine|ok|okay|set|all\s+set|done|happy|sure)\b|i\s+(?:think|guess|agree|see"
    r"|get\s+it|like|love|was|['’]ll|['’]d)\b|we['’]?(?:ll|d)\b",
    re.IGNORECASE,
)
_EXPLICIT = frozenset(p.replace("'", "") for p in EXPLICIT_VERDICTS)  # "thats wrong" typed without the apostrophe


@dataclass(frozen=True)
class CorrectionVerdict:
    """The classifier's answer for one follow-up message.

    `is_correction` is the decision; `signals` names what spoke for it: "explicit_verdict" (the rule layer),
    "model" (P(correction) reached the threshold), then the cue families present (evidence, not decisions; the
    legacy classifier's are "phrase", "rephrase"); `jaccard` is the content-token overlap with the prior user
    message (0.0 when either side has no content tokens); `matched_phrase` is the correction phrase the message
    opens with, lowercased ("no", "actually", "that's wrong", ...), or None; `score` is P(correction) from the
    model (1.0 / 0.0 for the rule layer alone when there is no model); `reason` is a one-line account for logs and
    the sidecar (the probability, the threshold and the features that weighed most).
    """

    is_correction: bool
    signals: tuple[str, ...] = ()
    jaccard: float = 0.0
    matched_phrase: str | None = None
    score: float = 0.0
    reason: str = ""


def classify_user_correction(
    prior_user_text: object, current_user_text: object, prior_reply_text: object = None, *,
    model: SparseModel | None = None,
) -> CorrectionVerdict:
    """Classify `current_user_text` as a correction of the reply `prior_reply_text` to `prior_user_text`.

    The reply is optional context (the model reads the follow-up against it: a number it did not state, whether it
    asked something). `model` is the packaged checkpoint unless another is passed (the benchmark compares
    checkpoints this way). Never raises: None or any non-string input is treated as an empty message (→ not a
    correction). Callers holding OpenAI content-part lists should join the text parts first.
    """
    prior = prior_user_text if isinstance(prior_user_text, str) else ""
    current = current_user_text if isinstance(current_user_text, str) else ""
    reply = prior_reply_text if isinstance(prior_reply_text, str) else ""
    if not current.strip():
        return CorrectionVerdict(is_correction=False, reason="empty message")
    overlap = jaccard(content_tokens(_capped(prior)), content_tokens(_capped(current)))
    verdict = explicit_verdict(current, reply)
    model = model if model is not None else default_model()
    signals: list[str] = [SIGNAL_VERDICT] if verdict is not None else []
    if model is None:
        p = 1.0 if verdict is not None else 0.0
        why = f"explicit verdict {verdict!r}" if verdict else "no explicit verdict (no model)"
        return CorrectionVerdict(verdict is not None, tuple(signals), overlap, verdict, p,
                                 f"{why}, jaccard={overlap:.2f}")
    found = features(prior, reply, current)
    p = model.probabilities(found)[0]
    threshold = model.thresholds[0]
    if p >= threshold:
        signals.append(SIGNAL_MODEL)
    signals += [f[2:] for f in found if f.startswith("k:")]
    top = ", ".join(f"{name}{w:+.2f}" for name, w in model.contributions(found, "correction", top=4))
    lead = verdict or match_correction_phrase(current)
    reason = (f"{'explicit verdict ' + repr(verdict) + '; ' if verdict else ''}model p={p:.2f} "
              f"(threshold {threshold:.2f}; {top}), jaccard={overlap:.2f}")
    return CorrectionVerdict(
        is_correction=verdict is not None or p >= threshold,
        signals=tuple(signals),
        jaccard=overlap,
        matched_phrase=lead,
        score=round(p, 4),
        reason=reason,
    )


def explicit_verdict(text: object, reply: object = None) -> str | None:
    """The explicit verdict `text` opens with, or None: one of the phrases ("that's wrong", "not what i asked",
    …), after at most one leading "no" ("No, that's wrong"); or a leading "no" followed by what the user needs
    or does ("No, I write dates as DD/MM/YYYY", "No, we need the hidden files too") when the reply asked nothing
    ("No, we use pyproject.toml" answers "Do you use setup.py?") and the message is not courtesy, agreement or
    thanks ("No, I'm good", "No, I think you're right", "No, I just wanted a second pair of eyes. Cheers.")."""
    if not isinstance(text, str):
        return None
    lead = _LEADING_NO.match(text)
    rest = text[lead.end():] if lead else text
    phrase = match_correction_phrase(rest)
    if phrase is not None and phrase.replace("'", "") in _EXPLICIT:
        return phrase
    if lead and _FIRST_PERSON.match(rest) and not _COURTESY.match(rest) and not says_thanks(rest):
        asked = isinstance(reply, str) and reply_asks(reply)
        if not asked:
            return "no, " + rest.split()[0].lower()
    return None


def _capped(text: str) -> str:
    """Head and tail of a long message (pasted code or logs): enough to measure a rephrase, bounded in cost."""
    if len(text) <= OVERLAP_SCAN_CHARS:
        return text
    half = OVERLAP_SCAN_CHARS // 2
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
