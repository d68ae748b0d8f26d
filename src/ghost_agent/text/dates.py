"""Calendar answers in text: the dates and weekdays a reply or a program's output states, and whether a request
asks for one.

A question such as "What date is 100 days after January 10, 2025?" has a date for its answer, not a number: read
as numbers, "2025-04-20" is 20 and "March 10, 2025" is 2025, and comparing those says nothing. The answer-first turn
(`agent/checking/answer_first.py`) computes such answers with a program like any other quantity; this module is
how it reads the program's printed date and the date the draft arrived at, and compares them.

Formats read: ISO (`2025-04-20`, `2025/04/20`, a time after it is ignored), `April 20, 2025`, `Apr. 20th 2025`,
`20 April 2025`, `the 20th of April, 2025`, and the same without a year (`April 20`: compared on month and day).
Numeric day/month orders other than ISO (`04/05/2025`) are ambiguous and not read.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAYS.update({name.lower(): i for i, name in enumerate(calendar.day_abbr)})

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_FORMATS = (
    re.compile(r"(?<![\d-])(?P<year>\d{4})[-/](?P<month>[01]?\d)[-/](?P<day>[0-3]?\d)(?!\d)"),
    re.compile(rf"\b{_MONTH}\s+{_DAY}(?:\s*,\s*|\s+){_YEAR}\b", re.I),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:\s*,\s*|\s+){_YEAR}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*,?\s*\d)", re.I),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?!\s*,?\s*\d)", re.I),
)
_WEEKDAY = re.compile(r"\b(" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")\b\.?", re.I)
_LONG_WEEKDAY = re.compile(r"\b(" + "|".join(calendar.day_name) + r")\b", re.I)

_ASKS_WEEKDAY = re.compile(r"\b(?:day\s+of\s+the\s+week|what\s+weekday|which\s+weekday|what\s+day\s+(?:is|was|will)"
                           r"\b[^?.]*\b(?:on|fall|land))", re.I)
_ASKS_DATE = re.compile(
    r"\b(?:what(?:'s|\s+is|\s+was|\s+will\s+be)?\s+(?:the\s+)?(?:date|day)\b(?!\s+(?:format|type|field|column|"
    r"string|library|module|picker|stamp)s?\b|-)|which\s+(?:date|day)\b(?!\s+(?:format|type)s?\b)|"
    r"on\s+what\s+(?:date|day)\b|(?:date|day)\s+(?:is|was|will\s+it\s+be)\s+(?:it\s+)?\d+\s+(?:days?|weeks?|months?)|"
    r"when\s+(?:is|was|will\s+be|would\s+be|does|did)\b[^?]*?\b\d+\s+(?:days?|weeks?|months?|years?)\s+"
    r"(?:after|before|from|since|later|earlier|ago)\b|"
    r"(?:falls?|lands?)\s+on\s+what\b)",
    re.I,
)


@dataclass(frozen=True)
class Day:
    """A calendar date; `year` None when the text gave none ("April 20")."""

    month: int
    day: int
    year: int | None = None

    def same(self, other: object) -> bool:
        """The same month and day, and the same year when both have one."""
        if not isinstance(other, Day):
            return False
        years_agree = self.year is None or other.year is None or self.year == other.year
        return self.month == other.month and self.day == other.day and years_agree

    def spoken(self) -> str:
        """As a reply would write it: "April 20, 2025" ("April 20" without a year)."""
        head = f"{calendar.month_name[self.month]} {self.day}"
        return f"{head}, {self.year}" if self.year is not None else head

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}" if self.year is not None \
            else f"--{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class Weekday:
    """A day of the week, 0 = Monday."""

    index: int

    def same(self, other: object) -> bool:
        return isinstance(other, Weekday) and other.index == self.index

    def spoken(self) -> str:
        return calendar.day_name[self.index]

    def __str__(self) -> str:
        return self.spoken()


CalendarAnswer = Day | Weekday


def asks_for(request: str) -> str | None:
    """"weekday" when `request` asks which day of the week, "date" when it asks for a date, else None."""
    if _ASKS_WEEKDAY.search(request):
        return "weekday"
    return "date" if _ASKS_DATE.search(request) else None


def days_in(text: str) -> list[Day]:
    """Every valid date `text` states, in order of position (a span read by one format is not read again)."""
    return [day for _, _, day in day_spans(text)]


def day_spans(text: str) -> list[tuple[int, int, Day]]:
    """`days_in` with where each date is written: (start, end, day), in order of position."""
    found: list[tuple[int, int, Day]] = []
    for pattern in _FORMATS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end, _ in found):
                continue
            day = _day(m)
            if day is not None:
                found.append((m.start(), m.end(), day))
    return sorted(found, key=lambda span: span[0])


def weekdays_in(text: str) -> list[Weekday]:
    """Every weekday name `text` states (full names; "Mon" etc. only when `text` is short, as a printed line is)."""
    pattern = _WEEKDAY if len(text) <= 40 else _LONG_WEEKDAY
    return [Weekday(_WEEKDAYS[m.group(1).lower()]) for m in pattern.finditer(text)]


def printed_answer(line: str, asked: str | None) -> CalendarAnswer | None:
    """The calendar answer a program printed on its last line: the weekday when a weekday was asked, the last date
    when a date was asked, and otherwise a date only when the line is nothing else (so a number question whose
    program prints "45 days since 2025-01-01" stays a number)."""
    if asked == "weekday":
        weekdays = weekdays_in(line)
        if weekdays:
            return weekdays[-1]
    days = days_in(line)
    if not days:
        return None
    if asked is not None:
        return days[-1]
    rest = line
    for pattern in (*_FORMATS, _WEEKDAY):
        rest = pattern.sub(" ", rest)
    return days[-1] if not re.sub(r"[\s,.:;()\-]+|\d{1,2}:\d{2}(?::\d{2})?", "", rest) else None


def stated_answer(text: str, like: CalendarAnswer, request: str = "") -> CalendarAnswer | None:
    """The answer of `like`'s kind that `text` (a reply, its code left out by the caller) arrives at: the last
    weekday it names, or the last date it states that the request did not (the request's own dates are the
    question, not the answer); None when it states none."""
    if isinstance(like, Weekday):
        weekdays = weekdays_in(text)
        return weekdays[-1] if weekdays else None
    given = days_in(request)
    own = [day for day in days_in(text) if not any(day.same(g) for g in given)]
    return own[-1] if own else None


_NUMERIC_DATE = re.compile(r"(?<![\d/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?![\d/])")


def states_day(text: str, want: Day) -> bool:
    """Whether `text` states the day `want` in any format: a written or ISO date, or a numeric one in either
    day/month order ("25/12/2025", "12/25/2025", "25.12.2025") — a reformatted date is still the same day."""
    if any(want.same(day) for day in days_in(text)):
        return True
    for m in _NUMERIC_DATE.finditer(text):
        a, b, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if (want.year is None or year == want.year) and (want.day, want.month) in ((a, b), (b, a)):
            return True
    return False


def _day(m: re.Match[str]) -> Day | None:
    month_text = m.group("month")
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower().rstrip("."))
    day = int(m.group("day"))
    year = int(m.group("year")) if "year" in m.groupdict() and m.group("year") else None
    if month is None or not 1 <= month <= 12:
        return None
    if year is None and month_text[0].islower():
        return None  # "may 3 times": without a year, only a capitalised month name reads as a date
    last = calendar.monthrange(year if year is not None else 2024, month)[1]  # 2024: Feb 29 is a real day
    return Day(month, day, year) if 1 <= day <= last else None


__all__ = ["CalendarAnswer", "Day", "Weekday", "asks_for", "day_spans", "days_in", "printed_answer", "stated_answer",
           "states_day", "weekdays_in"]
