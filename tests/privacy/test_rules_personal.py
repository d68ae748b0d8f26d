"""Payment cards, IBANs and US SSNs (privacy/rules_personal.py): issuer checks, not shapes alone."""

from __future__ import annotations

import random

import pytest

from ghost_agent.privacy.redact import redact_text
from ghost_agent.privacy.rules_personal import card_issuer_ok, iban_ok, luhn_ok
from tests.secret_kinds import make_secret

CARDS = [
    ("card 4111111111111111 exp 12/26", "card <REDACTED_CARD> exp 12/26"),  # Visa
    ("4111 1111 1111 1111", "<REDACTED_CARD>"),
    ("4111-1111-1111-1111.", "<REDACTED_CARD>."),
    ("mc 5555555555554444, 2223003122003222", "mc <REDACTED_CARD>, <REDACTED_CARD>"),  # Mastercard, 2-series
    ("amex 3782 822463 10005 ok", "amex <REDACTED_CARD> ok"),  # 4-6-5
    ("amex 3714-496353-98431", "amex <REDACTED_CARD>"),
    ("diners 3056 930902 5904", "diners <REDACTED_CARD>"),  # 4-6-4
    ("discover 6011111111111117 jcb 3530111333300000", "discover <REDACTED_CARD> jcb <REDACTED_CARD>"),
    ("unionpay 6212345678901232, 19 digits: 4000 0000 0000 0000 006",
     "unionpay <REDACTED_CARD>, 19 digits: <REDACTED_CARD>"),
    ('{"card": "4242424242424242"}', '{"card": "<REDACTED_CARD>"}'),
    ("an old 13-digit visa: 4222 2222 2222 2", "an old 13-digit visa: <REDACTED_CARD>"),
    ("\\n4242424242424242\\n and %204242424242424242%20", "\\n<REDACTED_CARD>\\n and %20<REDACTED_CARD>%20"),
]
CARD_NEGATIVES = [
    "order 4111111111111112 shipped",  # fails Luhn
    "id 1234567812345670 and 9999999999999995",  # Luhn-valid, no card scheme starts with 1 or 9
    "epoch 1712345678901 and 1712345678901234567",  # ms and ns timestamps
    "isbn 9783161484100",
    "mean=0.4532015112830366 and -4532015112830366.5",  # a decimal fraction
    "call +4915112345678",  # a phone number
    "4111 1111 1111 1111 1111 1111 is a row of a table",  # a longer run of groups
    "x4111111111111111 and 4111111111111111abc and 4111111111111111_v2",  # glued to a word
    "version 4.1111111111111111",
    "5555 5555 5555 4444 5555 is one table row",
    "41111111111111111111111 is too long",
]


@pytest.mark.parametrize(("text", "expected"), CARDS)
def test_card_numbers_are_replaced(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", CARD_NEGATIVES)
def test_numbers_that_are_not_cards_stay(text: str) -> None:
    assert redact_text(text) == text


def test_luhn_and_issuer_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert card_issuer_ok("378282246310005") and not card_issuer_ok("3782822463100050")  # Amex has 15 digits
    assert card_issuer_ok("5555555555554444") and not card_issuer_ok("5555555555554")
    assert not card_issuer_ok("1234567812345670") and not card_issuer_ok("7234567812345670")


def test_random_sixteen_digit_ids_that_fail_luhn_are_never_cards() -> None:
    rng = random.Random(5)
    checked = 0
    while checked < 2000:
        number = rng.choice("23456") + "".join(rng.choice("0123456789") for _ in range(15))
        if luhn_ok(number):
            continue
        checked += 1
        for text in (number, f"id {number}", " ".join(number[i:i + 4] for i in range(0, 16, 4))):
            assert redact_text(text) == text


IBANS = [
    ("IBAN: DE89 3704 0044 0532 0130 00", "IBAN: <REDACTED_IBAN>"),
    ("pay to DE89370400440532013000.", "pay to <REDACTED_IBAN>."),
    ("GB82WEST12345698765432 and GB82 WEST 1234 5698 7654 32", "<REDACTED_IBAN> and <REDACTED_IBAN>"),
    ("NL91 ABNA 0417 1643 00 ok", "<REDACTED_IBAN> ok"),
    ("FR14 2004 1010 0505 0001 3M02 606", "<REDACTED_IBAN>"),
    ("CH93 0076 2011 6238 5295 7 (Zürich)", "<REDACTED_IBAN> (Zürich)"),
    ('{"iban": "BE68539007547034"}', '{"iban": "<REDACTED_IBAN>"}'),
]
IBAN_NEGATIVES = [
    "DE89 3704 0044 0532 0130 01",  # mod 97 fails
    "DE89370400440532013000123",  # the wrong length for DE
    "ZZ89370400440532013000",  # no such country
    "SHA256 UTF8 ISO8601 TLS13 and GB22 grew",
    "XDE89370400440532013000 and de89370400440532013000",  # glued, lowercase
]


@pytest.mark.parametrize(("text", "expected"), IBANS)
def test_ibans_are_replaced(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", IBAN_NEGATIVES)
def test_what_is_not_an_iban_stays(text: str) -> None:
    assert redact_text(text) == text


def test_generated_ibans_pass_the_check_and_are_replaced() -> None:
    rng = random.Random(2)
    for kind in ("iban_de_grouped", "iban_gb_compact"):
        for _ in range(200):
            secret = make_secret(kind, rng)
            assert iban_ok(secret.text.replace(" ", ""))
            assert redact_text(f"send it to {secret.text} today") == "send it to <REDACTED_IBAN> today"


SSNS = [
    ("SSN 123-45-6789", "SSN <REDACTED_SSN>"),
    ("her number is 078-05-1120.", "her number is <REDACTED_SSN>."),  # the dashed form stands alone
    ("ssn: 123456789", "ssn: <REDACTED_SSN>"),
    ("Social Security number 123 45 6789", "Social Security number <REDACTED_SSN>"),
    ("SSNs on file: 219099999 and 123-45-6789", "SSNs on file: <REDACTED_SSN> and <REDACTED_SSN>"),
    ("%20123-45-6789%20", "%20<REDACTED_SSN>%20"),
]
SSN_NEGATIVES = [
    "000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000",  # never issued
    "part 123-45-67890 and 0123-45-6789 and A123-45-6789 and 123-45-6789-1",  # longer runs, glued
    "phone 555-123-4567, date 2024-01-15, zip 94103-1234",
    "the id is 123456789 and 123 45 6789",  # no dashes and no words saying it is an SSN
    "version 1.123-45-6789",
]


@pytest.mark.parametrize(("text", "expected"), SSNS)
def test_ssns_are_replaced(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", SSN_NEGATIVES)
def test_what_is_not_an_ssn_stays(text: str) -> None:
    assert redact_text(text) == text
