"""HTTP credentials: `Authorization:` header values (headers, JSON, curl `-H`) and a bare `Bearer <token>`."""

from __future__ import annotations

import re

from ghost_agent.privacy.placeholders import TOKEN
from ghost_agent.privacy.rule import DIGITS, GLUED_LOWER, Hit, Rule, has_upper_or_digit

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


AUTH_HEADER_RULE = Rule("auth_header", _AUTH_HEADER_RE, _auth_header, on_lower=True, gate=("authorization",))
BEARER_RULE = Rule("bearer", _BEARER_RE, _bearer, on_lower=True)

__all__ = ["AUTH_HEADER_RULE", "BEARER_RULE"]
