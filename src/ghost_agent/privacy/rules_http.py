"""HTTP credentials: `Authorization:` header values (headers, JSON, curl `-H`), a bare `Bearer <token>`, and
cookie values (`Cookie:` / `Set-Cookie:` headers, `{"Cookie": …}`, `cookies={"sid": …}`, curl `--cookie`).

A cookie's value is a session token more often than not, so every value is replaced and the names are kept
(`Cookie: sid=<REDACTED_TOKEN>; theme=<REDACTED_TOKEN>`); Set-Cookie attributes (`Path=/`, `Max-Age=…`) stay.
"""

from __future__ import annotations

import re

from ghost_agent.privacy.placeholders import TOKEN
from ghost_agent.privacy.rule import (
    DIGITS,
    GLUED_LOWER,
    IDENT,
    Hit,
    Rule,
    glued,
    has_upper_or_digit,
    is_inert_value,
)

_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "bot"})
# Values are token68 (RFC 9110): they end where a token cannot go on, so they never swallow what follows.
_AUTH_HEADER_RE = re.compile(
    r"authorization\\?[\"']?[ \t]*+[:=][ \t]*+\\?[\"']?[ \t]*+"
    r"(?:(?:bearer|basic|token|digest|bot)[ \t]++([a-z0-9._~+/-]++=*+)|([a-z0-9._~+/-]++=*+))"
)


def _auth_header(s: str, m: re.Match[str], floor: int) -> Hit | int:
    if m.start(1) >= 0:
        return Hit(m.start(1), m.end(1), TOKEN)
    value = s[m.start(2):m.end(2)]
    # No scheme: "Authorization: Bearer <REDACTED_TOKEN>" backtracks to here with the scheme as the value;
    # otherwise only token-looking values, so prose ("authorization: required") survives. A rejected value
    # may start the next header ("authorization: Authorization: …").
    if value.lower() in _SCHEMES or len(value) < 12 or not any(c in DIGITS for c in value):
        return m.start(2)
    return Hit(m.start(2), m.end(2), TOKEN)


_BEARER_RE = re.compile(rf"bearer(?<!{GLUED_LOWER}bearer)[ \t]++([a-z0-9._~+/=-]{{16,}}+)")


def _bearer(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # A bare "Bearer <token>" outside a header: a token has digits or capitals, prose does not.
    return Hit(m.start(1), m.end(1), TOKEN) if has_upper_or_digit(s[m.start(1):m.end(1)]) else None


# "Cookie: …" and "Set-Cookie: …" (headers, curl -H), "Cookie": "…" / 'Cookie': '…' / headers["Cookie"] = "…"
# (JSON, dicts, JSON-escaped), document.cookie = "…", curl --cookie "…"; and a dict of cookies:
# cookies={"sid": "…"}, "cookies": {"sid": "…"}. The literal comes first, for sre's fast prefix scan.
_COOKIE_RE = re.compile(
    r"cookie(?P<dict>s)?"
    r"(?:\\?[\"']?\]?[ \t]*+[:=][ \t]*+|(?<=--cookie)[ \t]++)"
    r"(?P<open>\\?[\"'`]|(?:dict\()?\{)?"
)
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
                                "partitioned", "version", "comment"})
_NAME_STOP = frozenset("=;, \t\r\n\"'\\\x00<>{}()[]`")
_VALUE_STOP = frozenset("; \t\r\n\"'\\,\x00`")
_QUOTED_VALUE = re.compile(r'"[^"\s;,\\\x00]*+"')
_MAX_PAIRS = 64


def cookie_values(
    s: str, pos: int, end: int, *, first_only: bool = False, quoted: bool = True
) -> tuple[list[tuple[int, int]], int]:
    """The spans of the values in a cookie string `name=value; name2=value2` starting at `pos` (up to `end`),
    and where the string stops: at a character no cookie holds (a quote, a line break, a backslash), or at a
    part that is not `name=value`. Values that are inert (placeholders, `$VAR`) or Set-Cookie attributes
    (`Path`, `Expires`) are not listed. `first_only` reads one pair (a Set-Cookie header's cookie); `quoted`
    allows `name="value"` (not inside a double-quoted string, where the quote ends the string)."""
    spans: list[tuple[int, int]] = []
    for _ in range(_MAX_PAIRS):
        while pos < end and s[pos] in " \t":
            pos += 1
        name_start = pos
        while pos < end and s[pos] not in _NAME_STOP:
            pos += 1
        if pos == name_start or pos >= end or s[pos] != "=":
            return spans, name_start
        name = s[name_start:pos].lower()
        pos += 1
        if quoted and (q := _QUOTED_VALUE.match(s, pos, end)) is not None:
            value_start, value_end, pos = pos + 1, q.end() - 1, q.end()
        else:
            value_start = pos
            while pos < end and s[pos] not in _VALUE_STOP:
                pos += 1
            value_end = pos
        value = s[value_start:value_end]
        if value and name not in _COOKIE_ATTRIBUTES and not is_inert_value(value):
            spans.append((value_start, value_end))
        if first_only or pos >= end or s[pos] != ";":
            return spans, pos
        pos += 1
    return spans, pos


_DICT_PAIR = re.compile(r"[ \t\r\n]*+(\\?[\"'])([^\"'\\\r\n\x00]{1,128}+)\1[ \t]*+:[ \t]*+(\\?[\"'])"
                        r"([^\"'\\\r\n\x00]*+)\3[ \t\r\n]*+,?")


def _dict_values(s: str, pos: int) -> tuple[list[tuple[int, int]], int]:
    """The value spans of `{"name": "value", …}` entries starting at `pos` (just after the brace)."""
    spans: list[tuple[int, int]] = []
    for _ in range(_MAX_PAIRS):
        m = _DICT_PAIR.match(s, pos)
        if m is None:
            break
        if m.group(4) and not is_inert_value(m.group(4)):
            spans.append((m.start(4), m.end(4)))
        pos = m.end()
    return spans, pos


def _cookie(s: str, m: re.Match[str], floor: int) -> Hit | int | None:
    start = m.start()
    set_cookie = start >= 4 and s[start - 4:start].lower() == "set-"
    if glued(s, start - 4 if set_cookie else start, IDENT):
        return None  # my_cookie, fortune_cookies
    opener = m.group("open") or ""
    if m.start("dict") >= 0:
        if not opener.endswith("{"):
            return None  # "cookies: 3", "cookies = load()": a count, code
        spans, stop = _dict_values(s, m.end())
    elif opener.endswith("{"):
        return None
    else:
        spans, stop = cookie_values(s, m.end(), len(s), first_only=set_cookie, quoted=not opener.endswith('"'))
    if not spans:
        return max(stop, m.end())
    return spans_hit(s, [(a, b, TOKEN) for a, b in spans], resume=stop)


def spans_hit(s: str, spans: list[tuple[int, int, str]], resume: int = -1) -> Hit:
    """One `Hit` replacing several spans (sorted, disjoint) of `s`, each by its placeholder: from the first
    span's start to the last one's end, the text between them kept."""
    out, last = [], spans[0][0]
    for start, end, placeholder in spans:
        out += [s[last:start], placeholder]
        last = end
    return Hit(spans[0][0], last, "".join(out), resume=resume)


AUTH_HEADER_RULE = Rule("auth_header", _AUTH_HEADER_RE, _auth_header, on_lower=True, gate=("authorization",))
BEARER_RULE = Rule("bearer", _BEARER_RE, _bearer, on_lower=True)
COOKIE_RULE = Rule("cookie", _COOKIE_RE, _cookie, on_lower=True, gate=("cookie",))

__all__ = ["AUTH_HEADER_RULE", "BEARER_RULE", "COOKIE_RULE", "cookie_values", "spans_hit"]
