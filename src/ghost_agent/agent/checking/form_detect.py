"""Which output forms a user's request states ("end with `Answer: <n>`", "reply with only JSON", "yes or no").

Precision over recall: a false detection would make `agent/checking/form.py` alter a good reply. Only the user's own
text is read, and form words inside code fences, docstrings, `>>>` examples, quoted passages and sentences that
describe code do not count; a form phrase counts only when it reads as an instruction. Pure and fast; never
raises (`detect_forms` returns [] on an internal error).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

Kind = Literal[
    "answer_line", "json_only", "number_only", "yes_no", "one_word", "code_only", "code_block", "list", "max_words"
]
KINDS: tuple[Kind, ...] = get_args(Kind)  # also the order `detect_forms` returns forms in
_WHOLE: tuple[Kind, ...] = ("json_only", "number_only", "yes_no", "one_word", "code_only")  # exclusive forms
Message = dict[str, str]
MAX_SOURCE_CHARS = 200
SCAN_CHARS = 20000
LONG_SENTENCE_CHARS = 2000
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_LANGS = r"python|py|sql|bash|sh|shell|javascript|js|typescript|ts|json|java|c|cpp|c\+\+|go|rust|ruby|html|css|yaml"


@dataclass(frozen=True)
class FormSpec:
    """One output form the user asked for; `source` is the request sentence that stated it."""

    kind: Kind
    source: str = ""
    label: str = ""  # answer_line: "Answer", "Final answer"… as the user wrote it; "" = a bare number last line
    language: str = ""  # code_only / code_block: the fence language, "" when unstated
    limit: int = 0  # max_words: the word limit; list: the item count (0 = any, at least 2)
    numeric: bool = False  # answer_line: the value after the label must be a plain number

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-ready dict (for the trajectory record)."""
        return asdict(self)


# --- detection ------------------------------------------------------------------------------------------------
_REQUEST_CODE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)|\"\"\".*?(?:\"\"\"|\Z)|'''.*?(?:'''|\Z)"
    r"|^[ \t]*(?:>>>|\.\.\. |def |class |import |from \S+ import )[^\n]*",
    re.M | re.S,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n[ \t]*\n|\n(?=[ \t]*(?:[-*•]|\d+[.)])[ \t])")
_QUOTED = re.compile(r"[\"“][^\"“”\n]{0,200}[\"”]|(?<!\w)['‘][^'‘’\n]{0,200}['’](?!\w)")
_QUESTION = re.compile(
    r"(?i)^\W*(?:is|are|am|was|were|do|does|did|how|what|why|when|where|who|which|should|has|have|isn't|aren't|"
    r"don't|doesn't)\b"
)
_POLITE = re.compile(r"(?i)^\W*(?:please\s+)?(?:can|could|would|will)\s+you\b")
_YES_NO_TAG = re.compile(r"(?i)\(\s*yes\s*(?:/|or)\s*no\s*\)")
_CODE_WORDS = re.compile(
    r"(?i)\b(?:functions?|methods?|programs?|scripts?|class(?:es)?|modules?|endpoints?|api|regex|parser|files?|"
    r"returns|prints|outputs|accepts|takes|reads|handles|parses)\b",
)
_TEMPLATE = re.compile(
    r"(?i)(?:[`'\"“‘*]|\b(?:with|as|line|form|format|writing|write|saying|like|of)\s*:?\s+)[`'\"“‘*]*"
    r"(?P<label>(?:[A-Za-z]+ )?(?:answer|result|solution|total))\**\s*:\s*\**\s*"
    r"(?P<ph><[^<>\n]{1,30}>|\{[^{}\n]{1,30}\}|\[[^\[\]\n]{1,30}\]|\.\.\.|…|[XNYxn]\b|-?\d[\d,.]*"
    r"|(?:the |your )?(?:final )?(?:number|answer|value|result)\b|[`'\"”’])",
)
_ANSWER_TRIGGER = re.compile(
    r"(?i)\b(?:end|ending|finish|conclude|close|last|line|form|format|formatted|followed|give|state|put|provide|"
    r"include|write|mark)\b",
)
_LABEL_STOP = {"with", "as", "line", "form", "format", "the", "a", "your", "write", "writing", "saying", "like", "of"}
_NUMERIC_PH = re.compile(r"\d|\b(?:n|num|number|numeric|numerical|integer|int|digits?|amount|count)\b", re.I)
_NUMERIC_WORD = re.compile(r"\b(?:number|numeric(?:al)?|integer)\b(?!\s+of\b)", re.I)
_LAST_LINE = re.compile(r"\b(?:last|final) line\b|\bown line at the end\b", re.I)
_YOUR = re.compile(r"\b(?:your|put|write|give|place|end|finish|state|show)\b", re.I)
# A form phrase counts only as an instruction: at the sentence start, after punctuation or after "you", "please",
# "and", "make sure to"…; not in narration ("I told him to answer with yes or no", "the bot replies in one word").
_IMP = (
    r"(?:^\W*|[,;:(]\s*|\b(?:you|please|and|then|now|also|always|but|so|just|simply|(?:sure|remember|want you|"
    r"need you|like you) to)\s+)"
)
_REPLY = r"(?:reply|respond|answer|return|output|give|print|send|provide|write|format|emit)\b[^.;:?!\n]{0,30}?"
_TASK = (  # an instruction verb, then up to 80 characters of its object ("Summarize the benefits … as a list")
    rf"{_IMP}(?:answer|reply|respond|explain|describe|summari[sz]e|sum up|write|give|list|name|tell|define|provide|"
    r"present|format|show|put|outline|enumerate|return|compare|make|create|say)\b[^.;?!\n]{0,80}?"
)
_ONLY = rf"(?:{_IMP}{_REPLY}|^\W*|\b(?:should|must)\s+(?:be|contain|consist of)\s+)(?:only|just|solely|exclusively)\s+"
_FORM_RES: dict[Kind, re.Pattern[str]] = {
    "json_only": re.compile(
        rf"(?i){_ONLY}(?:(?:with|in|as|a|an|the|valid|raw|pure|plain|one|single|strict|compact)\s+){{0,4}}json\b"
        r"|\bjson\s+(?:only|and nothing else)\b"
    ),
    "number_only": re.compile(
        rf"(?i){_ONLY}(?:(?:with|a|an|the|one|single|final|numeric(?:al)?|plain|bare|resulting)\s+){{0,4}}"
        r"(?:number|integer|numeric(?:al)? (?:answer|value|result)|digits?)\b(?!\s+(?:of|on|in|at)\b)"
        rf"|\b(?:number|integer)\s+only\b|{_IMP}(?:reply|respond|answer)\s+with\s+(?:a single|one single|a bare|"
        r"a plain|a single plain)\s+(?:number|integer)\b"
    ),
    "yes_no": re.compile(
        rf"(?i)(?:{_IMP}(?:answer|reply|respond|say)\s+(?:(?:with|only|just|simply|either|by|saying|in)\s+){{0,3}}"
        r"(?:a\s+)?|^\W*(?:only|just|simply)\s+)[\"'`“]?yes[\"'`”]?\s*(?:or|/)\s*[\"'`“]?no\b"
        r"(?![\s-]*(?:questions?|type)\b)|^\W*(?:(?:please\s+)?(?:answer|reply)\s*:?\s*)?\(?yes\s*(?:or|/)\s*no\)?\W*$"
    ),
    "one_word": re.compile(
        rf"(?i){_TASK}\b(?:in|with|using)\s+(?:just\s+|only\s+|exactly\s+)?(?:one|a single)\s+word\b"
        r"(?![-\s]+(?:per|for|each)\b)|^\W*in\s+(?:just\s+)?(?:one|a single)\s+word\W*$|(?:^\W*(?:a\s+)?|\b(?:give|"
        r"want|need|expect|with|provide)\s+(?:me\s+)?(?:only\s+|just\s+)?(?:a\s+)?)(?:one|single)[- ]word\s+"
        r"(?:answer|reply|response)\b"
    ),
    "code_only": re.compile(
        rf"(?i){_IMP}(?:give|return|reply|respond|output|show|print|send|provide|write)\s+(?:me\s+|us\s+)?"
        rf"(?:with\s+)?(?:only|just)\s+(?:the\s+|a\s+|your\s+)?(?:(?P<lang>{_LANGS})\s+)?(?:code|query|snippet)\b"
        r"(?!\s+of\b)|\b(?:code|query)\s+only\b"
    ),
    "code_block": re.compile(
        rf"(?i)(?:{_IMP}(?:put|wrap|format|show|write|give|provide|return|reply|respond|answer|enclose|place|"
        rf"present|output|use)\b[^.;?!\n]{{0,60}}?|[,;:(]\s*)(?:in|inside|within|into|as|using|use)\s+(?:a\s+|one\s+|"
        rf"a\s+single\s+)?(?:(?:fenced|markdown|triple[- ]backtick)\s+)?(?:(?P<lang>{_LANGS})\s+)?code\s*blocks?\b"
        r"|\b(?:wrap|put|enclose|format)\b[^.\n]{0,40}\b(?:in|inside|with|within)\s+(?:triple\s+)?backticks\b"
    ),
    "list": re.compile(
        rf"(?i){_TASK}\b(?:(?:as|in|into|using|with)\s+(?:a\s+)?(?:bulleted|bullet(?:[- ]point)?|numbered)\s+list|"
        r"(?:in|as)\s+(?:\w+\s+)?bullet\s+points|(?P<n>\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)\s+"
        r"bullet\s+points)\b",
    ),
    "max_words": re.compile(
        rf"(?i)(?:(?:{_TASK}\b(?:in|using)|\bkeep (?:it|this|the (?:answer|reply|response)|your (?:answer|reply|"
        r"response))|\b(?:answer|reply|response|summary|explanation)(?: should be| must be| is)?)\s+|[(,;:]\s*)"
        r"(?:only\s+|just\s+)?(?:under|fewer than|less than|at most|no more than|max(?:imum)?(?: of)?|within|up to)"
        rf"\s+(?P<n>\d{{1,4}})\s+words\b|{_TASK}\bin\s+(?P<m>\d{{1,4}})\s+words\s+or\s+(?:less|fewer)\b",
    ),
}
_NEEDS_PROSE = {"json_only", "number_only", "one_word", "list", "max_words"}  # skipped in code-describing sentences


def _sentence_forms(sentence: str) -> list[FormSpec]:
    src = sentence[:MAX_SOURCE_CHARS]
    if sentence.endswith("?") and not _POLITE.match(sentence):
        # a question is not an instruction ("How do I put code in a code block?"), but its preamble can be one
        # ("In one word, what is…?", "Answer yes or no: is…?"); "(yes/no)" tags a question with its form
        if _YES_NO_TAG.search(sentence):
            return [FormSpec("yes_no", src)]
        head = re.split(r"[:,]", sentence, maxsplit=1)[0] if re.search(r"[:,]", sentence) else ""
        sentence = "" if _QUESTION.match(head) else head
    # quoted passages of 3+ words are examples or data, not instructions ("Classify: "reply with only JSON"")
    plain = _QUOTED.sub(lambda m: '""' if m.group().count(" ") >= 2 else m.group(), sentence)
    codey = bool(_CODE_WORDS.search(plain))
    out: list[FormSpec] = []
    if not codey:
        m = _TEMPLATE.search(sentence)
        if m and _ANSWER_TRIGGER.search(sentence):
            words = m["label"].split()
            label = " ".join(words[1:] if len(words) > 1 and words[0].lower() in _LABEL_STOP else words)
            numeric = bool(_NUMERIC_PH.search(m["ph"]) or _NUMERIC_WORD.search(sentence))
            out.append(FormSpec("answer_line", src, label=label, numeric=numeric))
        elif _LAST_LINE.search(plain) and _NUMERIC_WORD.search(plain) and _YOUR.search(plain):
            out.append(FormSpec("answer_line", src, numeric=True))
    for kind, pattern in _FORM_RES.items():
        if kind in _NEEDS_PROSE and codey:
            continue
        if not (m := pattern.search(plain)):
            continue
        groups = {k: v for k, v in m.groupdict().items() if v}
        count = (groups.get("n") or groups.get("m") or "").lower()
        limit = int(count) if count.isdigit() else _NUMBER_WORDS.get(count, 0)
        if kind == "max_words" and limit < 1:
            continue
        out.append(FormSpec(kind, src, language=groups.get("lang", "").lower(), limit=limit))
    return out


def _detect(request: str) -> list[FormSpec]:
    found: dict[str, FormSpec] = {}
    text = _REQUEST_CODE.sub("\n", request)
    if len(text) > 2 * SCAN_CHARS:  # a form is stated at the start or the end: bounds the time on huge pastes
        text = f"{text[:SCAN_CHARS]}\n\n{text[-SCAN_CHARS:]}"
    for sentence in _SENTENCE_END.split(text):
        # a run-on "sentence" is pasted data (CSV, logs): its lines are judged one by one
        for part in sentence.splitlines() if len(sentence) > LONG_SENTENCE_CHARS else [sentence]:
            for spec in _sentence_forms(part.strip()) if part.strip() else []:
                found.setdefault(spec.kind, spec)
    # conflicting forms: an answer line beats whole-reply forms; one whole-reply form at most, by priority
    whole = [k for k in _WHOLE if k in found and "answer_line" not in found][:1]
    dropped = {"list", "code_block"} if whole and whole[0] != "code_only" else set()
    return [found[k] for k in KINDS if k in found and (k not in _WHOLE or k in whole) and k not in dropped]


def detect_forms(request: str) -> list[FormSpec]:
    """The output forms the user's request states, in `KINDS` order; [] for ordinary requests (or on error)."""
    try:
        return _detect(request)
    except Exception:  # fail-safe: form handling must never break the turn
        return []


__all__ = ["KINDS", "FormSpec", "Kind", "detect_forms"]
