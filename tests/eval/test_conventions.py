"""Convention checks: each accepts its convention and rejects the form a model writes by default, including
the near misses (a mix of both forms, the right format with the wrong value, the convention's look-alikes)."""

from __future__ import annotations

from typing import Any

import pytest

from ghost_agent.eval.conventions import (
    CHECKS,
    as_verifier,
    conventional_commit,
    currency_code,
    dmy_dates,
    email_sign_off,
    get_check,
    kebab_file_names,
    kelvin,
    python_type_hints,
    semicolon_list,
    sql_lowercase,
    time_24h,
)


def ok(check: Any, reply: str, expected: Any = None) -> None:
    verdict = check(reply, expected)
    assert verdict.passed, f"rejected {reply!r}: {verdict.reason}"
    assert verdict.reason == ""


def no(check: Any, reply: str, expected: Any = None, why: str = "") -> None:
    verdict = check(reply, expected)
    assert not verdict.passed, f"accepted {reply!r}"
    assert verdict.reason and why in verdict.reason


def test_dates_must_be_day_month_year_with_slashes() -> None:
    want = ["25/12/2025"]
    ok(dmy_dates, "25/12/2025", want)
    ok(dmy_dates, "Christmas Day 2025 is on Thursday, 25/12/2025.", want)
    ok(dmy_dates, "From 14/03/2024 to 25/12/2025.", want)  # other dates in the same form are fine
    no(dmy_dates, "December 25, 2025", want, "month name")
    no(dmy_dates, "It is on the 25th of December 2025.", want, "month name")
    no(dmy_dates, "25 Dec 2025", want, "month name")
    no(dmy_dates, "25/12/2025 (December 25, 2025)", want, "month name")
    no(dmy_dates, "2025-12-25", want, "ISO")
    no(dmy_dates, "12/25/2025", want, "day/month")
    no(dmy_dates, "25.12.2025", want, "not DD/MM/YYYY")
    no(dmy_dates, "5/3/2025 and 25/12/2025", want, "not DD/MM/YYYY")
    no(dmy_dates, "24/12/2025", want, "missing 25/12/2025")
    ok(dmy_dates, "You may 2x check: 31/12/2025", ["31/12/2025"])  # "may" is a month only next to a day
    with pytest.raises(ValueError):
        dmy_dates("x", ["2025-12-25"])


def test_money_takes_the_code_after_a_two_decimal_amount_and_no_symbol() -> None:
    want = {"amounts": ["351.00"], "code": "USD"}
    ok(currency_code, "15% of 2340 dollars is 351.00 USD.", want)
    ok(currency_code, "351.00\u00a0USD", want)
    ok(currency_code, "Total: 2,340.00 USD, tip 351.00 USD", {"amounts": ["2340.00", "351.00"], "code": "USD"})
    ok(currency_code, "15% of 2340.00 USD is 351.00 USD", want)
    no(currency_code, "$351.00", want, "symbol")
    no(currency_code, "351.00 USD ($351)", want, "symbol")
    no(currency_code, "US$351.00", want, "symbol")
    no(currency_code, "USD 351.00", want, "before the number")
    no(currency_code, "351 USD", want, "missing 351.00 USD")
    no(currency_code, "351.00 EUR", want, "missing")
    no(currency_code, "350.00 USD", want, "missing")
    ok(currency_code, "45.00 USD", ["45.00"])  # a plain list of amounts: USD


def test_python_functions_need_every_hint() -> None:
    ok(python_type_hints, "```python\ndef avg(xs: list[float]) -> float:\n    return sum(xs) / len(xs)\n```")
    ok(python_type_hints, "def f(*args: int, key: str = 'a', **kw: object) -> None:\n    pass")
    ok(python_type_hints, "```python\nclass A:\n    def m(self, x: int) -> int:\n        return x\n"
       "    @classmethod\n    def c(cls) -> 'A':\n        return cls()\n```")
    no(python_type_hints, "```python\ndef avg(xs):\n    return sum(xs) / len(xs)\n```", why="no type hint on xs")
    no(python_type_hints, "def avg(xs: list) :\n    return 1", why="no return type hint")
    no(python_type_hints, "def f(a: int, *args) -> int:\n    return a", why="args")
    no(python_type_hints, "def outer(a: int) -> int:\n    def inner(b):\n        return b\n    return inner(a)",
       why="inner")
    no(python_type_hints, "```python\nprint(sum([1, 2]) / 2)\n```", why="no function")
    no(python_type_hints, "```python\ndef f(x: int) -> int\n    return x\n```", why="no parsable")
    no(python_type_hints, "def self_named(self, x: int) -> int:\n    return x", why="self")  # not a method


def test_sql_keywords_lowercase_outside_strings() -> None:
    ok(sql_lowercase, "```sql\nselect name from customers where city = 'Paris';\n```")
    ok(sql_lowercase, "select count(*) from orders;")
    ok(sql_lowercase, "Here it is:\n```sql\nselect * from t where note = 'SELECT FROM';\n```\nThe SELECT picks rows.")
    ok(sql_lowercase, "```sql\nselect Name from Customers;\n```")  # identifiers keep their case
    no(sql_lowercase, "```sql\nSELECT name FROM customers WHERE city = 'Paris';\n```", why="SELECT")
    no(sql_lowercase, "```sql\nselect name from customers Where city = 'Paris';\n```", why="Where")
    no(sql_lowercase, "SELECT COUNT(*) FROM orders;", why="COUNT")
    no(sql_lowercase, "You could count the rows with a query.", why="no SQL")


def test_temperatures_in_kelvin_only() -> None:
    boil = [372.5, 373.7]
    ok(kelvin, "Water boils at 373.15 K at sea level.", boil)
    ok(kelvin, "About 373 kelvin.", boil)
    ok(kelvin, "373.15K", boil)
    no(kelvin, "Water boils at 100°C (212°F).", boil, "not kelvin")
    no(kelvin, "373.15 K (100 degrees Celsius)", boil, "not kelvin")
    no(kelvin, "373.15 K, i.e. 100 C", boil, "not kelvin")
    no(kelvin, "It boils at 100 degrees.", boil, "no temperature in kelvin")
    no(kelvin, "It boils at 273.15 K.", boil, "outside")
    with pytest.raises(ValueError):
        kelvin("1 K", "hot")


def test_file_names_in_lowercase_kebab_case() -> None:
    ok(kebab_file_names, "weekly-team-meeting-notes.md", "md")
    ok(kebab_file_names, "How about `resize-photos.py`?", "py")
    ok(kebab_file_names, "Use tax-return-2025.pdf", "pdf")
    no(kebab_file_names, "weekly_team_meeting_notes.md", "md", "not kebab-case")
    no(kebab_file_names, "WeeklyTeamMeetingNotes.md", "md", "not kebab-case")
    no(kebab_file_names, "weekly-notes.md or weekly_notes.md", "md", "not kebab-case")
    no(kebab_file_names, "Weekly-Notes.md", "md", "not kebab-case")
    no(kebab_file_names, "notes.md", "md", "multi-word")
    no(kebab_file_names, "resize-photos.py", "md", "no .md")
    no(kebab_file_names, "Call it the weekly team notes.", "md", "no file name")


def test_times_on_the_24_hour_clock() -> None:
    ok(time_24h, "Put 14:30 in your calendar.", ["14:30"])
    ok(time_24h, "It is 09:05.", ["09:05"])
    ok(time_24h, "It is 9:05.", ["09:05"])
    ok(time_24h, "I am sure: 21:30", ["21:30"])  # "am" as a word is not a clock
    no(time_24h, "Put 2:30 PM in your calendar.", ["14:30"], "12-hour")
    no(time_24h, "14:30 (2:30pm)", ["14:30"], "12-hour")
    no(time_24h, "2:30 p.m.", ["14:30"], "12-hour")
    no(time_24h, "At noon, i.e. 12:00", ["12:00"], "12-hour")
    no(time_24h, "It is 2:30.", ["14:30"], "missing 14:30")


def test_commit_messages_with_a_type_prefix() -> None:
    ok(conventional_commit, "fix: correct a typo in the README")
    ok(conventional_commit, "```\ndocs(readme): fix typo\n```")
    ok(conventional_commit, 'git commit -m "feat: add dark mode setting"')
    ok(conventional_commit, "Here you go:\n\n**perf: speed up the image loader**")
    ok(conventional_commit, "- refactor!: drop the old loader")
    no(conventional_commit, "Fix typo in README", why="type prefix")
    no(conventional_commit, 'git commit -m "Add dark mode setting"', why="type prefix")
    no(conventional_commit, "Fixed: the typo", why="type prefix")


def test_lists_on_one_line_with_semicolons() -> None:
    ok(semicolon_list, "orange; kiwi; strawberry; guava; papaya", 5)
    ok(semicolon_list, "Here are five: orange; kiwi; strawberry; guava; papaya.", {"min_items": 5})
    no(semicolon_list, "1. Orange\n2. Kiwi\n3. Strawberry\n4. Guava\n5. Papaya", 5, "numbered")
    no(semicolon_list, "- Orange\n- Kiwi", 2, "bulleted")
    no(semicolon_list, "orange, kiwi, strawberry, guava, papaya", 5, "semicolon")
    no(semicolon_list, "orange; kiwi; strawberry", 5, "best: 3")
    no(semicolon_list, "Orange\nKiwi\nStrawberry", 3, "semicolon")


def test_emails_signed_off_as_asked() -> None:
    sam = ["Cheers, Sam"]
    ok(email_sign_off, "Hi,\n\nThanks!\n\nCheers,\nSam", sam)
    ok(email_sign_off, "Hi,\n\nThanks!\n\nCheers, Sam.", sam)
    ok(email_sign_off, "Subject: Lunch\n\nHi team,\nLunch Friday?\n\n**Cheers,**\n**Sam**\n\nLet me know if you want "
       "changes.", sam)
    no(email_sign_off, "Hi,\n\nThanks!\n\nBest regards,\n[Your Name]", sam, "placeholder")
    no(email_sign_off, "Hi,\n\nThanks!\n\nBest regards,\nSam", sam, "not signed")
    no(email_sign_off, "Hi,\n\nCheers,\n[Your Name]", sam, "placeholder")
    no(email_sign_off, "Hi Sam,\n\nThanks!", sam, "not signed")


def test_registry_and_verifier_shape() -> None:
    assert set(CHECKS) == {"dmy_dates", "currency_code", "python_type_hints", "sql_lowercase", "kelvin",
                           "kebab_file_names", "time_24h", "conventional_commit", "semicolon_list", "email_sign_off"}
    assert get_check("kelvin") is kelvin
    with pytest.raises(KeyError, match="unknown convention check"):
        get_check("nope")
    verify = as_verifier("time_24h")
    assert verify("14:30", ["14:30"], pass_threshold=1.0) == 1.0 and verify("2:30 PM", ["14:30"]) == 0.0


def test_a_think_section_is_not_graded() -> None:
    ok(time_24h, "<think>2:30 PM is 14:30</think>14:30", ["14:30"])
