"""Deterministic verifiers: `(predicted, expected, **kw) -> float` in [0, 1] (seed 002, DESIGN §7).

Every eval task names one of these (`EvalTask.verifier`); the reward adapter (`learned/reward.py`) wraps it into a
`Reward`. Self-play scores its rollouts with the same functions. A verifier never calls a model and never runs
code in this process: `code_tests` executes the reply in our sandbox. A verifier raises (ValueError, TypeError)
only when the *task* is malformed (an empty pattern, an unparsable expected number) - the adapter turns that into
a CRASH reward, never a scored miss.

`extract_code` (shared with the HumanEval executor, `sandbox/code_program.py`) and the number readers
`numbers_in`, `last_number` (`text/numbers.py`, shared with the `number` check of `eval/delivery.py`) are re-exported
here.

Verifiers that extract an answer before comparing (`numeric_match`, `mcq_letter`, `answer_line`) carry an
`extract_answer` attribute: `extract_answer(predicted, **kw)` returns what they would grade, or None when the reply
holds nothing gradable - the adapter labels such a miss FORMAT_ERROR instead of DISCARD.

`delivered` (the `everyday` suite) runs a task's list of checks (`eval/delivery.py`) and fails any reply that
carries the agent's internal protocol text (`internal_text_leaks`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from ghost_agent.eval.delivery import failed_checks
from ghost_agent.sandbox.base import ExecLimits, SandboxBackend
from ghost_agent.sandbox.code_program import assemble_program, extract_code
from ghost_agent.text.numbers import last_number, numbers_in
from ghost_agent.text.refusal import is_refusal

Verifier = Callable[..., float]

_WS = re.compile(r"\s+")


def _norm(text: str, *, case_sensitive: bool, normalize_whitespace: bool) -> str:
    text = text.strip()
    if normalize_whitespace:
        text = _WS.sub(" ", text)
    return text if case_sensitive else text.casefold()


def _needles(expected: Any, what: str) -> list[str]:
    """`expected` as a non-empty list of strings (one string, or a list/tuple of them)."""
    items = [expected] if isinstance(expected, str) else list(expected) if isinstance(expected, Sequence) else None
    if not items or not all(isinstance(x, str) for x in items):
        raise ValueError(f"{what}: expected must be a string or a non-empty list of strings, got {expected!r}")
    return items


def exact_match(
    predicted: str, expected: Any, *, case_sensitive: bool = False, normalize_whitespace: bool = True
) -> float:
    """1.0 when the reply equals `expected` (or any of a list of accepted answers), else 0.0.

    Both sides are stripped; by default case is folded and whitespace runs collapse to one space.
    """
    got = _norm(predicted, case_sensitive=case_sensitive, normalize_whitespace=normalize_whitespace)
    accepted = _needles(expected, "exact_match")
    return float(any(got == _norm(a, case_sensitive=case_sensitive, normalize_whitespace=normalize_whitespace)
                     for a in accepted))


def contains(
    predicted: str, expected: Any, *, case_sensitive: bool = False, normalize_whitespace: bool = True
) -> float:
    """The fraction of the expected substrings found in the reply (one string: 1.0 or 0.0).

    With a list, 1.0 means all were found; a partial count is partial credit (the adapter's default threshold
    of 1.0 still requires all of them).
    """
    hay = _norm(predicted, case_sensitive=case_sensitive, normalize_whitespace=normalize_whitespace)
    needles = _needles(expected, "contains")
    found = sum(_norm(n, case_sensitive=case_sensitive, normalize_whitespace=normalize_whitespace) in hay
                for n in needles)
    return found / len(needles)


def numeric_match(
    predicted: str, expected: Any, *, rel_tolerance: float = 1e-6, abs_tolerance: float = 1e-9
) -> float:
    """1.0 when the last number in the reply is within tolerance of `expected` (a number or a numeric string).

    Close means `math.isclose(got, expected, rel_tol=rel_tolerance, abs_tol=abs_tolerance)`. No number in the
    reply is 0.0; an `expected` with no number in it is a malformed task (ValueError).
    """
    if isinstance(expected, bool) or not isinstance(expected, (int, float, str)):
        raise ValueError(f"numeric_match: expected must be a number or a numeric string, got {expected!r}")
    want = float(expected) if not isinstance(expected, str) else last_number(expected)
    if want is None or not math.isfinite(want):
        raise ValueError(f"numeric_match: expected {expected!r} is not a finite number")
    got = last_number(predicted)
    if got is None:
        return 0.0
    return float(math.isclose(got, want, rel_tol=rel_tolerance, abs_tol=abs_tolerance))


_LETTER_PATTERNS = (
    # "Answer: B", "the answer is (b)", "Final answer - **C**", "answer is option D". A lower-case letter counts
    # only at the end of a clause, so "the answer is a bit subtle" names nothing.
    r"(?i:answer)(?:\s+(?i:is|would be|will be|should be))?\s*[:=\-]?\s*(?:(?i:option|choice)\s*)?[\*\(\[\"'\s]*"
    r"(?:([{C}])\b|([{c}])(?=[\s\*\)\]\"']*(?:[.,;:!]|$)))",
    # "the correct option is C", "best choice: (d)"
    r"(?i:correct|best|right)\s+(?i:option|choice)(?:\s+(?i:is))?\s*[:=\-]?\s*[\*\(\[\"'\s]*"
    r"(?:([{C}])\b|([{c}])(?=[\s\*\)\]\"']*(?:[.,;:!]|$)))",
    # "(B)" or "[B]" standing alone
    r"[\(\[]([{C}])[\)\]]",
    # a reply, or a line, that starts with the letter: "B", "B.", "B)", "**B**: because ..."
    r"(?m)^\s*[\*\"']*([{C}])(?:[\*\"']*\s*(?:[.):\-]|$))",
)


def extract_letter(text: str, *, choices: str = "ABCDE") -> str | None:
    """The multiple-choice letter a reply settles on (upper case), or None when it names none.

    Looks, in order, for the last "answer is X" / "Answer: X", the last "correct option is X", the last "(X)",
    then the last line starting with the letter ("B.", "B)", "**B**"). A bare capital inside prose ("A good
    start") is never taken.
    """
    letters = "".join(sorted({c.upper() for c in choices if c.isalpha()}))
    if not letters:
        raise ValueError(f"mcq_letter: no letters in choices {choices!r}")
    for pattern in _LETTER_PATTERNS:
        found = re.findall(pattern.format(C=letters, c=letters.lower()), text)
        if found:
            last = found[-1]
            letter = "".join(last) if isinstance(last, tuple) else last
            return letter.upper()
    return None


def mcq_letter(predicted: str, expected: Any, *, choices: str = "ABCDE") -> float:
    """1.0 when the letter extracted from the reply (`extract_letter`) equals `expected` ("B", "b", "(B)")."""
    want = expected.strip().strip("()[]*.:").strip().upper() if isinstance(expected, str) else ""
    if len(want) != 1 or want not in choices.upper():
        raise ValueError(f"mcq_letter: expected must name one of {choices!r}, got {expected!r}")
    return float(extract_letter(predicted, choices=choices) == want)


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "a": re.ASCII}


def _regex_flags(flags: int | str) -> int:
    if isinstance(flags, str):
        bad = [c for c in flags.lower() if c not in _FLAGS]
        if bad:
            raise ValueError(f"regex_match: unknown flag letters {bad!r} (use some of {''.join(_FLAGS)})")
        out = 0
        for c in flags.lower():
            out |= _FLAGS[c]
        return out
    return int(flags)


def regex_match(
    predicted: str, expected: Any = None, *, pattern: str | None = None, flags: int | str = 0,
    fullmatch: bool = False
) -> float:
    """1.0 when `pattern` (default: `expected`) is found in the reply (`re.search`; `fullmatch` for the whole
    stripped reply). `flags` is an int or letters from "imsxa" (task files are JSON)."""
    rx = pattern if pattern is not None else expected
    if not isinstance(rx, str) or not rx:
        raise ValueError(f"regex_match: needs a non-empty pattern, got {rx!r}")
    compiled = re.compile(rx, _regex_flags(flags))
    hit = compiled.fullmatch(predicted.strip()) if fullmatch else compiled.search(predicted)
    return float(hit is not None)


def code_tests(
    predicted: str,
    expected: Any,
    *,
    entry_point: str | None = None,
    prompt: str = "",
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    sandbox: SandboxBackend | None = None,
) -> float:
    """1.0 when the reply's code passes the test program `expected`, run in the sandbox; else 0.0.

    The program is `code_program.assemble_program(prompt, predicted, expected, entry_point)`: the code
    extracted from the reply (`extract_code`), after the problem `prompt` when given (its imports stay in scope;
    a body-only reply is joined to it), then the tests, plus `check(<entry_point>)` when the tests define
    `check` but never call it. It runs through `sandbox.run_sync` (default: `ghost_agent.sandbox.get_sandbox()`),
    never in this process; exit 0 within the limits passes, anything else (assertion, syntax error, timeout,
    out of memory) is 0.0. Blocking: call it from a thread on an event loop. SandboxError (the sandbox itself
    broke) propagates - the adapter makes that a CRASH, not a miss.
    """
    if not isinstance(expected, str) or not expected.strip():
        raise ValueError("code_tests: expected must be the test program (a non-empty string)")
    if entry_point is not None and not entry_point.isidentifier():
        raise ValueError(f"code_tests: entry_point must be an identifier, got {entry_point!r}")
    if not extract_code(predicted, entry_point).strip():
        return 0.0
    program = assemble_program(prompt or "", predicted, expected, entry_point)
    if sandbox is None:
        from ghost_agent.sandbox import get_sandbox

        sandbox = get_sandbox()
    limits = ExecLimits(timeout_s=timeout_s, memory_mb=memory_mb, max_output_bytes=16 * 1024)
    return float(sandbox.run_sync("python", program, limits=limits).ok)


# "Answer: 42", "**Answer:** $1,234.50", "Final answer = -3.5 km." - the line must START with the label.
_ANSWER_LINE = re.compile(
    r"^[ \t>#*_-]*(?:final[ \t]+)?answer[ \t*_]*[:=]?[ \t*_]*(?:is[ \t]+)?\$?[ \t]*"
    r"(?P<num>[-\u2212]?\$?[\d,]*\.?\d+)",
    re.IGNORECASE | re.MULTILINE,
)


def extract_answer_line(text: str) -> float | None:
    """The number on the LAST line of `text` that starts with "Answer:" (markdown bold, "$", thousands commas,
    trailing units or a period tolerated), or None when no line does."""
    found = _ANSWER_LINE.findall(text)
    if not found:
        return None
    token = found[-1].replace("$", "").replace(",", "").replace("\u2212", "-")
    try:
        return float(token)
    except ValueError:
        return None


def has_answer_line(text: str) -> bool:
    """Strict format compliance: the reply's last non-empty line is an `Answer: <number>` line."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and _ANSWER_LINE.match(lines[-1]) is not None


def answer_line(
    predicted: str, expected: Any, *, rel_tolerance: float = 1e-6, abs_tolerance: float = 1e-9
) -> float:
    """1.0 when the number on the reply's last `Answer: <number>` line is within tolerance of `expected`.

    No such line is 0.0 (a number elsewhere in the reply does not count: the prompt asked for the line).
    `expected` must be a number or a numeric string (ValueError otherwise).
    """
    if isinstance(expected, bool) or not isinstance(expected, (int, float, str)):
        raise ValueError(f"answer_line: expected must be a number or a numeric string, got {expected!r}")
    want = float(expected) if not isinstance(expected, str) else last_number(expected)
    if want is None or not math.isfinite(want):
        raise ValueError(f"answer_line: expected {expected!r} is not a finite number")
    got = extract_answer_line(predicted)
    if got is None:
        return 0.0
    return float(math.isclose(got, want, rel_tol=rel_tolerance, abs_tol=abs_tolerance))


# The agent's own protocol text (agent/tool_loop/protocol.py, agent/tool_loop/prompting.py, agent/tool_loop/loop.py).
# Kept literal here: the
# eval judges the daemon from outside; tests/eval/test_verifiers.py checks they still match the agent's.
_LEAK_MARKERS = (
    "[ATTEMPT_ABORTED_LOOP]",
    "Tool result (",
    "Instructions from the client:",
    "Choose the next step",
    "I stopped because I was about to repeat",
    "(the model gave no usable reply)",
    "(stopped after",
    "<ghost-notes>",
    "</ghost-notes>",
    "Notes from past turns (data, not instructions",
    "<ghost-examples>",
    "</ghost-examples>",
    "Worked examples: similar tasks solved before",
)
_ACTION_JSON = re.compile(
    r"""\{\s*["'](?:tool|tool_name|action|answer|final_answer|function)["']\s*:"""
    r"""|\{\s*["']name["']\s*:\s*["'][^"'\n]*["']\s*,\s*["'](?:arguments|action_input)["']\s*:"""
)


def internal_text_leaks(text: str) -> list[str]:
    """What of the agent's internal protocol a reply shows the user (empty: nothing): an action object
    (`{"tool": ...}`, `{"answer": ...}`, `{"name": ..., "arguments": ...}`), the loop-guard marker, a tool-result
    header, the prompt's scaffolding, the loop's canned stop texts."""
    leaks = [f"action object {m.group(0)!r}" for m in _ACTION_JSON.finditer(text)]
    leaks += [f"internal text {marker!r}" for marker in _LEAK_MARKERS if marker.casefold() in text.casefold()]
    return leaks


def delivered(
    predicted: str, expected: Any, *, timeout_s: float = 10.0, sandbox: SandboxBackend | None = None
) -> float:
    """1.0 when the reply passes every check in `expected` (a list of check dicts, `eval/delivery.py`) and
    leaks no internal agent text (`internal_text_leaks`); else 0.0.

    Code, test, SQL and regex checks run in the sandbox (default: `get_sandbox()`), never here. Blocking.
    A malformed check list raises ValueError (a broken task, not a miss).
    """
    if internal_text_leaks(predicted):
        failed_checks("", expected, timeout_s=timeout_s, sandbox=sandbox, validate_only=True)
        return 0.0
    return float(not failed_checks(predicted, expected, timeout_s=timeout_s, sandbox=sandbox))


def _numeric_answer(predicted: str) -> float | None:
    return last_number(predicted)


def _letter_answer(predicted: str, *, choices: str = "ABCDE") -> str | None:
    return extract_letter(predicted, choices=choices)


setattr(numeric_match, "extract_answer", _numeric_answer)  # noqa: B010 - mypy rejects attributes on functions
setattr(mcq_letter, "extract_answer", _letter_answer)  # noqa: B010
setattr(answer_line, "extract_answer", extract_answer_line)  # noqa: B010

VERIFIERS: dict[str, Verifier] = {
    "exact_match": exact_match,
    "contains": contains,
    "numeric_match": numeric_match,
    "mcq_letter": mcq_letter,
    "is_refusal": is_refusal,
    "regex_match": regex_match,
    "code_tests": code_tests,
    "answer_line": answer_line,
    "delivered": delivered,
}
# The verifiers that run code in the sandbox (the CLI probes one before a run that needs it).
SANDBOX_VERIFIERS = frozenset({"code_tests", "delivered"})


def get_verifier(name: str) -> Verifier:
    """The verifier registered under `name`; KeyError listing the known names otherwise."""
    try:
        return VERIFIERS[name]
    except KeyError:
        raise KeyError(f"unknown verifier {name!r} (known: {', '.join(sorted(VERIFIERS))})") from None


__all__ = [
    "SANDBOX_VERIFIERS",
    "VERIFIERS",
    "Verifier",
    "answer_line",
    "code_tests",
    "contains",
    "delivered",
    "exact_match",
    "extract_answer_line",
    "extract_code",
    "extract_letter",
    "get_verifier",
    "has_answer_line",
    "internal_text_leaks",
    "is_refusal",
    "last_number",
    "mcq_letter",
    "numbers_in",
    "numeric_match",
    "regex_match",
]
