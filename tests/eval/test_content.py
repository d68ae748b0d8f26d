"""Content checks: a transfer probe's answer graded whatever form it is written in."""

from __future__ import annotations

import pytest

from ghost_agent.eval.content import CONTENT, get_content_check
from ghost_agent.eval.conventions import CHECKS
from ghost_agent.eval.suites.transfer import FAMILIES

EXAMPLES = [(family, probe) for family in FAMILIES for probe in (family.teach, *family.probes)]


def test_every_convention_has_a_content_check() -> None:
    assert set(CONTENT) == set(CHECKS) == {family.check for family in FAMILIES}


@pytest.mark.parametrize(("family", "probe"), EXAMPLES, ids=[p.id for _, p in EXAMPLES])
def test_the_right_answer_passes_in_the_convention_and_in_the_default_form(family, probe) -> None:  # type: ignore[no-untyped-def]
    check = get_content_check(family.check)
    for good in (True, False):
        reply = family.example(probe, good=good)
        if reply:
            assert check(reply, probe.expected).passed, (good, reply)


@pytest.mark.parametrize(("check", "expected", "reply"), [
    ("dmy_dates", ["27/03/2025"], "One week after 20 March 2025 is 27/03/2026."),
    ("dmy_dates", ["27/03/2025"], "It is March 28, 2025."),
    ("currency_code", {"amounts": ["16.00"], "code": "USD"}, "20% of 80 dollars is 18.00 USD."),
    ("kelvin", [272.5, 273.7], "Water freezes at 0 K."),
    ("kelvin", [309.0, 311.0], "About 36 degrees Fahrenheit."),
    ("time_24h", ["16:45"], "That is 4:15 PM."),
    ("time_24h", ["14:00"], "It is 2:00 a.m."),
    ("python_type_hints", None, "```python\ndef f(x: int) -> int\n    return x\n```"),
    ("sql_lowercase", None, "You can count them with a query."),
    ("kebab_file_names", "py", "Call it resize-photos.sh"),
    ("semicolon_list", 5, "Python; Java; Go"),
    ("email_sign_off", ["Cheers, Sam"], "Cheers, Sam"),
])
def test_a_wrong_answer_fails_whatever_its_form(check: str, expected: object, reply: str) -> None:
    assert not get_content_check(check)(reply, expected).passed


def test_numeric_dates_count_in_either_order_and_written_dates_without_a_year_count() -> None:
    dates = get_content_check("dmy_dates")
    assert dates("Expiry: 08/14/2027", ["14/08/2027"]).passed
    assert dates("Expiry: 14.08.2027", ["14/08/2027"]).passed
    assert dates("Halloween is on Saturday, October 31st.", ["31/10/2026"]).passed
    assert dates("Christmas is 2025-12-25.", ["25/12/2025"]).passed
