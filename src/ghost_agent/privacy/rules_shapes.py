"""Shape rules: a secret recognisable by itself (a vendor prefix, a key block, a JWT), wherever it stands.

Left boundaries are lookbehinds placed after the literal prefix: sre keeps its fast prefix scan, and a
candidate glued to a word is skipped inside the regex instead of swallowing a real key right after it.
The vendor table (`redact_vendors.VENDOR_TOKENS`) is data; `VENDOR_RULES` compiles it. Shapes without a prefix
of their own (Telegram and Discord bot tokens, Azure AD client secrets) are anchored on an inner literal; Discord's,
a dot, is searched with the vendor family of "." (one scan of the text for both).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import partial

from ghost_agent.privacy.placeholders import API_KEY, AWS_KEY, PRIVATE_KEY, SECRET, TOKEN
from ghost_agent.privacy.redact_vendors import VENDOR_TOKENS, VendorToken
from ghost_agent.privacy.rule import (
    ALNUM,
    DIGITS,
    GLUED,
    Hit,
    Rule,
    after_escape,
    expand_left,
    glued,
    has_upper_or_digit,
    rare,
)

_SK_RE = re.compile(
    rf"sk(?:-(?<!{GLUED}sk-)(ant-|proj-|svcacct-|admin-)?|_(?<!{GLUED}sk_)(live|test)_)[A-Za-z0-9_-]{{16,}}+"
)


def _sk(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # A bare "sk-" key body is random, so it has capitals or digits; "sk-internationalization-of-things" not.
    known = m.start(1) >= 0 or m.start(2) >= 0
    return Hit(m.start(), m.end(), API_KEY) if known or has_upper_or_digit(m.group()[3:]) else None


_SLACK_RE = re.compile(rf"x(?:ox[abprse]|app)-(?<!{GLUED}x(?:ox[abprse]|app)-)[A-Za-z0-9-]{{8,}}+")


def _slack(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return Hit(m.start(), m.end(), API_KEY) if any(c in DIGITS for c in m.group()) else None  # tokens hold ids


# Two patterns rather than one alternation: each keeps a two-letter literal prefix for sre's fast scan.
_GITHUB_RE = re.compile(rf"gh[pousr]_(?<!{GLUED}gh[pousr]_)[A-Za-z0-9]{{36,}}+")
_GITHUB_PAT_RE = re.compile(rf"github_pat_(?<!{GLUED}github_pat_)[A-Za-z0-9_]{{22,}}+")


def _whole(s: str, m: re.Match[str], floor: int) -> Hit:
    return Hit(m.start(), m.end(), API_KEY)


# An access key id, and the first 40-char mixed-case base64 token within 200 characters after it (the
# credentials CSV, "AKIA… wJalr…"): alone, such a token is indistinguishable from other base64.
_AWS_RE = re.compile(
    r"A[KS]IA(?<!(?<!\\)(?<!%[0-9A-Fa-f])[A-Z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Z0-9])"
    r"(?:((?:(?!A[KS]IA)[^\x00]){1,200}?)(?<![A-Za-z0-9/+=])"
    r"((?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=]))?"
)


def _aws(s: str, m: re.Match[str], floor: int) -> Hit:
    if m.start(2) < 0:
        return Hit(m.start(), m.end(), AWS_KEY)
    return Hit(m.start(), m.end(), AWS_KEY + m.group(1) + SECRET)


# A PEM private key block (PKCS#1/#8, EC, DSA, OpenSSH, ENCRYPTED, PGP): the whole block, from BEGIN to END,
# in real lines or JSON-escaped ones. The body stops before any "-----"; a block without its END line (cut short)
# is redacted through the end of its body when that body holds key material, so only a mention of the marker
# (`if line.startswith("-----BEGIN RSA PRIVATE KEY-----")`) survives.
_PEM_RE = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>(?:[A-Za-z0-9+/=\s\\:,.]|-(?!----))*+)"
    r"(?P<end>-----END[ A-Z0-9]{0,40}-----)?"
)
_PEM_MIN_BODY = 16  # alphanumerics that make an unterminated body key material rather than a template


def _pem(s: str, m: re.Match[str], floor: int) -> Hit | None:
    if m.start("end") >= 0:
        return Hit(m.start(), m.end(), PRIVATE_KEY)
    end = m.end("body")
    while end > m.start("body") and s[end - 1].isspace():
        end -= 1
    body = s[m.start("body"):end]
    if sum(c in ALNUM for c in body) < _PEM_MIN_BODY:
        return None
    return Hit(m.start(), end, PRIVATE_KEY)


# A JSON Web Token (JWS, or the first parts of a JWE): a base64url JSON header, then dot-separated segments.
_JWT_RE = re.compile(rf"eyJ(?<!{GLUED}eyJ)[A-Za-z0-9_-]{{8,}}+(?:\.[A-Za-z0-9_-]*+){{1,4}}")
_JOSE_KEYS = (b'"alg"', b'"typ"', b'"enc"', b'"kid"', b'"cty"')


def _jwt(s: str, m: re.Match[str], floor: int) -> Hit | None:
    token = m.group()
    header, _, rest = token.partition(".")
    cut = len(header) - len(header) % 4
    try:
        decoded = base64.urlsafe_b64decode(header[:cut])
    except (binascii.Error, ValueError):
        decoded = b""
    # A JOSE header proves it; else a second JSON segment ("eyJ…" or "{}" = "e30") must follow.
    if not any(key in decoded for key in _JOSE_KEYS) and not rest.startswith(("eyJ", "e30")):
        return None
    end = m.end()
    while s[end - 1] == ".":  # the full stop of a sentence ending with a token
        end -= 1
    return Hit(m.start(), end, TOKEN)


# A Discord bot token: the bot's user id (a 17-20 digit snowflake) in base64, a 6-character timestamp, an HMAC:
# "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs". Anchored on the dot before the timestamp.
_DISCORD_RE = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}+(?![A-Za-z0-9_-])")
_B64URL = ALNUM | frozenset("_-")


def _discord_at(s: str, dot: int, floor: int) -> Hit | None:
    """A Discord bot token whose timestamp starts after the dot at `dot`, if one is there."""
    m = _DISCORD_RE.match(s, dot)
    if m is None:
        return None
    start = after_escape(s, expand_left(s, m.start(), _B64URL, max(floor, m.start() - 31)))
    if not 23 <= m.start() - start <= 28 or s[start] not in "MNO" or glued(s, start, _B64URL):
        return None
    head = s[start:m.start()]
    try:
        user_id = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return None
    return Hit(start, m.end(), TOKEN) if user_id.isdigit() and 17 <= len(user_id) <= 20 else None


_SEPARATORS = "_-."
# Shapes without a prefix that are anchored on a separator join its family's search: (lookahead, handler).
_ANCHORED: dict[str, tuple[str, Callable[[str, re.Match[str], int], Hit | None]]] = {
    ".": (r"(?=[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27})", lambda s, m, floor: _discord_at(s, m.start(), floor)),
}


def _vendor_rules() -> tuple[Rule[str], ...]:
    """The vendor table as rules. A literal with a separator ("hf_", "GOCSPX-", "hvs.") joins the family of its
    first separator: one search for that character, then lookbehinds for the literals' heads, instead of one
    scan of the text per literal (that made redaction twice as slow). The others get a rule each, gated by their
    rarest character."""
    singles: list[Rule[str]] = []
    families: dict[str, list[tuple[str, int, re.Pattern[str], VendorToken]]] = {}
    for spec in VENDOR_TOKENS:
        for literal in spec.literals:
            escaped = re.escape(literal)
            full = re.compile(f"{escaped}(?<!{GLUED}{escaped}){spec.rest}")
            sep = next((i for i, c in enumerate(literal) if c in _SEPARATORS), -1)
            if sep < 0:
                singles.append(Rule(spec.name, full, partial(_vendor_family, [("", len(literal), full, spec)], None),
                                    gate=(rare(literal),)))
            else:
                families.setdefault(literal[sep], []).append((literal[:sep + 1], len(literal), full, spec))
    rules = singles
    for char, members in families.items():
        heads = sorted({head for head, _, _, _ in members})
        branches = [f"(?<={re.escape(h)})" for h in heads]
        anchored = _ANCHORED.get(char)
        if anchored is not None:
            branches.append(anchored[0])
        regex = re.compile(re.escape(char) + "(?:" + "|".join(branches) + ")")
        handler = partial(_vendor_family, members, anchored[1] if anchored else None)
        rules.append(Rule(f"vendor_tokens{char}", regex, handler, gate=(char,)))
    return tuple(rules)


def _vendor_family(
    members: list[tuple[str, int, re.Pattern[str], VendorToken]],
    anchored: Callable[[str, re.Match[str], int], Hit | None] | None, s: str, m: re.Match[str], floor: int
) -> Hit | None:
    """A vendor token whose head ends where `m` does (`m` is the whole literal for a single rule), else the
    shape anchored on this separator (`_ANCHORED`)."""
    for head, literal_len, full, spec in members:
        start = m.end() - len(head) if head else m.start()
        if start < floor or (head and not s.startswith(head, start)):
            continue
        token = full.match(s, start) if head else m
        if token is None or (spec.check is not None and not spec.check(token.group()[literal_len:])):
            continue
        return Hit(start, token.end(), TOKEN if spec.token else API_KEY)
    return anchored(s, m, floor) if anchored is not None else None


# Shapes anchored on an inner literal; the handler looks left for the rest. (Mailchimp's "<32 hex>-us<n>" and
# Terraform Cloud's "<14>.atlasv1.<60+>" were left out: a scan each for rare kinds with weak anchors.)
_TELEGRAM_RE = re.compile(r":AA[A-Za-z0-9_-]{31,}+")  # "<bot id>:AA<33 chars>"


def _telegram(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = expand_left(s, m.start(), DIGITS, max(floor, m.start() - 16))
    if m.start() - start < 5 or glued(s, start, ALNUM):
        return None
    return Hit(start, m.end(), API_KEY)


_AZURE_AD_RE = re.compile(r"Q~[A-Za-z0-9_~.-]{31,}+")  # "<3 chars><digit>Q~<31-34 chars>"
_AZURE_AD_CHARS = ALNUM | frozenset("_~.")


def _azure_ad(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = m.start() - 4
    if start < floor or m.end() - m.start() > 36 or not s[m.start() - 1].isdigit():
        return None
    if not all(c in _AZURE_AD_CHARS for c in s[start:m.start()]) or glued(s, start, _AZURE_AD_CHARS):
        return None
    return Hit(start, m.end(), SECRET)


PEM_RULE = Rule("private_key", _PEM_RE, _pem, gate=(rare("PRIVATE KEY"),))
AWS_RULE = Rule("aws", _AWS_RE, _aws)
SK_RULE = Rule("openai_anthropic_stripe", _SK_RE, _sk, gate=("-", "_"))  # one-character gates cost a memchr
SLACK_RULE = Rule("slack", _SLACK_RE, _slack, gate=("-",))
GITHUB_RULE = Rule("github", _GITHUB_RE, _whole, gate=("_",))
GITHUB_PAT_RULE = Rule("github_fine_grained", _GITHUB_PAT_RE, _whole, gate=("github_pat_",))
JWT_RULE = Rule("jwt", _JWT_RE, _jwt, gate=("J",))
VENDOR_RULES = _vendor_rules()
TELEGRAM_RULE = Rule("telegram_bot", _TELEGRAM_RE, _telegram, gate=(":",))
AZURE_AD_RULE = Rule("azure_ad_client_secret", _AZURE_AD_RE, _azure_ad, gate=("~",))

__all__ = ["AWS_RULE", "AZURE_AD_RULE", "GITHUB_PAT_RULE", "GITHUB_RULE", "JWT_RULE", "PEM_RULE",
           "SK_RULE", "SLACK_RULE", "TELEGRAM_RULE", "VENDOR_RULES"]
