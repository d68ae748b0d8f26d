"""Preferences of a known kind, applied by rule: the clock, dates, temperatures, money and an email sign-off.

A user's stated preference (`memory/preference.py`) is free text, and for most of them the only way to follow one
is to ask the model to rewrite its reply (`agent/checking/preferences.py`). A few kinds are common enough, and
mechanical enough, that a rule does it better than a 1.5B model: measured on the embedded model over the transfer
suite's date, money, temperature and clock families, the rewrite followed them 4 times in 24 across three runs
(dates and 24-hour times never), and with the preference in its prompt the draft itself got answers wrong that it
got right without it ("Water freezes at 0 Kelvin", "three hours after eleven in the morning" → "14:30" after an
example that said 14:30).

`rule_for(preference)` reads one of these kinds out of the user's words ("I use the 24-hour clock, not AM/PM",
"I write dates as DD/MM/YYYY", "give me temperatures in kelvin", "the currency code after the number, like
12.50 USD"); anything else is None and stays with the model. `FormatRule.apply(reply, request)` rewrites what the
reply states in prose — never inside code, fenced or inline — converting the value, not only its label: 2:00 p.m.
becomes 14:00, December 25th (in a request about 2025) 25/12/2025, 0 °C 273.15 K, $16 16.00 USD. A request that
names the form itself ("in Fahrenheit", "in AM/PM") wins over the lesson, and the rule leaves that reply alone.
No model, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ghost_agent.text.dates import day_spans

# A negation in front of a form ("not AM/PM", "instead of Celsius"): what follows it, up to the clause's end,
# is what the user does not want.
_NEGATION = re.compile(r"\b(?:not|no|never|instead\s+of|rather\s+than|don'?t\s+use|avoid|without)\b", re.I)

_CLOCK_24 = re.compile(r"\b(?:24|twenty[- ]four)[- ]?h(?:ou)?r?s?\b|\bmilitary\s+time\b", re.I)
_CLOCK_12 = re.compile(r"\b(?:12|twelve)[- ]?h(?:ou)?r?s?\b|\b[ap]\.?m\.?\s*/\s*[ap]\.?m\.?(?!\w)", re.I)
_DATE_PATTERN = re.compile(r"\b(DD?|MM?|YYYY|YY)([/.\-])(DD?|MM?)\2(YYYY|YY|DD?)\b", re.I)
_ISO_DATES = re.compile(r"\bISO(?:[- ]?8601)?\b", re.I)
_TEMPERATURE_UNITS = {"kelvin": "K", "celsius": "C", "centigrade": "C", "fahrenheit": "F"}
_UNIT_WORD = re.compile(r"\b(kelvin|celsius|centigrade|fahrenheit)\b", re.I)
_CODES = r"(USD|EUR|GBP|JPY|CHF|CAD|AUD)"
_CODE_AFTER = re.compile(rf"\b(?:currency\s+)?code\s+after\b|\d(?:\.(\d+))?\s?{_CODES}\b")
_CODE_BEFORE = re.compile(rf"\b(?:currency\s+)?code\s+(?:before|first)\b|\b{_CODES}\s?\d+(?:\.(\d+))?")

_CODE_SPAN = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.S)
_TIME_12 = re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s*([ap])\.?\s?m\b\.?", re.I)
_TIME_24 = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_NUMBER = r"-?\d+(?:\.\d+)?"
# A temperature: a value (or a range) with a unit word, or with ° / "degrees" before a one-letter unit.
_TEMPERATURE = re.compile(
    rf"(?<![\w.])(?P<low>{_NUMBER})(?:\s*(?:-|–|to)\s*(?P<high>{_NUMBER}))?\s*"
    r"(?:(?:°\s*|degrees?\s+)?(?P<word>kelvin|celsius|centigrade|fahrenheit)\b|(?:°\s*|degrees?\s+)(?P<letter>[CFK])\b"
    r"|(?<=\s)(?P<k>(?-i:K))(?!\w))", re.I)
_REPEATED = re.compile(r"(?P<a>\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? [CFK]|\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? °[CF])"
                       r"(?:\s*\((?P=a)\)|\s+or\s+(?P=a)|\s*/\s*(?P=a))")
_CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_WORDS = {"dollar": "USD", "euro": "EUR", "yen": "JPY"}
_MONEY = re.compile(
    r"(?P<symbol>[$€£¥])\s?(?P<a>\d[\d,]*(?:\.\d+)?)(?!\d)(?:\s*(?:USD|EUR|GBP|JPY)\b)?"
    r"|(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?:(?P<word>(?:US\s+)?dollars?|euros?|yen)\b|(?P<code>USD|EUR|GBP|JPY)\b)"
    r"|\b(?P<code_first>USD|EUR|GBP|JPY)\s?(?P<c>\d[\d,]*(?:\.\d+)?)")


@dataclass(frozen=True)
class FormatRule:
    """One known kind of preference: `kind` ("clock", "date", "temperature", "money") and its setting (`form`:
    "24" / "12", a pattern such as "DD/MM/YYYY", a unit "K" / "C" / "F", "after:2" / "before:2")."""

    kind: str
    form: str

    def apply(self, reply: str, request: str = "") -> str:
        """`reply` with what it states in prose put in this form; unchanged when `request` names the form itself."""
        if _request_names(self.kind, request):
            return reply
        convert = _CONVERTERS[self.kind]
        return _outside_code(reply, lambda prose: convert(prose, self.form, request))

    def describe(self) -> str:
        return f"{self.kind} {self.form}"


def rule_for(preference: str) -> FormatRule | None:
    """The known kind `preference` (the user's words) states, or None when it is none of them."""
    wanted = _wanted_part(preference)
    if _CLOCK_24.search(wanted):
        return FormatRule("clock", "24")
    if _CLOCK_12.search(wanted):
        return FormatRule("clock", "12")
    pattern = _DATE_PATTERN.search(preference)
    if pattern and pattern.start() < len(wanted):
        return FormatRule("date", pattern.group(0).upper())
    if _ISO_DATES.search(wanted) and re.search(r"\bdates?\b", preference, re.I):
        return FormatRule("date", "YYYY-MM-DD")
    signed = _SIGN_OFF_PREF.search(wanted)
    if signed:
        return FormatRule("sign_off", signed.group(1).strip())
    units = {_TEMPERATURE_UNITS[w.lower()] for w in _UNIT_WORD.findall(wanted)}
    if len(units) == 1:
        return FormatRule("temperature", units.pop())
    if re.search(r"\b(?:money|amounts?|prices?|currency|costs?)\b|\d\s?(?:USD|EUR|GBP)\b", preference, re.I):
        after, before = _CODE_AFTER.search(preference), _CODE_BEFORE.search(preference)
        if after and not before:
            return FormatRule("money", f"after:{len(after.group(1)) if after.group(1) else 2}")
        if before and not after:
            return FormatRule("money", f"before:{len(before.group(2)) if before.group(2) else 2}")
    return None


def rules_for(preferences: Sequence[str]) -> tuple[list[FormatRule], list[str]]:
    """The preferences a rule applies (one rule per kind, the first stated winning) and the ones left to the
    model, in order."""
    rules: list[FormatRule] = []
    rest: list[str] = []
    for preference in preferences:
        rule = rule_for(preference)
        if rule is None:
            rest.append(preference)
        elif all(r.kind != rule.kind for r in rules):
            rules.append(rule)
    return rules, rest


def apply_rules(reply: str, rules: Sequence[FormatRule], request: str = "") -> str:
    for rule in rules:
        reply = rule.apply(reply, request)
    return reply


def _wanted_part(preference: str) -> str:
    """The preference up to its first negation: "temperatures in kelvin, not Celsius" → "temperatures in kelvin, "."""
    m = _NEGATION.search(preference)
    return preference[: m.start()] if m else preference


def _request_names(kind: str, request: str) -> bool:
    """Whether the request itself asks for a form of this kind (which then wins over any lesson)."""
    if kind == "clock":
        return bool(_CLOCK_24.search(request) or re.search(r"\b(?:in|with|using)\s+[ap]\.?m\.?\b", request, re.I))
    if kind == "date":
        return bool(_DATE_PATTERN.search(request) or _ISO_DATES.search(request)
                    or re.search(r"\bdate\s+format\b|\bformat\s+(?:the\s+)?dates?\b", request, re.I))
    if kind == "temperature":
        return bool(re.search(r"\b(?:in|to|into)\s+(?:degrees\s+)?(?:kelvin|celsius|centigrade|fahrenheit)\b|"
                              r"\b(?:in|to|into)\s+°?[CFK]\b", request, re.I))
    return False


def _outside_code(text: str, convert: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [convert(text[last:m.start()]), m.group(0)]
        last = m.end()
    out.append(convert(text[last:]))
    return "".join(out)


# ----------------------------------------------------------------------------------------------------- the clock

_PART_OF_DAY = re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s+(?:o'clock\s+)?"
                          r"(in\s+the\s+(morning|afternoon|evening)|at\s+night|tonight)\b", re.I)
_BARE_TIME = re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9]):([0-5]\d)(?![\d:])(?!\s*[ap]\.?\s?m\b)", re.I)
_LATE_REQUEST = re.compile(r"\b(?:in\s+the\s+(?:afternoon|evening)|at\s+night|tonight|p\.?m\.?)(?!\w)", re.I)
_EARLY_REQUEST = re.compile(r"\b(?:morning|a\.?m\.?)(?!\w)", re.I)


def _clock(prose: str, form: str, request: str) -> str:
    if form == "24":
        def with_part(m: re.Match[str]) -> str:  # "4:30 in the afternoon" → "16:30"
            late = (m.group(4) or "").lower() in ("afternoon", "evening") or m.group(4) is None
            hour = int(m.group(1)) % 12 + (12 if late else 0)
            return f"{hour:02d}:{m.group(2) or '00'}"

        def bare(m: re.Match[str]) -> str:  # "7:30" answering "half past seven in the evening?" → "19:30"
            return f"{int(m.group(1)) % 12 + 12:02d}:{m.group(2)}"

        prose = _PART_OF_DAY.sub(with_part, prose)
        if _LATE_REQUEST.search(request) and not _EARLY_REQUEST.search(request):
            prose = _BARE_TIME.sub(bare, prose)

        def to_24(m: re.Match[str]) -> str:
            hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
            after = prose[m.end():m.end() + 2]
            # "p.m." ending a sentence carried its full stop
            stop = "." if m.group(0).endswith(".") and (not after.strip() or after[1:].isupper()) else ""
            return f"{hour:02d}:{m.group(2) or '00'}{stop}"
        return _TIME_12.sub(to_24, prose)

    def to_12(m: re.Match[str]) -> str:
        hour = int(m.group(1))
        if 1 <= hour <= 12 and not m.group(1).startswith("0"):
            return m.group(0)  # "10:30" reads the same on both clocks; only a 24-hour reading is converted
        return f"{hour % 12 or 12}:{m.group(2)} {'PM' if hour >= 12 else 'AM'}"
    return _TIME_24.sub(to_12, prose)


# ------------------------------------------------------------------------------------------------------ dates

def _dates(prose: str, form: str, request: str) -> str:
    years = {int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", request)}
    out, last = [], 0
    for start, end, day in day_spans(prose):
        year = day.year if day.year is not None else (next(iter(years)) if len(years) == 1 else None)
        if year is None:
            continue  # "December 25" with no year anywhere: a pattern with a year would invent one
        before = prose[last:start]
        if prose[start].isdigit() and before.lower().endswith("the "):
            before = before[:-4]  # "the 17th of April, 2026" → "17/04/2026", not "the 17/04/2026"
        out += [before, _date_text(form, year, day.month, day.day)]
        last = end
    out.append(prose[last:])
    return re.sub(r"\b(\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4})(?:st|nd|rd|th)\b", r"\1", "".join(out))


def _date_text(form: str, year: int, month: int, day: int) -> str:
    parts = re.split(r"([/.\-])", form)
    values = {"D": day, "M": month, "Y": year}
    return "".join(
        part if part in "/.-" else
        (f"{year % 100:02d}" if part == "YY" else str(year)) if part[0] == "Y" else
        f"{values[part[0]]:02d}" if len(part) == 2 else str(values[part[0]])
        for part in parts)


# ---------------------------------------------------------------------------------------------- temperatures

def _to_kelvin(value: float, unit: str) -> float:
    return value + 273.15 if unit == "C" else (value - 32) * 5 / 9 + 273.15 if unit == "F" else value


def _from_kelvin(kelvin: float, unit: str) -> float:
    return kelvin - 273.15 if unit == "C" else (kelvin - 273.15) * 9 / 5 + 32 if unit == "F" else kelvin


def _number(value: float) -> str:
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _temperatures(prose: str, form: str, request: str) -> str:
    def convert(m: re.Match[str]) -> str:
        word, letter = m.group("word"), m.group("letter") or m.group("k")
        unit = _TEMPERATURE_UNITS[word.lower()] if word else letter.upper()
        if unit == form:
            return m.group(0)
        values = [float(v) for v in (m.group("low"), m.group("high")) if v is not None]
        text = "-".join(_number(_from_kelvin(_to_kelvin(v, unit), form)) for v in values)
        return f"{text} K" if form == "K" else f"{text} °{form}"
    converted = _TEMPERATURE.sub(convert, prose)
    return _REPEATED.sub(r"\g<a>", converted)  # "273.15 K (273.15 K)": the alternative it gave is now the same


# ------------------------------------------------------------------------------------------------------ money

_MONEY_WORDS = r"(?:US\s+)?dollars?|euros?|yen|USD|EUR|GBP|JPY"
_LATEX_UNIT = re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*\\(?:text|mathrm)\{{\s*({_MONEY_WORDS})\s*\}}")
_BOXED = re.compile(r"\\boxed\{\s*(\d[\d,]*(?:\.\d+)?)\s*\}")
_REQUEST_CURRENCY = re.compile(rf"[$€£¥]\s?\d|\d\s*(?:{_MONEY_WORDS})\b|\b(?:dollars?|euros?)\b", re.I)


def _money(prose: str, form: str, request: str) -> str:
    place, _, decimals = form.partition(":")
    places = int(decimals or 2)
    prose = _LATEX_UNIT.sub(r"\1 \2", prose)  # "36 \text{ dollars}" reads as "36 dollars"
    currency = _REQUEST_CURRENCY.search(request)
    if currency:  # the boxed answer to a question about money is an amount
        code = _code_of(currency.group(0))
        prose = _BOXED.sub(lambda m: "\\boxed{" + _amount(m.group(1), code, place, places) + "}", prose)

    def convert(m: re.Match[str]) -> str:
        amount = m.group("a") or m.group("b") or m.group("c")
        if m.group("symbol"):
            code = _CURRENCIES[m.group("symbol")]
        elif m.group("word"):
            code = _CURRENCY_WORDS[m.group("word").split()[-1].lower().rstrip("s")]
        else:
            code = m.group("code") or m.group("code_first")
        return _amount(amount, code, place, places)
    return _MONEY.sub(convert, prose)


def _amount(amount: str, code: str, place: str, places: int) -> str:
    value = float(amount.replace(",", ""))
    text = f"{value:,.{places}f}" if "," in amount else f"{value:.{places}f}"
    return f"{text} {code}" if place == "after" else f"{code} {text}"


def _code_of(text: str) -> str:
    for symbol, code in _CURRENCIES.items():
        if symbol in text:
            return code
    found = re.search(r"USD|EUR|GBP|JPY|dollar|euro|yen", text, re.I)
    word = found.group(0) if found else "USD"
    return _CURRENCY_WORDS.get(word.lower(), word.upper())


# ---------------------------------------------------------------------------------------------- the sign-off

_SIGN_OFF_PREF = re.compile(r"\bsign(?:s|ed|ing)?(?:[- ]off)?(?:\s+\w+){0,3}?\s+(?:with\s+|as\s+|:\s*)?"
                            r"['\"“‘]([^'\"”’\n]{2,60})['\"”’]", re.I)
_CLOSING = re.compile(r"^\s*(?:best(?:\s+regards|\s+wishes)?|kind(?:est)?\s+regards|warm(?:est)?\s+regards|regards|"
                      r"sincerely(?:\s+yours)?|yours(?:\s+sincerely|\s+truly|\s+faithfully)?|thanks(?:\s+again)?|"
                      r"thank\s+you|many\s+thanks|cheers|all\s+the\s+best|respectfully|take\s+care)\s*[,.!]?\s*$", re.I)
_NAME_PLACEHOLDER = re.compile(r"^\s*\[(?:your|my|sender'?s?)?\s*(?:full\s+)?name\]\s*$", re.I)
_GREETING = re.compile(r"^\s*(?:subject:|dear\b|hi\b|hello\b|hey\b|good\s+(?:morning|afternoon|evening)\b)",
                       re.I | re.M)


def _norm(line: str) -> str:
    return re.sub(r"[\s,.!]+", " ", line).strip().casefold()


def _sign_off(prose: str, form: str, request: str) -> str:
    """The email ends with the user's sign-off: a closing and a name placeholder after it are dropped, an existing
    closing (with its name lines) is replaced, and an email with none gets it. Prose that is not an email (no
    greeting, no closing, no placeholder) is left alone."""
    lines = prose.split("\n")
    want = _norm(form)
    signed = [i for i, ln in enumerate(lines) if _norm(ln) == want
              or (i + 1 < len(lines) and f"{_norm(ln)} {_norm(lines[i + 1])}" == want)]
    block = form.replace(", ", ",\n", 1) if ", " in form else form
    if signed:
        i = signed[-1] + (1 if _norm(lines[signed[-1]]) != want else 0) + 1
        if all(not ln.strip() or _CLOSING.match(ln) or _NAME_PLACEHOLDER.match(ln) for ln in lines[i:]):
            # only closings, placeholders and blanks follow the sign-off: they go
            return "\n".join(lines[:i]).rstrip() + ("\n" if prose.endswith("\n") else "")
        return prose
    if not _GREETING.search(prose) and not any(_NAME_PLACEHOLDER.match(ln) for ln in lines):
        return prose  # not an email
    tail = [k for k, ln in enumerate(lines) if ln.strip()][-6:]
    closing = next((k for k in reversed(tail) if _CLOSING.match(lines[k])), None)
    if closing is None:
        closing = next((k for k in reversed(tail) if _NAME_PLACEHOLDER.match(lines[k])), None)
    if closing is not None:
        end = closing + 1
        while end < len(lines) and end - closing <= 3 and lines[end].strip() and len(lines[end]) < 40 \
                and (end == closing + 1 or _NAME_PLACEHOLDER.match(lines[end])):
            end += 1
        rest = lines[end:]
        while rest and (not rest[0].strip() or _NAME_PLACEHOLDER.match(rest[0])) \
                and any(_NAME_PLACEHOLDER.match(ln) for ln in rest[:3]):
            rest = rest[1:]  # "Best regards,\n\n[Your Name]": the placeholder goes with its closing
        return "\n".join([*lines[:closing], block, *rest])
    return prose.rstrip() + "\n\n" + block + ("\n" if prose.endswith("\n") else "")


_CONVERTERS: dict[str, Callable[[str, str, str], str]] = {
    "clock": _clock, "date": _dates, "temperature": _temperatures, "money": _money, "sign_off": _sign_off,
}

__all__ = ["FormatRule", "apply_rules", "rule_for", "rules_for"]
