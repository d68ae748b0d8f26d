"""Convention checks for the correction-transfer suite: did a reply follow a stated user preference?

Each check is `check(reply, expected) -> Check(passed, reason)`: deterministic, no model, no code execution
(Python is only parsed). A check accepts the convention and rejects the form a model writes by default
("$351.00" where the user asked for "351.00 USD"); a reply that mixes both forms fails, because the user
asked for one. `reason` says what was missing or what gave the default form away, for the report.

`CHECKS` maps the names the suite data uses (`eval/suites/transfer.py`) to the functions; `as_verifier(name)`
adapts one to the harness's `(predicted, expected, **kw) -> float` verifier shape.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ghost_agent.sandbox.code_program import extract_code
from ghost_agent.text.fences import find_fences


@dataclass(frozen=True)
class Check:
    """A convention check's verdict and, when it failed, why."""

    passed: bool
    reason: str = ""

    @classmethod
    def ok(cls) -> Check:
        """The reply follows the convention."""
        return cls(True, "")

    @classmethod
    def miss(cls, reason: str) -> Check:
        """The reply does not follow it, because `reason`."""
        return cls(False, reason)


CheckFn = Callable[[str, Any], Check]

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def visible(reply: str) -> str:
    """The reply without a `<think>` section (never shown to the user)."""
    return _THINK.sub("", reply or "")


def _strings(expected: Any, what: str) -> list[str]:
    items = [expected] if isinstance(expected, str) else list(expected or [])
    if not items or not all(isinstance(x, str) and x for x in items):
        raise ValueError(f"{what}: expected must be a non-empty string or list of strings, got {expected!r}")
    return items


# ---- dates as DD/MM/YYYY -----------------------------------------------------------------------------------

_MONTHS = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
# "December 25", "Dec. 25th", "25 December", "25th of December": a written-out day-and-month date.
_MONTH_DATE = re.compile(
    rf"\b(?:(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b)",
    re.I,
)
_ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{1,2}-\d{1,2}(?!\d)")
_SLASH_DATE = re.compile(r"(?<![\d/])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?![\d/])")


def dmy_dates(reply: str, expected: Any) -> Check:
    """Every expected date ("25/12/2025") appears as DD/MM/YYYY, and no date is written another way: no month
    names with a day ("December 25"), no ISO (2025-12-25), no MM/DD order, no unpadded day or month."""
    text = visible(reply)
    wanted = _strings(expected, "dmy_dates")
    for date in wanted:
        if not re.fullmatch(r"\d{2}/\d{2}/\d{4}", date):
            raise ValueError(f"dmy_dates: expected dates must be DD/MM/YYYY, got {date!r}")
    written = _MONTH_DATE.search(text)
    if written:
        return Check.miss(f"date with a month name: {written.group(0)!r}")
    iso = _ISO_DATE.search(text)
    if iso:
        return Check.miss(f"ISO date: {iso.group(0)!r}")
    for m in _SLASH_DATE.finditer(text):
        day, month = int(m.group(1)), int(m.group(2))
        token = m.group(0)
        if not re.fullmatch(r"\d{2}/\d{2}/\d{4}", token):
            return Check.miss(f"not DD/MM/YYYY: {token!r}")
        if month > 12 or day > 31 or day == 0 or month == 0:
            return Check.miss(f"not a day/month order: {token!r}")
    found = {m.group(0) for m in _SLASH_DATE.finditer(text)}
    missing = [d for d in wanted if d not in found]
    if missing:
        return Check.miss(f"missing {', '.join(missing)}")
    return Check.ok()


# ---- money as "351.00 USD" ----------------------------------------------------------------------------------

_SYMBOL = re.compile(r"[$€£¥₹]|\bUS\$")
_AMOUNT_CODE = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)\.(\d{2})[ \u00a0]([A-Z]{3})\b")


def currency_code(reply: str, expected: Any) -> Check:
    """Each expected amount ("351.00") is written with two decimals and the currency code after it ("351.00
    USD"; thousands commas allowed); no currency symbol anywhere and no code in front of a number.

    `expected`: {"amounts": [...], "code": "USD"} (or just the list of amounts, code USD)."""
    if isinstance(expected, Mapping):
        amounts, code = _strings(expected.get("amounts"), "currency_code"), str(expected.get("code") or "USD")
    else:
        amounts, code = _strings(expected, "currency_code"), "USD"
    text = visible(reply)
    symbol = _SYMBOL.search(text)
    if symbol:
        return Check.miss(f"currency symbol {symbol.group(0)!r}")
    for m in re.finditer(rf"\b{re.escape(code)}\s*\d[\d,.]*", text):
        if not text[: m.start()].rstrip().endswith(tuple("0123456789")):  # "16.00 USD 3 ..." is not a prefix
            return Check.miss(f"currency code before the number: {m.group(0)!r}")
    found = {(m.group(1).replace(",", "") + "." + m.group(2), m.group(3)) for m in _AMOUNT_CODE.finditer(text)}
    missing = [a for a in amounts if (a.replace(",", ""), code) not in found]
    if missing:
        return Check.miss(f"missing {', '.join(a + ' ' + code for a in missing)}")
    return Check.ok()


# ---- Python functions with type hints -----------------------------------------------------------------------

def python_type_hints(reply: str, expected: Any = None) -> Check:
    """The reply's Python code parses and defines at least one function, and every function annotates every
    parameter (`self`/`cls` of a method excepted, `*args`/`**kwargs` included) and its return value."""
    code = extract_code(visible(reply))
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Check.miss(f"no parsable python code ({exc.msg})")
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return Check.miss("no function defined")
    methods = {id(f) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for f in cls.body}
    for fn in functions:
        params = [*fn.args.posonlyargs, *fn.args.args]
        if id(fn) in methods and params and params[0].arg in ("self", "cls"):
            params = params[1:]
        params += fn.args.kwonlyargs
        params += [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
        bare = [a.arg for a in params if a.annotation is None]
        if bare:
            return Check.miss(f"{fn.name}(): no type hint on {', '.join(bare)}")
        if fn.returns is None:
            return Check.miss(f"{fn.name}(): no return type hint")
    return Check.ok()


# ---- SQL keywords in lowercase ------------------------------------------------------------------------------

_SQL_KEYWORDS = frozenset(
    "select from where and or not in is null like between group by order having limit offset as on join inner "
    "left right outer full cross union all distinct insert into values update set delete create table drop alter "
    "add index primary key foreign references default count sum avg min max case when then else end asc desc "
    "exists with".split()
)
_SQL_VERBS = ("select", "insert", "update", "delete", "create", "with")
_SQL_STRING = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"])*\"")
_WORD = re.compile(r"[A-Za-z_]+")


def _sql_text(reply: str) -> str:
    """The SQL of a reply: its fenced blocks if it has any, else the lines from the first one that starts
    with a statement keyword."""
    blocks = [f.body for f in find_fences(reply, "inline")]
    if blocks:
        return "\n".join(blocks)
    lines = reply.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower().startswith(_SQL_VERBS):
            return "\n".join(lines[i:])
    return ""


def sql_lowercase(reply: str, expected: Any = None) -> Check:
    """The reply holds an SQL statement (in a code block, or a line starting with SELECT/INSERT/...), and
    every SQL keyword in it, outside string literals, is lowercase (`select name from t where ...`)."""
    sql = _SQL_STRING.sub("''", _sql_text(visible(reply)))
    words = _WORD.findall(sql)
    if not any(w.lower() in _SQL_VERBS for w in words):
        return Check.miss("no SQL statement")
    upper = sorted({w for w in words if w.lower() in _SQL_KEYWORDS and w != w.lower()})
    if upper:
        return Check.miss(f"keywords not lowercase: {', '.join(upper[:6])}")
    return Check.ok()


# ---- temperatures in kelvin ---------------------------------------------------------------------------------

_KELVIN = re.compile(r"(?<![\d.])(-?\d+(?:\.\d+)?)\s*(?:°\s*)?(?:K\b|kelvins?\b)", re.I)
_OTHER_SCALE = re.compile(
    r"°\s*[CF]\b|\bdeg(?:rees?)?\s*(?:C|F|celsius|fahrenheit|centigrade)\b|\bcelsius\b|\bfahrenheit\b|"
    r"\bcentigrade\b|(?<![\w.])\d+(?:\.\d+)?\s?[CF]\b",
    re.I,
)


def kelvin(reply: str, expected: Any) -> Check:
    """A temperature in kelvin ("373.15 K", "373 kelvin") within `expected` = [low, high], and no Celsius or
    Fahrenheit anywhere (°C, °F, "degrees Celsius", "100 C")."""
    try:
        low, high = (float(x) for x in expected)
    except (TypeError, ValueError):
        raise ValueError(f"kelvin: expected must be [low, high], got {expected!r}") from None
    text = visible(reply)
    other = _OTHER_SCALE.search(text)
    if other:
        return Check.miss(f"not kelvin: {other.group(0)!r}")
    values = [float(m.group(1)) for m in _KELVIN.finditer(text)]
    if not values:
        return Check.miss("no temperature in kelvin")
    if not any(low <= v <= high for v in values):
        return Check.miss(f"kelvin value(s) {values[:3]} outside {low:g}-{high:g}")
    return Check.ok()


# ---- file names in kebab-case -------------------------------------------------------------------------------

_EXTENSIONS = ("md|txt|py|csv|json|pdf|docx?|xlsx?|pptx?|sh|ya?ml|toml|log|png|jpe?g|html?|sql|js|ts|zip|"
               "tar\\.gz|ipynb|bak|ini|cfg|xml|rb|go|rs")
_FILE_NAME = re.compile(rf"(?<![\w.\-/])([\w.\-]+?)\.({_EXTENSIONS})(?![\w\-])", re.I)
_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def kebab_file_names(reply: str, expected: Any = None) -> Check:
    """The reply suggests at least one file name in lowercase kebab-case with two or more words
    (`weekly-team-meeting-notes.md`), and every file name it mentions is lowercase kebab-case (no
    underscores, capitals or spaces). `expected` (optional): the extension the name must have ("md")."""
    text = visible(reply)
    names = [(m.group(1), m.group(2)) for m in _FILE_NAME.finditer(text)]
    if not names:
        return Check.miss("no file name")
    for stem, ext in names:
        if not _KEBAB.fullmatch(stem) or ext != ext.lower():
            return Check.miss(f"not kebab-case: {stem}.{ext!s}")
    if not any("-" in stem for stem, _ in names):
        return Check.miss("no multi-word kebab-case name")
    if expected and not any(ext.lower() == str(expected).lower() for _, ext in names):
        return Check.miss(f"no .{expected} name")
    return Check.ok()


# ---- times on the 24-hour clock -----------------------------------------------------------------------------

_AM_PM = re.compile(r"\d\s*(?:[ap]\.\s?m\.?|[ap]m\b)|\b(?:noon|midnight)\b", re.I)
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?!\d)")


def time_24h(reply: str, expected: Any) -> Check:
    """Every expected time ("14:30") appears on the 24-hour clock (HH:MM), and nothing is written with AM/PM
    ("2:30 PM", "2:30pm") or as noon/midnight."""
    wanted = _strings(expected, "time_24h")
    text = visible(reply)
    ampm = _AM_PM.search(text)
    if ampm:
        return Check.miss(f"12-hour clock: {ampm.group(0)!r}")
    found = {f"{int(m.group(1)):02d}:{m.group(2)}" for m in _CLOCK.finditer(text)}
    missing = [t for t in wanted if t not in found]
    if missing:
        return Check.miss(f"missing {', '.join(missing)}")
    return Check.ok()


# ---- conventional commit messages ---------------------------------------------------------------------------

_COMMIT = re.compile(
    r"(?:feat|fix|docs|style|refactor|perf|test|tests|build|ci|chore|revert)(?:\([\w./ -]+\))?!?:\s+\S", re.I
)
_COMMIT_LEAD = re.compile(r"^\s*(?:[-*>]\s+|\d+[.)]\s+)?[`*]*(?:git\s+commit\s+(?:-\w+\s+)*)?[\"'`“”*]*\s*")


def conventional_commit(reply: str, expected: Any = None) -> Check:
    """Some line of the reply is a commit message starting with a type prefix (`fix: ...`, `feat(ui): ...`,
    `docs: ...`), after quotes, list markers or a `git commit -m` in front of it."""
    for line in visible(reply).splitlines():
        if _COMMIT.match(_COMMIT_LEAD.sub("", line)):
            return Check.ok()
    return Check.miss("no commit message with a type prefix (fix:, feat:, ...)")


# ---- lists on one line, separated by semicolons -------------------------------------------------------------

_LIST_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*•+])\s+\S")
MAX_ITEM_WORDS = 8


def semicolon_list(reply: str, expected: Any) -> Check:
    """The list is one line of at least `expected` (an int, or {"min_items": n}) items separated by
    semicolons, each item a few words, and no line of the reply is a bullet or a numbered item."""
    want = int(expected.get("min_items", 2)) if isinstance(expected, Mapping) else int(expected or 2)
    text = visible(reply)
    marker = next((ln for ln in text.splitlines() if _LIST_MARKER.match(ln)), None)
    if marker is not None:
        return Check.miss(f"bulleted or numbered line: {marker.strip()[:40]!r}")
    best = 0
    for line in text.splitlines():
        items = [i.strip(" .") for i in line.split(";")]
        items = [i for i in items if i]
        if len(items) >= 2 and all(len(i.split()) <= MAX_ITEM_WORDS for i in items[1:-1]):
            best = max(best, len(items))
    if best < want:
        return Check.miss(f"no line with {want} semicolon-separated items" + (f" (best: {best})" if best else ""))
    return Check.ok()


# ---- email sign-off -----------------------------------------------------------------------------------------

_PLACEHOLDER_NAME = re.compile(r"\[(?:your\s+)?(?:full\s+)?name\]|<(?:your\s+)?name>", re.I)


def email_sign_off(reply: str, expected: Any) -> Check:
    """The email is signed off with `expected` ("Cheers, Sam": a line of its own, or "Cheers," then "Sam";
    punctuation and case aside), and has no name placeholder ("[Your Name]")."""
    sign_off = _strings(expected, "email_sign_off")[0]
    text = visible(reply)
    placeholder = _PLACEHOLDER_NAME.search(text)
    if placeholder:
        return Check.miss(f"placeholder {placeholder.group(0)!r}")
    lines = [_sign_off_norm(ln) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    want = _sign_off_norm(sign_off)
    # the sign-off on a line of its own, or split over two ("Cheers," / "Sam"); commentary may follow the email
    if any(ln == want for ln in lines) or any(f"{a} {b}" == want for a, b in zip(lines, lines[1:], strict=False)):
        return Check.ok()
    return Check.miss(f"not signed {sign_off!r}")


def _sign_off_norm(text: str) -> str:
    return re.sub(r"[\s,.!—–*_`>-]+", " ", text).strip().casefold()


CHECKS: dict[str, CheckFn] = {
    "dmy_dates": dmy_dates,
    "currency_code": currency_code,
    "python_type_hints": python_type_hints,
    "sql_lowercase": sql_lowercase,
    "kelvin": kelvin,
    "kebab_file_names": kebab_file_names,
    "time_24h": time_24h,
    "conventional_commit": conventional_commit,
    "semicolon_list": semicolon_list,
    "email_sign_off": email_sign_off,
}


def get_check(name: str, checks: Mapping[str, CheckFn] = CHECKS, what: str = "convention check") -> CheckFn:
    """The check registered under `name` in `checks`; KeyError listing the known names otherwise."""
    try:
        return checks[name]
    except KeyError:
        raise KeyError(f"unknown {what} {name!r} (known: {', '.join(sorted(checks))})") from None


def as_verifier(name: str) -> Callable[..., float]:
    """The check `name` as a harness verifier: `(predicted, expected, **kw) -> 1.0 | 0.0`."""
    check = get_check(name)

    def verifier(predicted: str, expected: Any = None, **_: Any) -> float:
        return 1.0 if check(predicted, expected).passed else 0.0

    verifier.__name__ = name
    return verifier


__all__ = [
    "CHECKS",
    "Check",
    "CheckFn",
    "as_verifier",
    "conventional_commit",
    "currency_code",
    "dmy_dates",
    "email_sign_off",
    "get_check",
    "kebab_file_names",
    "kelvin",
    "python_type_hints",
    "semicolon_list",
    "sql_lowercase",
    "time_24h",
    "visible",
]
