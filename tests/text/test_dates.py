"""Calendar answers in text: the dates and weekdays replies and printed outputs state, and date questions."""

from __future__ import annotations

import pytest

from ghost_agent.text.dates import Day, Weekday, asks_for, days_in, printed_answer, stated_answer, weekdays_in


@pytest.mark.parametrize(("text", "expected"), [
    ("2025-04-20", [Day(4, 20, 2025)]),
    ("2025/4/20 00:00:00", [Day(4, 20, 2025)]),
    ("April 20, 2025", [Day(4, 20, 2025)]),
    ("Apr. 20th 2025", [Day(4, 20, 2025)]),
    ("on the 20th of April, 2025", [Day(4, 20, 2025)]),
    ("Sunday, 20 April 2025.", [Day(4, 20, 2025)]),
    ("between March 1 and April 15", [Day(3, 1), Day(4, 15)]),
    ("100 days after January 10, 2025 is March 10, 2025.", [Day(1, 10, 2025), Day(3, 10, 2025)]),
])
def test_dates_are_read_in_every_common_format_in_order(text: str, expected: list[Day]) -> None:
    assert days_in(text) == expected


@pytest.mark.parametrize("text", ["February 30, 2025", "April 2025", "2025-13-01", "it may 3 times", "pages 3-5",
                                  "version 2024-1", "12/04/2025"])
def test_impossible_partial_and_ambiguous_dates_are_not_read(text: str) -> None:
    assert days_in(text) == []


def test_a_date_without_a_year_matches_the_same_day_of_any_year() -> None:
    assert Day(4, 20).same(Day(4, 20, 2025)) and Day(4, 20, 2025).same(Day(4, 20))
    assert not Day(4, 20, 2024).same(Day(4, 20, 2025)) and not Day(4, 21).same(Day(4, 20))
    assert Day(4, 20, 2025).spoken() == "April 20, 2025" and str(Day(4, 20, 2025)) == "2025-04-20"
    assert not Day(4, 20).same(Weekday(6)) and Weekday(6).spoken() == "Sunday"


@pytest.mark.parametrize(("request_text", "asked"), [
    ("What date is 100 days after January 10, 2025?", "date"),
    ("If today is March 3, 2026, what is the date 45 days from now?", "date"),
    ("When is 90 days after 2025-11-02?", "date"),
    ("On what date does a 30-day trial that starts June 5 end?", "date"),
    ("What day of the week was July 20, 1969?", "weekday"),
    ("Which day of the week does July 4, 2026 fall on?", "weekday"),
    ("How many days are there between March 1 and April 15, 2025?", None),
    ("When was the Magna Carta signed?", None),
    ("What is 15% of 80?", None),
    ("What's the date format used in Germany?", None),
    ("Which date format sorts correctly in filenames?", None),
])
def test_questions_asking_for_a_date_or_a_weekday_are_told_apart(request_text: str, asked: str | None) -> None:
    assert asks_for(request_text) == asked


def test_a_printed_line_is_a_date_answer_only_when_it_is_a_date_or_a_date_was_asked() -> None:
    assert printed_answer("2025-04-20", None) == Day(4, 20, 2025)
    assert printed_answer("Sunday, April 20, 2025", None) == Day(4, 20, 2025)
    assert printed_answer("45", None) is None and printed_answer("45", "date") is None
    assert printed_answer("45 days since 2025-01-01", None) is None  # a number question's output stays a number
    assert printed_answer("The date is 2025-04-20", "date") == Day(4, 20, 2025)
    assert printed_answer("Sunday", "weekday") == Weekday(6) and printed_answer("Sun", "weekday") == Weekday(6)
    assert printed_answer("1969-07-20 Sunday", "weekday") == Weekday(6)


def test_the_stated_answer_skips_the_dates_the_request_gave() -> None:
    request = "What date is 100 days after January 10, 2025?"
    assert stated_answer("That is April 20, 2025, 100 days after January 10, 2025.", Day(4, 20, 2025),
                         request) == Day(4, 20, 2025)
    assert stated_answer("100 days after January 10, 2025.", Day(4, 20, 2025), request) is None
    assert stated_answer("It was a Sunday.", Weekday(0), "") == Weekday(6)
    assert weekdays_in("Mon") == [Weekday(0)] and weekdays_in("a" * 50 + " Mon ") == []
