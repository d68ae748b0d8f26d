"""Personal data: e-mail addresses, `.onion` hosts, non-loopback IPv4 addresses, the user name in a home path."""

from __future__ import annotations

import re

from ghost_agent.privacy.placeholders import EMAIL, IP, ONION, USER
from ghost_agent.privacy.rule import (
    ALNUM,
    DIGITS,
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


EMAIL_RULE = Rule("email", _EMAIL_RE, _email, gate=("@",))
ONION_RULE = Rule("onion", _ONION_RE, _onion, on_lower=True)
HOME_RULE = Rule("home", _HOME_RE, _home)
IPV4_RULE = Rule("ipv4", _IP_RE, _ip)

__all__ = ["EMAIL_RULE", "HOME_RULE", "IPV4_RULE", "ONION_RULE"]
