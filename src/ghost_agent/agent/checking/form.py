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
from dataclasses import dataclass

from ghost_agent.agent.checking.form_detect import KINDS, MAX_SOURCE_CHARS, FormSpec, detect_forms
from ghost_agent.text.fences import find_fences, sole_fence
from ghost_agent.text.lenient_json import scan_json
from ghost_agent.text.prompts import load_prompt

Message = dict[str, str]
TAIL_CHARS = 4000  # a final answer sits at the end: the number/word prompts see only the reply's tail
HEAD_CHARS = 12000


@dataclass(frozen=True)
class FormCheck:
    """Whether a reply has the form; `problem` says what is wrong in a few words ('' when ok)."""

    ok: bool
    problem: str = ""


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
# A closed code block, for the code_block check: text.fences has no equivalent rule (its Markdown style closes only
# at a line holding nothing but the backticks and takes backticks in the info string; this one closes at any line
# that starts with backticks, "```\r" of a CRLF reply included, and takes no backtick in the info string).
_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n.*?^[ \t]*```", re.M | re.S)
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
    found = [b.strip() for b in [f.body for f in find_fences(text, "inline")][:20] if _parses(b)]
    if not found:  # bounded: adversarial brackets
        found = [text[start:end] for start, end, _ in scan_json(text, max_tries=200)]
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
        sole_fence(text, "inline") or (text and "```" not in text and not any(_PROSE.match(x) for x in lines))
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
        blocks = [text[f.start : f.end] for f in find_fences(text, "inline")]
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
            blocks = [f.body for f in find_fences(out, "inline")]
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
