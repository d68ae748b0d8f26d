"""Preferences of a known kind, read from the user's words and applied to a reply by rule."""

from __future__ import annotations

import pytest

from ghost_agent.text.format_rules import FormatRule, apply_rules, rule_for, rules_for


@pytest.mark.parametrize(("preference", "rule"), [
    ("I use the 24-hour clock, not AM/PM.", FormatRule("clock", "24")),
    ("times in 24h please", FormatRule("clock", "24")),
    ("Use AM/PM, not the 24 hour clock.", FormatRule("clock", "12")),
    ("I write dates as DD/MM/YYYY.", FormatRule("date", "DD/MM/YYYY")),
    ("dates like yyyy-mm-dd", FormatRule("date", "YYYY-MM-DD")),
    ("Always give dates in ISO 8601.", FormatRule("date", "YYYY-MM-DD")),
    ("Give me temperatures in kelvin, not Celsius or Fahrenheit.", FormatRule("temperature", "K")),
    ("I'm American: temperatures in Fahrenheit.", FormatRule("temperature", "F")),
    ("I want money written with the currency code after the number, like 12.50 USD.", FormatRule("money", "after:2")),
    ("Write amounts as EUR 12.5, code first.", FormatRule("money", "before:1")),
    ("I sign my emails 'Cheers, Sam', not 'Best regards, [Your Name]'.", FormatRule("sign_off", "Cheers, Sam")),
    ('Sign off with "Thanks, Ana"', FormatRule("sign_off", "Thanks, Ana")),
])
def test_a_known_kind_is_read_from_the_users_words(preference: str, rule: FormatRule) -> None:
    assert rule_for(preference) == rule


@pytest.mark.parametrize("preference", [
    "I use kebab-case for file names.",
    "Commit messages start with a type prefix like fix: or feat:.",
    "our style guide wants SQL keywords in lowercase",
    "Not in Celsius or Fahrenheit.",  # only what is not wanted: no unit to convert to
    "Sign as Sam.",  # no sign-off quoted
])
def test_anything_else_is_left_to_the_model(preference: str) -> None:
    assert rule_for(preference) is None


def test_one_rule_per_kind_and_the_rest_in_order() -> None:
    rules, rest = rules_for(["I use the 24-hour clock.", "Sign as Sam.", "Use AM/PM.", "lists on one line"])
    assert rules == [FormatRule("clock", "24")] and rest == ["Sign as Sam.", "lists on one line"]


@pytest.mark.parametrize(("reply", "expected"), [
    ("It is 2:00 p.m.", "It is 14:00."),
    ("Meet at 9am or at 12 a.m. tonight.", "Meet at 09:00 or at 00:00 tonight."),
    ("at 7:30 PM, then 11.15am", "at 19:30, then 11:15"),
    ("Set `alarm = '5pm'` for 5 pm.\n```\nat 6pm\n```", "Set `alarm = '5pm'` for 17:00.\n```\nat 6pm\n```"),
    ("in 3 pmol of it; 1:30 pm", "in 3 pmol of it; 13:30"),
])
def test_times_are_put_on_the_24_hour_clock(reply: str, expected: str) -> None:
    assert FormatRule("clock", "24").apply(reply) == expected


def test_times_are_put_on_the_12_hour_clock_only_when_they_read_as_24_hour() -> None:
    assert FormatRule("clock", "12").apply("at 14:30, 09:15 or 10:30") == "at 2:30 PM, 9:15 AM or 10:30"


@pytest.mark.parametrize(("reply", "request_text", "expected"), [
    ("December 25, 2025", "", "25/12/2025"),
    ("It is on December 31st.", "New Year's Eve 2025?", "It is on 31/12/2025."),
    ("It is on December 31st.", "New Year's Eve?", "It is on December 31st."),  # no year to give it
    ("From 2026-03-03 to the 17th of April, 2026.", "", "From 03/03/2026 to 17/04/2026."),
])
def test_dates_are_put_in_the_users_pattern(reply: str, request_text: str, expected: str) -> None:
    assert FormatRule("date", "DD/MM/YYYY").apply(reply, request_text) == expected


def test_other_date_patterns() -> None:
    assert FormatRule("date", "YYYY-MM-DD").apply("July 4, 1976") == "1976-07-04"
    assert FormatRule("date", "MM/DD/YY").apply("4 July 1976") == "07/04/76"
    assert FormatRule("date", "D.M.YYYY").apply("July 4, 1976") == "4.7.1976"


@pytest.mark.parametrize(("reply", "expected"), [
    ("Water freezes at 0 °C (32 °F).", "Water freezes at 273.15 K."),
    ("About 37 degrees Celsius (98.6 degrees Fahrenheit).", "About 310.15 K."),
    ("Around 20-22°C.", "Around 293.15-295.15 K."),
    ("Bake at 425°F.", "Bake at 491.48 K."),
    ("It is 300 K already.", "It is 300 K already."),
    ("Class C amplifier, 5 C batteries, 3 F capacitor", "Class C amplifier, 5 C batteries, 3 F capacitor"),
])
def test_temperatures_are_converted_not_relabelled(reply: str, expected: str) -> None:
    assert FormatRule("temperature", "K").apply(reply) == expected


def test_a_bare_k_is_kelvin_only_as_a_unit_after_a_space() -> None:
    rule = FormatRule("temperature", "C")
    assert rule.apply("It is 300 K.") == "It is 26.85 °C."
    assert rule.apply("I ran a 5K race; a 10 k salary.") == "I ran a 5K race; a 10 k salary."


def test_celsius_and_fahrenheit_targets() -> None:
    assert FormatRule("temperature", "C").apply("Bake at 425°F or 491.48 K.") == "Bake at 218.33 °C."
    assert FormatRule("temperature", "F").apply("Water boils at 100 degrees Celsius.") == "Water boils at 212 °F."


@pytest.mark.parametrize(("reply", "expected"), [
    ("20% of 80 dollars is $16.", "20% of 80.00 USD is 16.00 USD."),
    ("It costs $1,234.5 or 3 euros.", "It costs 1,234.50 USD or 3.00 EUR."),
    ("Pay USD 12 now.", "Pay 12.00 USD now."),
    ("Run `echo $5` in bash; it prints 5 dollars.", "Run `echo $5` in bash; it prints 5.00 USD."),
])
def test_money_is_written_with_the_code_after_the_number(reply: str, expected: str) -> None:
    assert FormatRule("money", "after:2").apply(reply) == expected


def test_a_request_naming_the_form_itself_wins() -> None:
    assert FormatRule("temperature", "K").apply("300 K is 26.85 °C.", "Convert 300 K to Celsius") \
        == "300 K is 26.85 °C."
    assert FormatRule("clock", "24").apply("2:30 PM", "What time is it, in am/pm?") == "2:30 PM"
    assert FormatRule("date", "DD/MM/YYYY").apply("2025-12-25", "Give the date as YYYY-MM-DD.") == "2025-12-25"


def test_rules_apply_in_turn() -> None:
    rules = [FormatRule("clock", "24"), FormatRule("date", "DD/MM/YYYY")]
    assert apply_rules("The call is on March 3, 2026 at 4 pm.", rules) == "The call is on 03/03/2026 at 16:00."


@pytest.mark.parametrize(("reply", "request_text", "expected"), [
    ("It starts at 4:30 in the afternoon.", "", "It starts at 16:30."),
    ("Call at 7 in the morning or 9 tonight.", "", "Call at 07:00 or 21:00."),
    ("Half past seven in the evening is 7:30.", "What time is half past seven in the evening?",
     "Half past seven in the evening is 19:30."),
    ("It opens at 7:30.", "When does it open in the morning?", "It opens at 7:30."),  # nothing says afternoon
    ("It opens at 7:30.", "When does it open?", "It opens at 7:30."),
    ("Between 9:30 am and 5:30.", "Office hours in the afternoon and morning?", "Between 09:30 and 5:30."),
])
def test_a_time_said_with_its_part_of_the_day_is_put_on_the_24_hour_clock(reply: str, request_text: str,
                                                                           expected: str) -> None:
    assert FormatRule("clock", "24").apply(reply, request_text) == expected


@pytest.mark.parametrize(("reply", "request_text", "expected"), [
    ("So 20% of 80 dollars is \\(\\boxed{16}\\).", "How much is 20% of 80 dollars?",
     "So 20% of 80.00 USD is \\(\\boxed{16.00 USD}\\)."),
    ("\\[ 12 \\text{ dollars/book} \\times 3 = 36 \\text{ dollars} \\]", "3 books at $12",
     "\\[ 12 \\text{ dollars/book} \\times 3 = 36.00 USD \\]"),
    ("\\boxed{351 \\text{ USD}}", "15% of 2340 dollars", "\\boxed{351.00 USD}"),
    ("That is \\boxed{30} each.", "Split 90 euros three ways.", "That is \\boxed{30.00 EUR} each."),
    ("x = \\boxed{5}", "What is 2 + 3?", "x = \\boxed{5}"),  # not a question about money
])
def test_the_boxed_answer_to_a_money_question_is_an_amount(reply: str, request_text: str, expected: str) -> None:
    assert FormatRule("money", "after:2").apply(reply, request_text) == expected


@pytest.mark.parametrize(("reply", "expected"), [
    ("Subject: Heating\n\nHi,\n\nWhen will it be fixed?\n\nBest regards,\n[Your Name]",
     "Subject: Heating\n\nHi,\n\nWhen will it be fixed?\n\nCheers,\nSam"),
    ("Hi,\n\nThanks.\n\nCheers, Sam\n\nBest regards,\n\n[Your Name]", "Hi,\n\nThanks.\n\nCheers, Sam"),
    ("Dear Bob,\n\nBody.\n\nSincerely,\nJohn Smith\n\nWant changes?",
     "Dear Bob,\n\nBody.\n\nCheers,\nSam\n\nWant changes?"),
    ("Hi team,\n\nLunch on Friday?", "Hi team,\n\nLunch on Friday?\n\nCheers,\nSam"),
    ("Hi,\n\nSee you.\n\nBest regards,\n\n[Your Name]", "Hi,\n\nSee you.\n\nCheers,\nSam"),
    ("The answer is 42.\n\nThanks!", "The answer is 42.\n\nThanks!"),  # not an email
    ("Use:\n```\nHi,\nBest regards,\n[Your Name]\n```", "Use:\n```\nHi,\nBest regards,\n[Your Name]\n```"),
])
def test_an_email_ends_with_the_users_sign_off(reply: str, expected: str) -> None:
    assert FormatRule("sign_off", "Cheers, Sam").apply(reply) == expected
