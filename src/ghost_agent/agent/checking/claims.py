"""What a drafted answer claims that execution can check: its runnable code, the output it says that code
prints, and its final number (or, for a question whose answer is a date or a weekday, its final day).

Small models often write a program and then *invent* its output ("Output: 42"), or compute by hand next to
code that would have got it right. The answer-first turn runs the code instead of trusting the claim
(`agent/checking/answer_first.py`). Everything here is string work on the draft; nothing is executed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ghost_agent.text import dates
from ghost_agent.text.fences import find_fences, strip_fences

_PY_TAGS = frozenset({"python", "python3", "py", "py3"})
_OUTPUT_TAGS = frozenset({"", "output", "text", "txt", "plaintext", "console", "stdout", "shell-session"})
_OUTPUT_LEAD = re.compile(r"(?:^|\n)[^\n]*\b(?:output|prints?|result|displays?)\b[^\n]*:?\s*$", re.I)
_INLINE_OUTPUT = re.compile(r"(?:^|\n)\s*\**(?:output|result)\**\s*:\**[ \t]*([^\n`]+)", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?\$?\d[\d,]*(?:\.\d+)?(?![\w])")
_ANSWER_LINE = re.compile(r"^\s*\**\s*(?:final\s+)?answer\s*\**\s*:?\s*\**\s*(.+)$", re.I | re.M)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
MAX_PROGRAM_CHARS = 20_000


@dataclass(frozen=True)
class CodeClaim:
    """A draft's runnable program (its Python blocks joined in order) and the output it claims, if any."""

    program: str
    claimed_output: str | None
    prints: bool  # the program prints or ends in an expression (running it shows something)


def python_blocks(text: str) -> list[str]:
    """Bodies of the ```python fences in `text` (untagged fences too when their body parses as Python)."""
    out = []
    for fence in find_fences(text):
        tag, body = fence.language.lower(), fence.body
        if tag in _PY_TAGS or (tag == "" and parses(body) and _looks_like_code(body)):
            out.append(body)
    return out


def code_claim(draft: str) -> CodeClaim | None:
    """The draft's Python as one program and its claimed output; None when it has no Python that parses."""
    blocks = [b for b in python_blocks(draft) if parses(b)]
    if not blocks:
        return None
    program = "\n\n".join(b.strip("\n") for b in blocks)
    if len(program) > MAX_PROGRAM_CHARS or not parses(program):
        return None
    return CodeClaim(program=program, claimed_output=_claimed_output(draft), prints=_shows_something(program))


def bare_code_claim(text: str) -> CodeClaim | None:
    """A reply that is a program without fences (a model asked for "only code" often drops them): the whole
    text, when it parses as Python and prints something."""
    body = text.strip()
    if not body or "```" in body or len(body) > MAX_PROGRAM_CHARS or not parses(body) or not _looks_like_code(body):
        return None
    return CodeClaim(program=body, claimed_output=None, prints=_shows_something(body)) if _shows_something(body) \
        else None


def outputs_agree(claimed: str, real: str) -> bool:
    """Whether a claimed output matches the real one: the same text modulo whitespace, or the same numbers."""
    a, b = " ".join(claimed.split()), " ".join(real.split())
    if a == b:
        return True
    na, nb = numbers_in(claimed), numbers_in(real)
    return bool(na) and na == nb


def numbers_in(text: str) -> list[float]:
    """The numbers in `text`, in order (commas and a leading `$` dropped)."""
    out = []
    for raw in _NUMBER.findall(text):
        try:
            out.append(float(raw.replace(",", "").replace("$", "")))
        except ValueError:
            continue
    return out


def final_number(text: str) -> float | None:
    """The answer's final number: an `Answer:` line, a \\boxed{}, else the last number in the text."""
    for pattern in (_ANSWER_LINE, _BOXED):
        found = pattern.findall(text)
        if found:
            nums = numbers_in(found[-1])
            if nums:
                return nums[0] if pattern is _ANSWER_LINE else nums[-1]
    nums = numbers_in(_strip_code(text))
    return nums[-1] if nums else None


def printed_value(output: str) -> float | None:
    """The number a compute-the-answer program printed: the last number of its last non-empty line."""
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    nums = numbers_in(lines[-1])
    return nums[-1] if nums else None


def printed_day(output: str, asked: str | None) -> dates.CalendarAnswer | None:
    """The date or weekday a compute-the-answer program printed on its last non-empty line (`dates.printed_answer`:
    `asked` is what the request asks for, `dates.asks_for`); None when it printed none."""
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return dates.printed_answer(lines[-1], asked) if lines else None


_DATE_WORK = re.compile(r"timedelta|relativedelta|\.(?:iso)?weekday\(|strftime|\bcalendar\.|\.days\b|"
                        r"(?:from|to)ordinal|\bdatetime\.date\(|\bdate\(|\bdatetime\(")


def computes_day(program: str) -> bool:
    """Whether a program that printed a date worked it out with dates (datetime, calendar) rather than printing
    one it recalled (`print("2027-12-21")` vouches for nothing)."""
    return bool(_DATE_WORK.search(program))


def final_day(text: str, like: dates.CalendarAnswer, request: str) -> dates.CalendarAnswer | None:
    """The answer's final date or weekday (of `like`'s kind): from an `Answer:` line when there is one, else from
    the prose outside code, not counting the dates the request itself gave."""
    found = _ANSWER_LINE.findall(text)
    if found:
        stated = dates.stated_answer(found[-1], like, request)
        if stated is not None:
            return stated
    return dates.stated_answer(_strip_code(text), like, request)


def same_number(a: float | None, b: float | None) -> bool:
    """Equal to within rounding (1e-6 relative, or one cent for money-sized values)."""
    if a is None or b is None:
        return False
    return abs(a - b) <= max(1e-6 * max(abs(a), abs(b)), 0.005)


def format_number(value: float) -> str:
    """`value` as a reply would write it: an integer without `.0`, else at most 6 decimals, no trailing 0s."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


# ------------------------------------------------------------------------------------------ helpers


def parses(source: str) -> bool:
    """Whether `source` parses as Python (parsing only: nothing runs)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _looks_like_code(body: str) -> bool:
    return bool(re.search(r"^\s*(?:def |import |from |print\(|for |while |if |class |\w+\s*=)", body, re.M))


def _shows_something(program: str) -> bool:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return False
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return True
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
               for n in ast.walk(tree))


def _claimed_output(draft: str) -> str | None:
    """The output the draft says its code prints: a non-Python fence after the last Python block introduced
    as output (or right after it), else an inline `Output: ...` line after the code."""
    fences = find_fences(draft)
    last_py = max((i for i, f in enumerate(fences) if f.language.lower() in _PY_TAGS), default=None)
    if last_py is not None:
        end = fences[last_py].end
        for fence in fences[last_py + 1:]:
            tag = fence.language.lower()
            between = draft[end:fence.start]
            if tag in _OUTPUT_TAGS and (not between.strip() or _OUTPUT_LEAD.search(between)):
                return fence.body.strip("\n")
            break
        inline = _INLINE_OUTPUT.search(draft[end:])
        if inline:
            return inline.group(1).strip()
    return None


def _strip_code(text: str) -> str:
    return strip_fences(text, " ")


__all__ = [
    "CodeClaim",
    "bare_code_claim",
    "code_claim",
    "final_number",
    "format_number",
    "numbers_in",
    "parses",
    "outputs_agree",
    "printed_value",
    "python_blocks",
    "same_number",
]
