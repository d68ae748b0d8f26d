"""Content checks for the correction-transfer suite: is the reply's answer right, whatever form it is written in?

A convention check (`eval/conventions.py`) asks whether a reply follows the user's convention ("25/12/2025");
it cannot tell a reply in the default form with the right answer ("December 25, 2025") from one in the
convention with a wrong answer. A lesson must never make an answer wrong (issue 22), so each probe is also graded
here on its content alone: the expected date in any common format, the amount as any number, the temperature in
any scale, the time on either clock, a function that parses, a SQL statement, a file name with the extension,
enough list items, an email. The transfer report counts the probes whose content was right before learning and
wrong after (target 0).

Each check is `check(reply, expected) -> Check`, keyed by the family's convention check name, deterministic,
no model, no execution (Python is only parsed).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from ghost_agent.eval.conventions import Check, CheckFn, get_check, visible
from ghost_agent.sandbox.code_program import extract_code
from ghost_agent.text.dates import Day, states_day
from ghost_agent.text.numbers import numbers_in


def dates(reply: str, expected: Any) -> Check:
    """Every expected date (DD/MM/YYYY in the suite data) is stated, in any format."""
    text = visible(reply)
    for raw in [expected] if isinstance(expected, str) else list(expected or []):
        day, month, year = (int(x) for x in str(raw).split("/"))
        if not states_day(text, Day(month, day, year)):
            return Check.miss(f"the date {raw} is not stated in any form")
    return Check.ok()


def amounts(reply: str, expected: Any) -> Check:
    """Every expected amount is stated as a number ("$351", "351.00 USD", "USD 351" all state 351)."""
    wanted = expected.get("amounts") if isinstance(expected, Mapping) else expected
    said = numbers_in(visible(reply).replace("$", " "))
    for raw in wanted or []:
        value = float(str(raw).replace(",", ""))
        if not any(abs(v - value) < 0.005 for v in said):
            return Check.miss(f"the amount {raw} is not stated")
    return Check.ok()


_TEMPERATURE = re.compile(
    r"((?:(?<![\w.])-)?\d+(?:\.\d+)?)\s*(?:°\s*([CFK])\b|degrees?\s+(celsius|fahrenheit|centigrade|kelvin)|(kelvin)\b|([CFK])\b)",
    re.I)


def temperature(reply: str, expected: Any) -> Check:
    """A temperature in the expected kelvin range [low, high], stated in kelvin, Celsius or Fahrenheit."""
    low, high = (float(x) for x in expected)
    for m in _TEMPERATURE.finditer(visible(reply)):
        value = float(m.group(1))
        scale = next(g for g in m.groups()[1:] if g).lower()[0]
        kelvin = {"k": value, "c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15}[scale]
        if low - 1.0 <= kelvin <= high + 1.0:  # "100 °C" is 373.15 K; rounding on either side allowed
            return Check.ok()
    return Check.miss(f"no temperature between {low:g} and {high:g} K in any scale")


_CLOCK_24 = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?!\d)(?!\s*(?:[ap]\.?\s?m\b))", re.I)
_CLOCK_12 = re.compile(r"(?<![\d:])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?", re.I)


def times(reply: str, expected: Any) -> Check:
    """Every expected time ("14:30") is stated on either clock ("14:30", "2:30 PM", "2:30pm")."""
    text = visible(reply)
    found = {f"{int(h):02d}:{mm}" for h, mm in _CLOCK_24.findall(text)}
    for hour, minute, half in _CLOCK_12.findall(text):
        h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        found.add(f"{h:02d}:{minute or '00'}")
    missing = [t for t in ([expected] if isinstance(expected, str) else expected or []) if t not in found]
    return Check.miss(f"the time {', '.join(missing)} is not stated") if missing else Check.ok()


def python_function(reply: str, expected: Any = None) -> Check:
    """The reply's Python code parses and defines a function."""
    code = extract_code(reply) or ""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return Check.miss("no Python code that parses")
    if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree)):
        return Check.miss("no function defined")
    return Check.ok()


_SQL = re.compile(r"\b(?:select\b[\s\S]+?\bfrom|delete\s+from|update\s+\w+\s+set|insert\s+into)\b", re.I)


def sql_statement(reply: str, expected: Any = None) -> Check:
    """A SQL statement (SELECT … FROM, DELETE FROM, UPDATE … SET, INSERT INTO), in any case."""
    return Check.ok() if _SQL.search(visible(reply)) else Check.miss("no SQL statement")


def file_name(reply: str, expected: Any) -> Check:
    """A file name with the expected extension, in any style."""
    ext = re.escape(str(expected).lstrip("."))
    found = re.search(rf"[\w.\-]+\.{ext}\b", visible(reply), re.I)
    return Check.ok() if found else Check.miss(f"no .{expected} file name")


def commit_message(reply: str, expected: Any = None) -> Check:
    """Some line that can be a commit message: a few words, not code fencing."""
    for line in visible(reply).splitlines():
        words = line.strip(" `\"'*-#").split()
        if 2 <= len(words) <= 20:
            return Check.ok()
    return Check.miss("no commit message")


_ITEM_SPLIT = re.compile(r"\n|;|,(?!\d)")
_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*•+])\s*")


def list_items(reply: str, expected: Any) -> Check:
    """At least the expected number of items, listed any way (lines, bullets, commas, semicolons)."""
    want = int(expected.get("min_items", 2)) if isinstance(expected, Mapping) else int(expected or 2)
    items = [_MARKER.sub("", part).strip(" .") for part in _ITEM_SPLIT.split(visible(reply))]
    items = [i for i in items if i and len(i.split()) <= 8]
    return Check.ok() if len(items) >= want else Check.miss(f"{len(items)} items, {want} asked for")


def email(reply: str, expected: Any = None) -> Check:
    """An email: a greeting or subject line and a few lines of body."""
    text = visible(reply)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    greets = re.search(r"^\s*(?:subject:|dear\b|hi\b|hello\b|hey\b|good\s+(?:morning|afternoon))", text, re.I | re.M)
    return Check.ok() if greets and len(lines) >= 3 else Check.miss("no email (greeting and body)")


CONTENT: dict[str, CheckFn] = {
    "dmy_dates": dates,
    "currency_code": amounts,
    "python_type_hints": python_function,
    "sql_lowercase": sql_statement,
    "kelvin": temperature,
    "kebab_file_names": file_name,
    "time_24h": times,
    "conventional_commit": commit_message,
    "semicolon_list": list_items,
    "email_sign_off": email,
}


def get_content_check(name: str) -> CheckFn:
    """The content check for the family whose convention check is `name`; KeyError otherwise."""
    return get_check(name, CONTENT, "content check")


__all__ = ["CONTENT", "amounts", "commit_message", "dates", "email", "file_name", "get_content_check", "list_items",
           "python_function", "sql_statement", "temperature", "times"]
