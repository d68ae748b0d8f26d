"""The text rules of redaction: which substrings are secrets or personal data, and what replaces them.

See `ghost_agent.privacy.redact` for the contract (typed placeholders, idempotent, order-preserving, linear
time) and the order the rules run in; this module is the rules and the pass that applies them to one text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Final, NamedTuple

from ghost_agent.privacy.redact_vendors import VENDOR_TOKENS, VendorToken

API_KEY: Final = "<REDACTED_API_KEY>"
AWS_KEY: Final = "<REDACTED_AWS_KEY>"
SECRET: Final = "<REDACTED_SECRET>"
TOKEN: Final = "<REDACTED_TOKEN>"
PRIVATE_KEY: Final = "<REDACTED_PRIVATE_KEY>"
WEBHOOK: Final = "<REDACTED_WEBHOOK>"
CREDENTIALS: Final = "<REDACTED_CREDENTIALS>"
ONION: Final = "<REDACTED_ONION>"
EMAIL: Final = "<REDACTED_EMAIL>"
IP: Final = "<REDACTED_IP>"
USER: Final = "<user>"
TOO_DEEP: Final = "<REDACTED_TOO_DEEP>"

MAX_DEPTH: Final = 100  # containers nested deeper are replaced whole: JSON never nests this deep, cycles do
# A replacement can reveal a secret to a rule that ran earlier in the pass ("1.2.3.4sk-…": the key is glued to
# the IP until the IP becomes "<REDACTED_IP>"), so passes repeat until nothing changes; two almost always do.
MAX_PASSES: Final = 4
# Generated ids and enums, never content. `session_id` is NOT here: clients choose it (it can be an email),
# and a real id (hex, "default") comes out of redaction unchanged anyway.
PROTECTED_FIELDS: Final = frozenset({"id", "ts", "schema", "outcome", "source"})

# Log fields that can carry user or upstream content (the `request` event's `error` carries upstream messages).
USER_CONTENT_KEYS: Final = frozenset({
    "user_request", "content", "messages", "prompt", "error", "detail", "final_response", "query", "args",
    "tool_args", "result_preview", "exception", "message", "text", "body", "response", "output", "stdout",
    "stderr", "command", "url", "reason", "failure_reason", "description",
})

RECORD_SEP = "\x00"  # joins a record's strings into one text; every rule treats it as a hard boundary
_MIN_LEN = 6  # the shortest text any rule can match ("a@b.cd")


class Hit(NamedTuple):
    """A match to replace: `text[start:end]` becomes `replacement`."""

    start: int
    end: int
    replacement: str
    resume: int = -1  # where to look for the next match; by default right after this one


# A handler gets (text, match, floor = end of the previous replacement) and returns the span to replace, or
# None to keep the match, or an int: keep it, and look for the next match from there rather than after it.
Handler = Callable[[str, "re.Match[str]", int], "Hit | int | None"]
Searcher = Callable[[int], "re.Match[str] | None"]


@dataclass(frozen=True)
class _Rule:
    """One kind of secret: where to look and what to replace."""

    name: str
    regex: re.Pattern[str]
    handler: Handler
    on_lower: bool = False  # matched in an ASCII-lowercased copy, so the pattern keeps a literal prefix
    gate: tuple[str, ...] = ()  # literals one of which every match contains: str.find beats sre's scan
    searcher: Callable[[str], Searcher] | None = None  # replaces regex.search(hay, pos)


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_UPPER_DIGIT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_HOST_CHARS = _ALNUM | frozenset(".-")
_LOCAL_CHARS = _ALNUM | frozenset("._%+-")
_PATH_BOUNDARY = _ALNUM | frozenset("_.~-")  # "src/home/x" is a project folder, not a home directory
_NOT_SECRETS = frozenset({"none", "null", "nil", "true", "false", "undefined"})
_PLACEHOLDER = re.compile(r"<[A-Za-z0-9_ .:/-]*>")  # ours, and templates such as "<your-api-key>"
_ENV_REF = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%")
_API_KEY_PREFIXES = ("sk-", "sk_live_", "sk_test_", "xox", "xapp-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
                     "github_pat_")
_OUR_PLACEHOLDER = re.compile(r"<(?:REDACTED_[A-Z_]+|user)>")
_VERSION_CONTEXT = re.compile(r"(?:\b(?:version|ver|release|build|firmware)\b[\s:=#]*|[=<>~!]=[ \t]*)\Z", re.I)


# A character a key cannot follow (it would be part of a word: "risk-…"), unless it ends an escape that
# stands for a separator: "\\nsk-…" in JSON-escaped text, "%20sk-…" in a URL.
_GLUED = r"(?<!\\)(?<!%[0-9A-Fa-f])[A-Za-z0-9]"
_GLUED_LOWER = r"(?<!\\)(?<!%[0-9a-f])[a-z0-9]"


def _glued(s: str, i: int, chars: frozenset[str]) -> bool:
    """Whether the text at `i` continues a word of `chars` (the handler-side twin of `_GLUED`)."""
    if i == 0 or s[i - 1] not in chars:
        return False
    return not ((i >= 2 and s[i - 2] == "\\") or (i >= 3 and s[i - 3] == "%" and s[i - 2] in _HEX))


def _expand_left(s: str, pos: int, chars: frozenset[str], floor: int) -> int:
    """The start of the run of `chars` ending at `pos` (never below `floor`, never past a separator)."""
    while pos > floor and s[pos - 1] in chars:
        pos -= 1
    return pos


def _has_upper_or_digit(s: str) -> bool:
    return any(c in _UPPER_DIGIT for c in s)


def is_inert_value(value: str) -> bool:
    """Assigned values that cannot be secrets: placeholders, templates, literals, env references, masks."""
    return (
        _PLACEHOLDER.fullmatch(value) is not None
        or value[0] in ")]},;"  # the closing quote of a prompt string ("Password: ") followed by syntax
        or value.lower() in _NOT_SECRETS
        or _ENV_REF.fullmatch(value) is not None
        or not value.strip("$*.xX")
    )


# --- context rules: the surroundings say it is a secret -------------------------------------------------

_WEBHOOK_RE = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[a-z0-9_/-]++")


def _webhook(s: str, m: re.Match[str], floor: int) -> Hit:
    start = m.start()
    for scheme in ("https://", "http://"):
        if start - len(scheme) >= floor and s[start - len(scheme):start].lower() == scheme:
            start -= len(scheme)
            break
    return Hit(start, m.end(), WEBHOOK)


_URL_CREDS_RE = re.compile(r"://([^\s/@:\x00\"'<>]*+):([^\s/@\x00\"'<>]*+)@")


def _url_creds(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return None if m.end(2) - m.start(1) == 1 else Hit(m.start(1), m.end(2), CREDENTIALS)  # "://:@" hides nothing


# A bare token as the whole userinfo ("https://<token>@host", Sentry DSNs, git remotes with a token).
_URL_TOKEN_RE = re.compile(r"://([^\s/@:\x00\"'<>?#]{16,}+)@")


def _url_token(s: str, m: re.Match[str], floor: int) -> Hit | None:
    user = m.group(1)
    if not (any(c in _DIGITS for c in user) and any(c.isalpha() for c in user)):
        return None  # "://readonly_service_account@": a name, not a token
    return Hit(m.start(1), m.end(1), CREDENTIALS)


# A password in a connection string ("Server=db;Uid=app;Pwd=s3cret;"): only after a ";", since PWD= alone is the
# shell's working directory.
_CONN_PWD_RE = re.compile(r"pwd(?:(?<=;pwd)|(?<=; pwd))[ \t]*+=[ \t]*+([^;\s\"'\x00]++)")


def _conn_pwd(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return None if is_inert_value(m.group(1)) else Hit(m.start(1), m.end(1), SECRET)


# The signature of an Azure shared access signature URL ("…?sv=2022-11-02&…&sig=AbC%2B…").
_SAS_SIG_RE = re.compile(r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/=]{20,}+)")  # the literal first: sre scans for it fast


def _sas_sig(s: str, m: re.Match[str], floor: int) -> Hit:
    return Hit(m.start(1), m.end(1), SECRET)


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
    if value.lower() in _SCHEMES or len(value) < 12 or not any(c in _DIGITS for c in value):
        return m.start(2)
    return Hit(m.start(2), m.end(2), TOKEN)


_BEARER_RE = re.compile(rf"bearer(?<!{_GLUED_LOWER}bearer)[ \t]++([a-z0-9._~+/=-]{{16,}}+)")


def _bearer(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # A bare "Bearer <token>" outside a header: a token has digits or capitals, prose does not.
    return Hit(m.start(1), m.end(1), TOKEN) if _has_upper_or_digit(s[m.start(1):m.end(1)]) else None


def _after(words: tuple[str, ...]) -> str:
    """Lookbehinds for "word", "word_" or "word-" right before the current position."""
    return "(?:" + "|".join(f"(?<={w})|(?<={w}[_-])" for w in words) + ")"


_DQ, _SQ = r"[^\"\\\r\n\x00]", r"[^'\\\r\n\x00]"  # a character of a double- or single-quoted value
_UNQ = r"[^\s\"'`<>()\[\]{},;&\\\x00]"  # a character of an unquoted value
_NESTED_KEY_REACH = 48  # longest key + separator: stem (10) + suffix (24) + quote, escape and operator
_VALUE_CAP = 128  # per candidate: a value holding a thousand "password=" is then scanned once, not 1000x
# Tried at each occurrence of a stem (`_ASSIGN_STEMS`), never searched: an alternation of words has no
# literal prefix, so a search would try every position of the text (measured ~100x slower than str.find).
_ASSIGN_RE = re.compile(
    r"(?P<key>(?:secret|passw(?:or)?d|passphrase"
    rf"|{_after(('api', 'private', 'access', 'account', 'master', 'signing', 'encryption', 'client'))}key"
    rf"|{_after(('access', 'auth', 'refresh', 'session', 'id', 'bot', 'oauth', 'api', 'bearer'))}token)"
    r"[a-z0-9_-]{0,24}+"
    rf"|(?<!{_GLUED_LOWER}|_)token)"  # bare "token=" only: pad_token, max_tokens and friends are not secrets
    r"\\?[\"']?[ \t]*+[:=](?![=:])[ \t]*+"
    rf"(?:\\?\"(?P<dq>{_DQ}{{1,{_VALUE_CAP}}}+)|\\?'(?P<sq>{_SQ}{{1,{_VALUE_CAP}}}+)"
    rf"|(?P<unq>{_UNQ}{{1,{_VALUE_CAP}}}+))"
)
_VALUE_REST = {"dq": re.compile(f"{_DQ}*+"), "sq": re.compile(f"{_SQ}*+"), "unq": re.compile(f"{_UNQ}*+")}
_CODE_REF = re.compile(r"[A-Za-z_$][A-Za-z0-9_.$]*")
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_ASSIGN_STEMS = ("secret", "pass", "key", "token")  # "pass" finds password, passwd and passphrase


def _assign_searcher(hay: str) -> Searcher:
    starts = sorted({pos for stem in _ASSIGN_STEMS for pos in _find_all(hay, stem)})
    index = 0

    def search(pos: int) -> re.Match[str] | None:
        nonlocal index
        while index < len(starts):
            start = starts[index]
            index += 1
            if start >= pos and (m := _ASSIGN_RE.match(hay, start)) is not None:
                return m
        return None

    return search


def _find_all(hay: str, literal: str) -> Iterator[int]:
    pos = hay.find(literal)
    while pos >= 0:
        yield pos
        pos = hay.find(literal, pos + 1)


def _assignment(s: str, m: re.Match[str], floor: int) -> Hit | int:
    group = "dq" if m.start("dq") >= 0 else "sq" if m.start("sq") >= 0 else "unq"
    start, end = m.start(group), m.end(group)
    if end - start == _VALUE_CAP:
        end = _VALUE_REST[group].match(s, end).end()  # type: ignore[union-attr]  # `*+` always matches
    value = s[start:end]
    if group == "unq" and _is_code(s, m, value, end):
        return start
    if is_inert_value(value):
        return start  # kept; the value may hold the next assignment
    # Look again near the value's end: it may end with the key of the next assignment ("token=api_key: 123",
    # whose value lies past this one). Only the tail: a key in the middle has its value inside this one.
    label = API_KEY if value.startswith(_API_KEY_PREFIXES) else SECRET
    return Hit(start, end, label, resume=max(start, end - _NESTED_KEY_REACH))


def _is_code(s: str, m: re.Match[str], value: str, end: int) -> bool:
    """An unquoted value that is code, not a literal: a call or subscript (`api_key = os.environ[...]`,
    `password=get_pw()`), or a variable named like the key (`api_key=api_key`, `token=self.token`)."""
    if _CODE_REF.fullmatch(value) is None:
        return False
    if end < len(s) and s[end] in "([":
        return True
    key_start = _expand_left(s, m.start("key"), _IDENT, max(0, m.start("key") - 64))
    return value.rsplit(".", 1)[-1].lower() == s[key_start:m.end("key")].lower()


# --- shape rules: the secret is recognisable by itself --------------------------------------------------
# Left boundaries are lookbehinds placed after the literal prefix: sre keeps its fast prefix scan, and a
# candidate glued to a word is skipped inside the regex instead of swallowing a real key right after it.

_SK_RE = re.compile(
    rf"sk(?:-(?<!{_GLUED}sk-)(ant-|proj-|svcacct-|admin-)?|_(?<!{_GLUED}sk_)(live|test)_)[A-Za-z0-9_-]{{16,}}+"
)


def _sk(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # A bare "sk-" key body is random, so it has capitals or digits; "sk-internationalization-of-things" not.
    known = m.start(1) >= 0 or m.start(2) >= 0
    return Hit(m.start(), m.end(), API_KEY) if known or _has_upper_or_digit(m.group()[3:]) else None


_SLACK_RE = re.compile(rf"x(?:ox[abprse]|app)-(?<!{_GLUED}x(?:ox[abprse]|app)-)[A-Za-z0-9-]{{8,}}+")


def _slack(s: str, m: re.Match[str], floor: int) -> Hit | None:
    return Hit(m.start(), m.end(), API_KEY) if any(c in _DIGITS for c in m.group()) else None  # tokens hold ids


# Two patterns rather than one alternation: each keeps a two-letter literal prefix for sre's fast scan.
_GITHUB_RE = re.compile(rf"gh[pousr]_(?<!{_GLUED}gh[pousr]_)[A-Za-z0-9]{{36,}}+")
_GITHUB_PAT_RE = re.compile(rf"github_pat_(?<!{_GLUED}github_pat_)[A-Za-z0-9_]{{22,}}+")


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
    if sum(c in _ALNUM for c in body) < _PEM_MIN_BODY:
        return None
    return Hit(m.start(), end, PRIVATE_KEY)


# A JSON Web Token (JWS, or the first parts of a JWE): a base64url JSON header, then dot-separated segments.
_JWT_RE = re.compile(rf"eyJ(?<!{_GLUED}eyJ)[A-Za-z0-9_-]{{8,}}+(?:\.[A-Za-z0-9_-]*+){{1,4}}")
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


# Characters from rare to common in ordinary text and code. A rule is gated by the rarest character of its literal:
# one `in` over a text costs a memchr for a single character but a full slow scan for a longer literal, and the
# rule's own regex search (sre's fast literal-prefix scan) follows only when that character occurs at all.
_RARITY = "~^|`\\QZJXKVWYUHGFBOqzjxkvDLMCPNRIASTEbpygw9876543210fmucldhrsnioate-_.:=/ "


def _rare(literal: str) -> str:
    """The character of `literal` least likely to occur in a text (see `_RARITY`)."""
    return min(literal, key=lambda c: _RARITY.find(c) % (len(_RARITY) + 1))


_SEPARATORS = "_-."


def _vendor_rules() -> tuple[_Rule, ...]:
    """The vendor table as rules. A literal with a separator ("hf_", "GOCSPX-", "hvs.") joins the family of its
    first separator: one search for that character, then lookbehinds for the literals' heads, instead of one
    scan of the text per literal (that made redaction twice as slow). The others get a rule each, gated by their
    rarest character."""
    singles: list[_Rule] = []
    families: dict[str, list[tuple[str, int, re.Pattern[str], VendorToken]]] = {}
    for spec in VENDOR_TOKENS:
        for literal in spec.literals:
            escaped = re.escape(literal)
            full = re.compile(f"{escaped}(?<!{_GLUED}{escaped}){spec.rest}")
            sep = next((i for i, c in enumerate(literal) if c in _SEPARATORS), -1)
            if sep < 0:
                singles.append(_Rule(spec.name, full, partial(_vendor_family, [("", len(literal), full, spec)]),
                                     gate=(_rare(literal),)))
            else:
                families.setdefault(literal[sep], []).append((literal[:sep + 1], len(literal), full, spec))
    rules = singles
    for char, members in families.items():
        heads = sorted({head for head, _, _, _ in members})
        regex = re.compile(re.escape(char) + "(?:" + "|".join(f"(?<={re.escape(h)})" for h in heads) + ")")
        rules.append(_Rule(f"vendor_tokens{char}", regex, partial(_vendor_family, members), gate=(char,)))
    return tuple(rules)


def _vendor_family(
    members: list[tuple[str, int, re.Pattern[str], VendorToken]], s: str, m: re.Match[str], floor: int
) -> Hit | None:
    """A vendor token whose head ends where `m` does (`m` is the whole literal for a single rule)."""
    for head, literal_len, full, spec in members:
        start = m.end() - len(head) if head else m.start()
        if start < floor or (head and not s.startswith(head, start)):
            continue
        token = full.match(s, start) if head else m
        if token is None or (spec.check is not None and not spec.check(token.group()[literal_len:])):
            continue
        return Hit(start, token.end(), TOKEN if spec.token else API_KEY)
    return None


# Shapes anchored on an inner literal; the handler looks left for the rest. (Mailchimp's "<32 hex>-us<n>" and
# Terraform Cloud's "<14>.atlasv1.<60+>" were left out: a scan each for rare kinds with weak anchors.)
_TELEGRAM_RE = re.compile(r":AA[A-Za-z0-9_-]{31,}+")  # "<bot id>:AA<33 chars>"


def _telegram(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = _expand_left(s, m.start(), _DIGITS, max(floor, m.start() - 16))
    if m.start() - start < 5 or _glued(s, start, _ALNUM):
        return None
    return Hit(start, m.end(), API_KEY)


_AZURE_AD_RE = re.compile(r"Q~[A-Za-z0-9_~.-]{31,}+")  # "<3 chars><digit>Q~<31-34 chars>"
_AZURE_AD_CHARS = _ALNUM | frozenset("_~.")


def _azure_ad(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = m.start() - 4
    if start < floor or m.end() - m.start() > 36 or not s[m.start() - 1].isdigit():
        return None
    if not all(c in _AZURE_AD_CHARS for c in s[start:m.start()]) or _glued(s, start, _AZURE_AD_CHARS):
        return None
    return Hit(start, m.end(), SECRET)


# --- personal data -------------------------------------------------------------------------------------

_ONION_RE = re.compile(r"\.onion(?![a-z0-9-])")


def _onion(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = _expand_left(s, m.start(), _HOST_CHARS, floor)
    while start < m.start() and s[start] in ".-":
        start += 1
    return Hit(start, m.end(), ONION) if start < m.start() else None


_EMAIL_RE = re.compile(r"@(?:[A-Za-z0-9-]++\.)+[A-Za-z]{2,63}+")


def _email(s: str, m: re.Match[str], floor: int) -> Hit | None:
    start = _expand_left(s, m.start(), _LOCAL_CHARS, floor)
    while start < m.start() and s[start] == ".":
        start += 1
    local = s[start:m.start()]
    if not local or local == "git":  # git@github.com is a service account, in every SSH clone URL
        return None
    return Hit(start, m.end(), EMAIL)


_HOME_RE = re.compile(r"/(?:home|Users)/([^/\\\s\"'<>:;,|*?()\[\]{}\x00]++)")


def _home(s: str, m: re.Match[str], floor: int) -> Hit | None:
    if _glued(s, m.start(), _PATH_BOUNDARY):
        return None
    name = m.group(1).rstrip(".")  # "/home/alice." ends a sentence
    if not name or name == "Shared":  # /Users/Shared belongs to nobody
        return None
    return Hit(m.start(1), m.start(1) + len(name), USER)


_IP_RE = re.compile(r"\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")


def _ip(s: str, m: re.Match[str], floor: int) -> Hit | None:
    # Anchored on the first dot (a literal prefix); the first octet is found by looking back from it.
    start, end = _expand_left(s, m.start(), _DIGITS, max(floor, m.start() - 6)), m.end()
    if start > 0 and s[start - 1] == "%" and m.start() - start >= 3:
        start += 2  # "%2010.0.0.1": the "20" belongs to an escaped space
    if not 1 <= m.start() - start <= 3:
        return None
    if _glued(s, start, _ALNUM) or (start > 0 and s[start - 1] == "."):  # v1.2.3.4, 1.2.3.4.5
        return None
    if end < len(s) and (s[end] in _DIGITS or (s[end] == "." and end + 1 < len(s) and s[end + 1] in _DIGITS)):
        return None
    octets = [int(s[start:m.start()]), int(m.group(1)), int(m.group(2)), int(m.group(3))]
    if max(octets) > 255 or _keep_ip(octets):
        return None
    context = s[max(0, start - 24):start]
    context = _OUR_PLACEHOLDER.sub("_", context[context.rfind(RECORD_SEP) + 1:])  # "<REDACTED_X>=" is no ">="
    if _VERSION_CONTEXT.search(context):  # "version 1.2.3.4", "pkg==1.2.3.4"
        return None
    return Hit(start, end, IP)


def _keep_ip(octets: list[int]) -> bool:
    """Loopback, the unspecified address and netmasks identify nobody."""
    if octets[0] == 127 or octets == [0, 0, 0, 0]:
        return True
    inverted = ~((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) & 0xFFFFFFFF
    return octets[0] == 255 and inverted & (inverted + 1) == 0  # contiguous ones: 255.255.255.0


_RULES: Final = (
    # A private key block first: its body is base64 in which later rules would find (and cut) fragments.
    _Rule("private_key", _PEM_RE, _pem, gate=(_rare("PRIVATE KEY"),)),
    # The only rule that pairs two tokens (an id, then its secret), so it must see the id before any context
    # rule swallows it ("Bearer AKIA…, <secret>").
    _Rule("aws", _AWS_RE, _aws),
    _Rule("webhook", _WEBHOOK_RE, _webhook, on_lower=True, gate=("hooks.slack.com",)),
    _Rule("url_credentials", _URL_CREDS_RE, _url_creds, gate=("@",)),
    _Rule("connection_string_pwd", _CONN_PWD_RE, _conn_pwd, on_lower=True, gate=(";",)),
    _Rule("azure_sas_signature", _SAS_SIG_RE, _sas_sig, gate=("&", ";", "?")),
    _Rule("auth_header", _AUTH_HEADER_RE, _auth_header, on_lower=True, gate=("authorization",)),
    _Rule("bearer", _BEARER_RE, _bearer, on_lower=True),
    _Rule("assignment", _ASSIGN_RE, _assignment, on_lower=True, searcher=_assign_searcher),
    _Rule("openai_anthropic_stripe", _SK_RE, _sk, gate=("-", "_")),  # one-character gates cost a memchr
    _Rule("slack", _SLACK_RE, _slack, gate=("-",)),
    _Rule("github", _GITHUB_RE, _whole, gate=("_",)),
    _Rule("github_fine_grained", _GITHUB_PAT_RE, _whole, gate=("github_pat_",)),
    _Rule("jwt", _JWT_RE, _jwt, gate=("J",)),
    *_vendor_rules(),
    _Rule("telegram_bot", _TELEGRAM_RE, _telegram, gate=(":",)),
    _Rule("azure_ad_client_secret", _AZURE_AD_RE, _azure_ad, gate=("~",)),
    _Rule("url_token", _URL_TOKEN_RE, _url_token, gate=("@",)),  # after the shapes: a known token keeps its type
    _Rule("email", _EMAIL_RE, _email, gate=("@",)),  # before onion: alice@x.onion hides alice too
    _Rule("onion", _ONION_RE, _onion, on_lower=True),
    _Rule("home", _HOME_RE, _home),
    _Rule("ipv4", _IP_RE, _ip),
)

_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _lower(s: str) -> str:
    """A lowercase copy with the same indices (str.lower grows a few characters, such as "İ")."""
    low = s.lower()
    return low if len(low) == len(s) else s.translate(_ASCII_LOWER)


def _apply(rule: _Rule, s: str, hay: str) -> str:
    """One rule over `s` (matched in `hay`, same indices); returns `s` itself when nothing was replaced."""
    if rule.gate:
        for literal in rule.gate:
            if literal in hay:
                break
        else:
            return s
    if rule.searcher is not None:
        search = rule.searcher(hay)
    elif rule.regex.search(hay) is None:  # the common case, without building a closure
        return s
    else:
        search = partial(rule.regex.search, hay)
    out: list[str] = []
    last = pos = 0
    while (m := search(pos)) is not None:
        hit = rule.handler(s, m, last)
        if hit is None:
            pos = m.end()
        elif isinstance(hit, int):
            pos = max(hit, m.start() + 1)
        else:
            start = max(hit.start, last)  # a match found by looking again inside the previous replacement
            if hit.end > start:
                out.append(s[last:start])
                out.append(hit.replacement)
                last = hit.end
            pos = max(hit.resume, m.start() + 1) if hit.resume >= 0 else max(hit.end, m.end())
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)


def _one_pass(s: str) -> str:
    low: str | None = None
    for rule in _RULES:
        if rule.on_lower:
            if low is None:
                low = _lower(s)
            new = _apply(rule, s, low)
        else:
            new = _apply(rule, s, s)
        if new is not s:
            s, low = new, None
    return s


def redact_text(s: str) -> str:
    """`s` with every secret replaced by its placeholder; `s` itself (same object) when nothing matched."""
    if len(s) < _MIN_LEN:
        return s
    for _ in range(MAX_PASSES):
        new = _one_pass(s)
        if new is s:
            break
        s = new
    return s


