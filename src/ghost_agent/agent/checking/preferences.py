"""Apply what this user said they prefer to a finished reply: one rewrite call, kept only when it is safe.

A preference lesson (`memory/preference.py`: the user's own words from a correction, "I write dates as
DD/MM/YYYY") is shown in the notes block like any lesson, and a small model mostly ignores a note it was
handed before the request: measured on the embedded 1.5B over 11 convention probes with the user's words in
the notes block (three phrasings, in front of the request and after it), the draft followed them 0 times;
asked afterwards to rewrite its finished reply to follow them, it did on 3 of 7, and left a reply the
preference did not concern unchanged. So the answer-first turn drafts as usual
and then asks for that rewrite, only on turns that were shown a preference.

The rewrite replaces the reply only when it cannot have broken it (`accept`): not empty, not runaway, every
code block still there, Python code still parsing and defining the same functions, every requested form
(`agent/checking/form.py`) that held before still holding, no number copied from the preference's example, and
the answer the turn computed or checked (a number, a date) still stated, in whatever format — a reformatted
"$351" (351.00 USD) or "December 25, 2025" (25/12/2025) is the same answer, a changed one is refused. The
preferences are quoted user text in the user turn — data about the reply's form, never system text.

Then the reply is checked (`judge_messages`, `p_yes`): one short call asks the model whether it follows the
preference, read through the logprobs of its first token (P(yes) against P(no)). When it does not, the rewrite
is asked once more with that said (`preference_messages(..., retry_after=...)`), and kept under the same rules.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from typing import Any

from ghost_agent.agent.checking import claims, form
from ghost_agent.agent.strategy import message_of
from ghost_agent.text.dates import CalendarAnswer, Day, Weekday, states_day, weekdays_in
from ghost_agent.text.fences import FENCE, strip_fences
from ghost_agent.text.prompts import messages

PROMPT = "agent_preference"
CHECK_PROMPT = "agent_preference_check"
FOLLOWED = 0.5  # P(yes) below this: the reply does not follow the preference, and one repair is asked
MAX_PREFERENCES = 3
REQUEST_CHARS = 2000
GROWTH = 2.0  # a rewrite longer than this many times the reply (+ slack) ran away
GROWTH_SLACK = 200
_LEAD_RE = re.compile(r"^\s*(?:rewritten\s+reply|reply|here(?:'s| is) the rewritten reply)\s*:\s*", re.I)
_TAIL_RE = re.compile(r"\n\s*(?:the user's preference|request|rewritten reply)\s*:", re.I)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def preference_messages(request: str, reply: str, preferences: Sequence[str], *,
                        retry_after: str | None = None) -> list[dict[str, str]]:
    """The rewrite prompt: the request, the reply and the user's preferences (quoted, "; "-joined); with
    `retry_after` (the previous rewrite), the reminder that it still does not follow them."""
    return messages(PROMPT, request=request[:REQUEST_CHARS], reply=reply, preferences=_quoted(preferences),
                    retry_after=retry_after)


def judge_messages(request: str, reply: str, preferences: Sequence[str]) -> list[dict[str, str]]:
    """The check prompt: does `reply` follow the preferences? (one word, read through logprobs)."""
    return messages(CHECK_PROMPT, request=request[:REQUEST_CHARS], reply=reply, preferences=_quoted(preferences))


def p_yes(response: Any) -> float | None:
    """P(yes) from a one-token judgement (`chat.completion` dict): the first token's top logprobs, yes-like
    against no-like tokens renormalised; without logprobs the word itself (1.0 / 0.0); None when it is neither."""
    try:
        choice = response["choices"][0]
        first = choice["logprobs"]["content"][0]
        top = first.get("top_logprobs") or [{"token": first["token"], "logprob": first["logprob"]}]
    except (KeyError, IndexError, TypeError, AttributeError):
        return _verdict(str(message_of(response).get("content") or ""))
    yes = no = 0.0
    for entry in top if isinstance(top, list) else ():
        if not isinstance(entry, dict):
            continue
        verdict = _verdict(str(entry.get("token", "")))
        if verdict is not None:
            p = math.exp(float(entry.get("logprob", -math.inf)))
            yes, no = (yes + p, no) if verdict == 1.0 else (yes, no + p)
    return yes / (yes + no) if yes + no > 0 else None


def _verdict(word: str) -> float | None:
    word = word.strip().strip(".!,:\"'").lower()
    return 1.0 if word in ("yes", "y") else 0.0 if word in ("no", "n") else None


def _quoted(preferences: Sequence[str]) -> str:
    return "; ".join(f'"{p}"' for p in preferences[:MAX_PREFERENCES])


def request_alone(request: str, wanted: Sequence[str]) -> str:
    """The request without the preferences stated in it (a correcting message states one and repeats the
    request): what is left is what this request itself asks for, which wins over a lesson."""
    for preference in wanted:
        request = request.replace(preference, " ")
    return request


def clean_rewrite(text: str) -> str:
    """The rewrite without the prompt's scaffolding a small model echoes: a "Rewritten reply:" lead, and
    everything from a trailing "The user's preference:" / "Request:" line on (measured on the 1.5B)."""
    text = _LEAD_RE.sub("", text or "", count=1)
    tail = _TAIL_RE.search(text)
    return (text[: tail.start()] if tail else text).strip()


def _functions(code: str) -> set[str] | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER_RE.findall(text)}


# A value with a physical unit: relabelling the unit without converting the value is always wrong ("37 degrees
# Celsius" rewritten as "37 degrees Kelvin" after "give me temperatures in kelvin" — seen on the 1.5B).
_UNITS = {
    "c": ("temperature", "C"), "celsius": ("temperature", "C"), "centigrade": ("temperature", "C"),
    "f": ("temperature", "F"), "fahrenheit": ("temperature", "F"),
    "k": ("temperature", "K"), "kelvin": ("temperature", "K"),
    "km": ("length", "km"), "kilometer": ("length", "km"), "kilometre": ("length", "km"),
    "mi": ("length", "mi"), "mile": ("length", "mi"), "ft": ("length", "ft"), "foot": ("length", "ft"),
    "feet": ("length", "ft"), "meter": ("length", "m"), "metre": ("length", "m"),
    "kg": ("mass", "kg"), "kilogram": ("mass", "kg"), "lb": ("mass", "lb"), "lbs": ("mass", "lb"),
    "pound": ("mass", "lb"), "liter": ("volume", "l"), "litre": ("volume", "l"), "gallon": ("volume", "gal"),
}
_UNIT_VALUE = re.compile(
    r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*(?:degrees?\s+|°\s*)?(celsius|centigrade|fahrenheit|kelvin|kilomet(?:er|re)|"
    r"met(?:er|re)|mile|foot|feet|kilogram|pound|lbs|liter|litre|gallon|km|mi|ft|kg|lb|[CFK])s?\b", re.I)


def _unit_values(text: str) -> set[tuple[float, str, str]]:
    """(value, dimension, unit) for every number written with a physical unit in `text`."""
    out = set()
    for number, unit in _UNIT_VALUE.findall(strip_fences(text, " ")):
        known = _UNITS.get(unit.lower())
        if known is not None:
            out.add((float(number), *known))
    return out


def _relabelled(reply: str, rewrite: str) -> str | None:
    """A value the rewrite writes in another unit of the same kind than the reply did, never in the reply's."""
    before = _unit_values(reply)
    for value, dimension, unit in _unit_values(rewrite):
        same_kind = {u for v, d, u in before if v == value and d == dimension}
        if same_kind and unit not in same_kind:
            return f"{claims.format_number(value)} {sorted(same_kind)[0]} as {unit}"
    return None


def _states(text: str, answer: float | CalendarAnswer) -> bool:
    if isinstance(answer, Day):
        return states_day(text, answer)
    if isinstance(answer, Weekday):
        return any(answer.same(w) for w in weekdays_in(text))
    return any(claims.same_number(answer, n) for n in claims.numbers_in(text))


def accept(reply: str, rewrite: str, request: str, wanted: Sequence[str] = (),
           answer: float | CalendarAnswer | None = None) -> str | None:
    """Why `rewrite` may not replace `reply` (None = it may). `wanted`: the preferences it was asked to follow
    — a number from their example ("like 12.50 USD") that the reply and request never had is a copied example,
    not a reformatted value (seen on the 1.5B: "12 dollars" became "12.50 USD"). `answer`: what the turn
    computed or checked (a number, a date or weekday), which the rewrite must still state in some format."""
    if not rewrite.strip():
        return "empty rewrite"
    if rewrite.strip() == reply.strip():
        return "unchanged"
    if len(rewrite) > GROWTH * len(reply) + GROWTH_SLACK:
        return "rewrite ran away"
    copied = (_numbers(rewrite) & _numbers(" ".join(wanted))) - _numbers(reply) - _numbers(request)
    if copied:
        return f"the rewrite copied the preference's example ({', '.join(sorted(copied))})"
    if answer is not None and not _states(rewrite, answer):
        return "the rewrite no longer states the checked answer"
    relabelled = _relabelled(reply, rewrite)
    if relabelled:
        return f"the rewrite relabelled {relabelled} without converting it"
    if rewrite.count(FENCE) < reply.count(FENCE):
        return "a code block was lost"
    before = "\n".join(claims.python_blocks(reply))
    if before.strip():
        old, new = _functions(before), _functions("\n".join(claims.python_blocks(rewrite)))
        if new is None and old is not None:
            return "the rewritten code does not parse"
        if old and new is not None and not old <= new:
            return "the rewritten code lost a function"
    for spec in form.detect_forms(request):
        if form.check(reply, spec).ok and not form.check(rewrite, spec).ok:
            return f"the rewrite broke the requested form ({spec.kind})"
    return None


__all__ = ["FOLLOWED", "MAX_PREFERENCES", "accept", "clean_rewrite", "judge_messages", "p_yes",
           "preference_messages", "request_alone"]
