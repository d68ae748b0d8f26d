"""Output forms a user asks for ("end with `Answer: <n>`", "reply with only JSON"): detect, check, fix up.

The small drafting model often ignores the requested form. This module finds such forms in the user's own
text (precision over recall: a false detection would alter a good reply), checks a reply against them and
repairs it by appending or reformatting, never by rewriting: deterministically when it can, else from ONE
short model answer (`fixup_prompt` then `apply_fixup`). Pure and fast. The public functions never raise; on
an internal error they return the neutral result ([], ok, None). Request and reply are data: nothing in them
is followed as an instruction; a fix is only returned when it passes `check`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from ghost_agent.mcts.prompts import load_prompt

Kind = Literal[
    "answer_line", "json_only", "number_only", "yes_no", "one_word", "code_only", "code_block", "list", "max_words"
]
KINDS: tuple[Kind, ...] = get_args(Kind)  # also the order `detect_forms` returns forms in
_WHOLE: tuple[Kind, ...] = ("json_only", "number_only", "yes_no", "one_word", "code_only")  # exclusive forms
Message = dict[str, str]
MAX_SOURCE_CHARS = 200
TAIL_CHARS = 4000  # a final answer sits at the end: the number/word prompts see only the reply's tail
HEAD_CHARS = 12000
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


@dataclass(frozen=True)
class FormCheck:
    """Whether a reply has the form; `problem` says what is wrong in a few words ('' when ok)."""

    ok: bool
    problem: str = ""


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


# --- reply analysis -------------------------------------------------------------------------------------------
_NUM = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d)")
_LEAD_NUM = re.compile(r"[\s*_`$€£\\(]*([-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?!\d)")
_PLAIN = re.compile(r"-?\d+(?:\.\d+)?")
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_ANSWER_IS = re.compile(r"\b(?:final\s+)?answer\s*(?:is|=|:)\s*:?\s*([^\n]{1,80})", re.I)
_BOLD = re.compile(r"\*\*([^*\n]{1,40})\*\*")
_SENT_CUT = re.compile(r"(?<=\S)[.!?](?:\s|$)")
_STRIP = "*_`'\"“”.,!?;: \t"
_YES_NO = re.compile(r"[\W_]*(yes|no)\b", re.I)
_FENCED_BODY = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_JSON_START = re.compile(r"[{\[]")
_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n.*?^[ \t]*```", re.M | re.S)
_ONLY_FENCE = re.compile(r"```[^\n`]*\n(?:(?!```).)*```", re.S)
_ITEM = re.compile(r"^ ?(?:[-*•+]|\d{1,3}[.)])[ \t]+\S", re.M)
_PROSE = re.compile(r"^[A-Z][a-z']+(?:[ \t]+\S+){3,}[.:!?]$")
_WORD = re.compile(r"\w+(?:['’.,-]\w+)*")
_CODE_LINE = re.compile(
    r"^(?:[ \t]+\S|(?:def|class|import|from|return|for|while|if|elif|else|try|except|with|print|SELECT|INSERT|"
    r"UPDATE|DELETE|CREATE|WITH|FROM|WHERE|#include|function|const|let|var|public|package|fn|echo)\b|.*[;{}]\s*$"
    r"|[\w.\[\]]+\s*[-+*/]?=\s*\S)"
)


def _norm(token: str) -> str:
    """'1,234.50' -> '1234.5', '−3' -> '-3', '7.0' -> '7'."""
    text = token.replace("−", "-").replace(",", "")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _plain_number(text: str) -> str | None:
    """The number `text` consists of (markdown, currency and a final period allowed), normalised."""
    core = text.strip().strip("*_`$€£ ").rstrip(".").strip("*_` ")
    return _norm(core) if core and _NUM.fullmatch(core) else None


def _numeric(spec: FormSpec) -> bool:
    return spec.kind == "number_only" or (spec.kind == "answer_line" and (spec.numeric or not spec.label))


def _loose_label(label: str) -> re.Pattern[str]:
    return re.compile(r"^[\s>*_#-]*" + re.escape(label) + r"[*_\s]*[:=][*_\s]*(.*)$", re.I)


def _value(raw: str, numeric: bool) -> str | None:
    """A stated final answer: its leading number (after any '='), or for text answers its first sentence."""
    text = " ".join(raw.split())
    text = text[: m.start() + 1] if (m := _SENT_CUT.search(text)) else text
    if numeric:
        m = _LEAD_NUM.match(text.rsplit("=", 1)[-1])
        return _norm(m.group(1)) if m else None
    text = text.strip(_STRIP)
    return _plain_number(text) or (text if 0 < len(text) <= 80 else None)


def _given(value: str, numeric: bool) -> str | None:
    """The caller's value (e.g. code output) as an answer: its one number when numeric, else its text."""
    text = " ".join(value.split())
    if numeric:
        numbers = {_norm(n) for n in _NUM.findall(text)}
        return numbers.pop() if len(numbers) == 1 else None
    return _plain_number(text) or (text if 0 < len(text) <= MAX_SOURCE_CHARS else None)


def _final_answer(reply: str, spec: FormSpec) -> str | None:
    """The reply's unambiguous final answer, or None: stated ones (label line, boxed, "answer is", bold number)
    must agree; only without any does the last line's number count (its only one, or the first after an '=')."""
    numeric, lines = _numeric(spec), reply.strip().splitlines()
    stated = [m.group(1) for line in lines if spec.label and (m := _loose_label(spec.label).match(line))][-1:]
    stated += _BOXED.findall(reply)[-1:] + [m.group(1) for m in _ANSWER_IS.finditer(reply)][-1:]
    if numeric:
        stated += [b for line in lines[-3:] for b in _BOLD.findall(line) if _plain_number(b)][-1:]
    values = {v for raw in stated if (v := _value(raw, numeric))}
    if len(values) == 1:
        return values.pop()
    if values or not numeric or not lines:
        return None
    last = lines[-1]
    numbers = [_norm(n) for n in _NUM.findall(last.rsplit("=", 1)[-1])]
    return numbers[0] if numbers and ("=" in last or len(set(numbers)) == 1) else None


def _parses(text: str) -> bool:
    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):  # deep nesting raises RecursionError, not ValueError
        return False


def _extract_json(text: str) -> str | None:
    """The single JSON object/array in `text` (fenced blocks first, else in prose), as written; None when there
    is none or several differ (a prose "[1]" citation next to an object makes it ambiguous)."""
    found = [b.strip() for b in _FENCED_BODY.findall(text)[:20] if _parses(b)]
    decoder, start, tries, fenced = json.JSONDecoder(), 0, 0, bool(found)
    while not fenced and tries < 200 and (m := _JSON_START.search(text, start)):  # bounded: adversarial brackets
        tries, start = tries + 1, m.start() + 1
        try:
            _, end = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        found.append(text[m.start() : end])
        start = end
    return found[0] if len(set(found)) == 1 else None


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _check(reply: str, spec: FormSpec) -> FormCheck:
    text, kind = reply.strip(), spec.kind
    lines = text.splitlines()
    last = lines[-1].strip() if lines else ""
    if kind == "answer_line":
        head, _, value = last.partition(":") if spec.label else (spec.label, "", last)
        if spec.label and (head.strip() != spec.label or not value.strip()):
            return FormCheck(False, f"the last line is not `{spec.label}: …`")
        if _numeric(spec) and not _PLAIN.fullmatch(value.strip().rstrip(".")):
            return FormCheck(False, "the last line does not end in a plain number")
    elif kind == "json_only" and not _parses(text):
        return FormCheck(False, "the reply is not only a JSON object or array")
    elif kind == "number_only" and not _PLAIN.fullmatch(text.rstrip(".")):
        return FormCheck(False, "the reply is not only a number")
    elif kind == "one_word" and (not text.strip(_STRIP) or any(c.isspace() for c in text.strip(_STRIP))):
        return FormCheck(False, "the reply is not a single word")
    elif kind == "yes_no" and not _YES_NO.match(text):
        return FormCheck(False, "the reply does not start with yes or no")
    elif kind == "list" and (len(_ITEM.findall(text)) < 2 or spec.limit and len(_ITEM.findall(text)) != spec.limit):
        return FormCheck(False, f"the reply is not a list of {spec.limit or 'several'} items")
    elif kind == "max_words" and _words(text) > spec.limit:
        return FormCheck(False, f"the reply has {_words(text)} words, over the limit of {spec.limit}")
    elif kind == "code_block" and not _FENCE.search(text):
        return FormCheck(False, "the code is not in a fenced code block")
    elif kind == "code_only" and not (
        _ONLY_FENCE.fullmatch(text) or (text and "```" not in text and not any(_PROSE.match(x) for x in lines))
    ):
        return FormCheck(False, "the reply has prose around the code")
    return FormCheck(True)


def check(reply: str, spec: FormSpec) -> FormCheck:
    """Whether `reply` has the form `spec`; ok (never a false alarm) on an internal error."""
    try:
        return _check(reply, spec)
    except Exception:  # fail-safe: a checker error must not trigger a repair
        return FormCheck(True)


# --- repair ---------------------------------------------------------------------------------------------------
def _wrap_code(text: str, language: str) -> str | None:
    """`text` with its one run of code-like lines put in a fence; None when there are none or several runs."""
    lines, start, end = text.split("\n"), -1, -1
    runs: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        if _CODE_LINE.match(line):
            start, end = (i if start < 0 else start), i
        elif line.strip() and start >= 0:
            runs.append((start, end))
            start = -1
    runs += [(start, end)] if start >= 0 else []
    if len(runs) != 1:
        return None
    a, b = runs[0]
    return "\n".join([*lines[:a], f"```{language}", *lines[a : b + 1], "```", *lines[b + 1 :]])


def _fix(reply: str, spec: FormSpec, value: str | None) -> str | None:
    text, kind = reply.strip(), spec.kind
    if value is None and _check(reply, spec).ok:
        return reply
    if kind in ("answer_line", "number_only"):
        answer = _given(value, _numeric(spec)) if value is not None else _final_answer(text, spec)
        if answer is None or kind == "number_only":
            return answer
        parts = text.splitlines(keepends=True)
        last = parts[-1] if parts else ""
        if last and (_loose_label(spec.label).match(last) if spec.label else _plain_number(last)):
            text = "".join(parts[:-1]).rstrip()  # a malformed answer line is replaced, not repeated
        line = f"{spec.label}: {answer}" if spec.label else answer
        return f"{text}\n\n{line}" if text else line
    if kind in ("one_word", "yes_no"):
        stated = [value] if value is not None else [m.group(1) for m in _ANSWER_IS.finditer(text)][-1:]
        stated += _BOLD.findall(text) if value is None else []
        if kind == "one_word":
            words = {w for raw in stated if (w := " ".join(raw.split()).strip(_STRIP)) and " " not in w}
            return words.pop() if len(words) == 1 else None
        verdicts = {m.group(1).lower() for raw in stated if (m := _YES_NO.match(raw))}
        return f"{verdicts.pop().capitalize()}.\n\n{text}".strip() if len(verdicts) == 1 else None
    if kind == "json_only":
        return _extract_json(text)
    if kind == "code_block":
        return _wrap_code(text, spec.language)
    if kind == "code_only":
        blocks = [m.group(0) for m in _ONLY_FENCE.finditer(text)]
        return blocks[0] if len(blocks) == 1 else None
    if kind == "list" and not _ITEM.findall(text):
        lines = [x.strip() for x in text.splitlines() if x.strip()]
        intro = lines[:1] if len(lines) > 2 and lines[0].endswith(":") else []
        items = lines[len(intro) :]
        if len(items) >= 2 and (not spec.limit or len(items) == spec.limit) and max(map(len, items)) <= 300:
            return "\n".join(intro + [f"- {x}" for x in items])
    if kind == "max_words":
        cut = 0
        for m in _SENT_CUT.finditer(text):
            if _words(text[: m.start() + 1]) > spec.limit:
                break
            cut = m.start() + 1
        return text[:cut] if cut else None
    return None


def deterministic_fix(reply: str, spec: FormSpec, *, value: str | None = None) -> str | None:
    """`reply` brought into form `spec` without a model, keeping its content, or None when undecidable.

    answer_line appends (or replaces a trailing malformed) `Label: X` line, X being `value` when given (e.g. the
    output of code the agent ran) else the reply's unambiguous final answer, normalised ("$1,234.50" -> 1234.5).
    json_only/number_only/one_word/code_only return the lone piece; yes_no prepends the stated verdict;
    code_block fences bare code; list bullets the lines; max_words keeps the leading sentences that fit.
    A returned reply always passes `check`; an ok reply without `value` comes back unchanged.
    """
    try:
        fixed = _fix(reply, spec, value)
        return fixed if fixed is not None and _check(fixed, spec).ok else None
    except Exception:  # fail-safe: the caller falls back to the model fix-up or keeps the reply
        return None


def _question(spec: FormSpec) -> str | None:
    if spec.kind in ("answer_line", "number_only"):
        return "number" if _numeric(spec) else "text"
    return {"one_word": "one_word", "yes_no": "yes_no", "json_only": "json", "code_only": "code"}.get(spec.kind)


def fixup_prompt(reply: str, spec: FormSpec) -> list[Message]:
    """Messages for ONE short model call asking only for the missing piece; [] when no such call helps
    (list, max_words, code_block: those need a rewrite, which this module never asks for)."""
    try:
        if (question := _question(spec)) is None:
            return []
        text = reply.strip().replace("</answer>", "</ answer>")
        text = text[:HEAD_CHARS] if question in ("json", "code") else text[-TAIL_CHARS:]
        sections = load_prompt("agent_form")
        return [
            {"role": "system", "content": sections["system"].substitute()},
            {"role": "user", "content": sections["user"].substitute(reply=text, question=sections[question].template)},
        ]
    except Exception:  # fail-safe: no call rather than a broken one
        return []


def apply_fixup(reply: str, spec: FormSpec, model_output: str) -> str | None:
    """The compliant reply built from the fix-up call's short output (appended/reformatted, content kept),
    or None when the output is unusable. Copied code must occur in the reply, so it cannot be rewritten."""
    try:
        out = model_output.strip()
        if not out or _question(spec) is None:
            return None
        if spec.kind == "json_only":
            fixed = _extract_json(out)
        elif spec.kind == "code_only":
            blocks = re.findall(r"```[^\n`]*\n(.*?)```", out, re.S)
            code = (blocks[0] if len(blocks) == 1 else "" if "```" in out else out).strip("\n")
            squash = "".join(code.split())
            fixed = f"```{spec.language}\n{code}\n```" if squash and squash in "".join(reply.split()) else None
        else:
            first = out.splitlines()[0].strip() if len(out) <= MAX_SOURCE_CHARS else ""
            if spec.label and first.lower().startswith(spec.label.lower() + ":"):
                first = first[len(spec.label) + 1 :]
            fixed = _fix(reply, spec, first) if first.strip(_STRIP) else None
        return fixed if fixed is not None and _check(fixed, spec).ok else None
    except Exception:  # fail-safe: unusable output
        return None


__all__ = [
    "KINDS",
    "FormCheck",
    "FormSpec",
    "apply_fixup",
    "check",
    "deterministic_fix",
    "detect_forms",
    "fixup_prompt",
]
