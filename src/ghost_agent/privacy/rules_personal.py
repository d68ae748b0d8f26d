"""Personal data: e-mail addresses, `.onion` hosts, non-loopback IPv4 addresses, the user name in a home path,
payment card numbers, IBANs and US social security numbers.

Cards, IBANs and SSNs are found in the text's shape (`rule.shape_of`: digits are "9", capitals "A"), where a
digit run has a literal prefix; each candidate is then checked the way the issuer checks it: a card by its
issuer prefix, length and Luhn digit, an IBAN by its country's length and the mod-97 check, an SSN by the
ranges the SSA assigns (and, unless written ddd-dd-dddd, by "SSN" or "social security" just before it).
"""

from __future__ import annotations

import re
from typing import Final

from ghost_agent.privacy.placeholders import CARD, EMAIL, IBAN, IP, ONION, SSN, USER
from ghost_agent.privacy.rule import (
    ALNUM,
    DIGITS,
    IDENT,
    OUR_PLACEHOLDER,
    RECORD_SEP,
    Hit,
    Rule,
    expand_left,
    glued,
)

_HOST_CHARS = ALNUM | frozenset(".-")
_LOCAL_CHARS = ALNUM | frozenset("._%+-")
_PATH_BOUNDARY = ALNUM | frozenset("_.~-")  # "src/home/x" is a project folder, not a home directory
_VERSION_CONTEXT = re.compile(r"(?:\b(?:version|ver|release|build|firmware)\b[\s:=#]*|[=<>~!]=[ \t]*)\Z", re.I)

_ONION_RE = re.compile(r"\.onion(?![a-z0-9-])")


def _onion(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = expand_left(s, m.start(), _HOST_CHARS, floor)
    while start < m.start() and s[start] in ".-":
        start += 1
    return Hit(start, m.end(), ONION) if start < m.start() else None


_EMAIL_RE = re.compile(r"@(?:[A-Za-z0-9-]++\.)+[A-Za-z]{2,63}+")


def _email(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = expand_left(s, m.start(), _LOCAL_CHARS, floor)
    while start < m.start() and s[start] == ".":
        start += 1
    local = s[start:m.start()]
    if not local or local == "git":  # git@github.com is a service account, in every SSH clone URL
        return None
    return Hit(start, m.end(), EMAIL)


_HOME_RE = re.compile(r"/(?:home|Users)/([^/\\\s\"'<>:;,|*?()\[\]{}\x00]++)")


def _home(s: str, m: re.Match[str], floor: int) -> Hit | None:
    if glued(s, m.start(), _PATH_BOUNDARY):
        return None
    name = m.group(1).rstrip(".")  # "/home/alice." ends a sentence
    if not name or name == "Shared":  # /Users/Shared belongs to nobody
        return None
    return Hit(m.start(1), m.start(1) + len(name), USER)


_IP_RE = re.compile(r"\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")


def _ip(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # Anchored on the first dot (a literal prefix); the first octet is found by looking back from it.
    start, end = expand_left(s, m.start(), DIGITS, max(floor, m.start() - 6)), m.end()
    if start > 0 and s[start - 1] == "%" and m.start() - start >= 3:
        start += 2  # "%2010.0.0.1": the "20" belongs to an escaped space
    if not 1 <= m.start() - start <= 3:
        return None
    if glued(s, start, ALNUM) or (start > 0 and s[start - 1] == "."):  # v1.2.3.4, 1.2.3.4.5
        return None
    if end < len(s) and (s[end] in DIGITS or (s[end] == "." and end + 1 < len(s) and s[end + 1] in DIGITS)):
        return None
    octets = [int(s[start:m.start()]), int(m.group(1)), int(m.group(2)), int(m.group(3))]
    if max(octets) > 255 or _keep_ip(octets):
        return None
    context = s[max(0, start - 24):start]
    context = OUR_PLACEHOLDER.sub("_", context[context.rfind(RECORD_SEP) + 1:])  # "<REDACTED_X>=" is no ">="
    if _VERSION_CONTEXT.search(context):  # "version 1.2.3.4", "pkg==1.2.3.4"
        return None
    return Hit(start, end, IP)


def _keep_ip(octets: list[int]) -> bool:
    """Loopback, the unspecified address and netmasks identify nobody."""
    if octets[0] == 127 or octets == [0, 0, 0, 0]:
        return True
    inverted = ~((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) & 0xFFFFFFFF
    return octets[0] == 255 and inverted & (inverted + 1) == 0  # contiguous ones: 255.255.255.0


# --- payment cards ------------------------------------------------------------------------------------------

# 13-19 digits bare, or in groups: 4-4-4-4(-3), 4-4-4-1, Amex/Diners' 4-6-5 / 4-6-4, one separator throughout. Not
# after a digit, unless that digit ends a URL escape ("%204111…").
_CARD_RE = re.compile(rb"9999(?<!(?<!%9)99999)(?:9{9,15}+|(?P<sep>[ -])9{4,6}+(?:(?P=sep)9{1,5}+){1,3}+)(?!9)")


def luhn_ok(digits: str) -> bool:
    """The Luhn check digit of a card number (ISO/IEC 7812) is right."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_issuer_ok(digits: str) -> bool:
    """The number starts like a card of a real scheme and has one of that scheme's lengths."""
    n, p2, p3, p4 = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":  # Visa
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720 or 2200 <= p4 <= 2204:  # Mastercard, Mir
        return n == 16
    if p2 in (34, 37):  # American Express
        return n == 15
    if 300 <= p3 <= 305 or p2 in (36, 38, 39) or p4 == 3095:  # Diners Club
        return 14 <= n <= 19
    if 3528 <= p4 <= 3589:  # JCB
        return 16 <= n <= 19
    return (p2 == 50 or 56 <= p2 <= 69) and n >= 13  # Discover, UnionPay, Maestro, RuPay, ...


def _card(s: str, m: re.Match[bytes], floor: int) -> Hit | int:
    start, end = m.start(), m.end()
    sep = s[m.start("sep")] if m.start("sep") >= 0 else "-"
    before = s[start - 1] if start else " "
    # Not part of a number: a decimal fraction (0.4532…), a phone number (+4915…), a longer sequence of groups.
    if before in "._+" or glued(s, start, ALNUM) or (before == sep and start >= 2 and s[start - 2] in DIGITS):
        return start + 1
    if end < len(s) and (s[end] in IDENT or (s[end] in (".", sep) and end + 1 < len(s) and s[end + 1] in DIGITS)):
        return start + 1
    digits = s[start:end].replace(sep, "")
    if not 13 <= len(digits) <= 19 or not card_issuer_ok(digits) or not luhn_ok(digits):
        return start + 1  # the run may still hold a card after a URL escape's digits ("%204111…")
    return Hit(start, end, CARD)


# --- IBANs -----------------------------------------------------------------------------------------------------

# Country -> IBAN length (SWIFT's IBAN registry).
IBAN_LENGTHS: Final = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
    "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "SO": 23, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}
# Compact, or printed in groups of four separated by single spaces (the last group shorter). Every pattern here
# starts with its literal (lookbehinds after it), so sre scans for it at memchr speed.
_IBAN_RE = re.compile(rb"AA99(?:[A9]{11,30}+|(?: [A9]{4}+){2,7}+(?: [A9]{1,3}+)?)")


def iban_ok(iban: str) -> bool:
    """A compact IBAN has its country's length and passes the ISO 13616 mod-97 check."""
    if IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _iban(s: str, m: re.Match[bytes], floor: int) -> Hit | None:
    start = m.start()
    length = IBAN_LENGTHS.get(s[start:start + 2])
    if length is None or glued(s, start, IDENT):
        return None
    # The IBAN is the first `length` letters and digits of the match; it must end where a group does.
    count, end = 0, start
    while count < length and end < m.end():
        if s[end] != " ":
            count += 1
        end += 1
    if count < length or (end < len(s) and s[end] in IDENT):
        return None
    return Hit(start, end, IBAN) if iban_ok(s[start:end].replace(" ", "")) else None


# --- US social security numbers --------------------------------------------------------------------------------

# Anchored on the last four digits (a run of four is rarer than one of three); the forms are told apart by
# looking back: ddd-dd-dddd, ddd dd dddd, ddddddddd.
_SSN_RE = re.compile(
    rb"9999(?!9)(?:(?<=(?<!(?<!%9)9)999-99-9999)|(?<=(?<!(?<!%9)9)999 99 9999)|(?<=(?<!(?<!%9)9)999999999))"
)
_SSN_CONTEXT = re.compile(r"\bssns?\b|social[ -]security|\bsoc\.? ?sec\b|\bss#")
_SSN_CONTEXT_REACH = 40


def _ssn(s: str, m: re.Match[bytes], floor: int) -> Hit | None:
    end = m.end()
    dashed = s[end - 5] == "-"
    start = end - (9 if s[end - 5] in DIGITS else 11)
    if start < floor or glued(s, start, IDENT) or (start and s[start - 1] in "-./+"):
        return None
    if end < len(s) and (s[end] in IDENT or (s[end] in "-./" and end + 1 < len(s) and s[end + 1] in DIGITS)):
        return None
    digits = s[start:end].replace("-", "").replace(" ", "")
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    if area in (0, 666) or area >= 900 or group == 0 or serial == 0:
        return None
    if not dashed:  # not ddd-dd-dddd: only after the words that say what it is
        window = s[max(0, start - _SSN_CONTEXT_REACH):start]
        window = window[window.rfind(RECORD_SEP) + 1:].lower()
        if _SSN_CONTEXT.search(window) is None:
            return None
    return Hit(start, end, SSN)


EMAIL_RULE = Rule("email", _EMAIL_RE, _email, gate=("@",))
ONION_RULE = Rule("onion", _ONION_RE, _onion, on_lower=True)
HOME_RULE = Rule("home", _HOME_RE, _home)
IPV4_RULE = Rule("ipv4", _IP_RE, _ip)
IBAN_RULE = Rule("iban", _IBAN_RE, _iban, on_shape=True)
CARD_RULE = Rule("payment_card", _CARD_RE, _card, on_shape=True)
SSN_RULE = Rule("us_ssn", _SSN_RE, _ssn, on_shape=True)

__all__ = ["CARD_RULE", "EMAIL_RULE", "HOME_RULE", "IBAN_LENGTHS", "IBAN_RULE", "IPV4_RULE", "ONION_RULE", "SSN_RULE",
           "card_issuer_ok", "iban_ok", "luhn_ok"]
