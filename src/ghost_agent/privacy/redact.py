"""Redaction: secrets and personal data never touch disk.

`redact_trajectory` runs inside every collector append and `redact_event` inside every structured log line.
Each kind of secret is replaced by a typed placeholder; the text around it is kept as it was:

    PEM private key blocks (RSA, EC, DSA, OpenSSH,      <REDACTED_PRIVATE_KEY>
      PKCS#8, ENCRYPTED, PGP), whole or cut short
    API keys: OpenAI, Anthropic, Slack, GitHub, Stripe, <REDACTED_API_KEY>
      Google, Hugging Face, npm, GitLab, PyPI, SendGrid,
      Twilio, ... (`redact_vendors.VENDOR_TOKENS`)
    AWS access key ids                                  <REDACTED_AWS_KEY>
    AWS secrets, `password=…`-style assignments,        <REDACTED_SECRET>
      Azure AccountKey= / SAS sig= / AD client secrets
    JWTs, OAuth/Vault tokens, `Authorization: …` values, <REDACTED_TOKEN>
      Discord bot tokens, cookie values (`Cookie:`,
      `Set-Cookie:`, `{"Cookie": …}`, curl -b)
    passwords on command lines (`mysql -pX`, `curl -u   <REDACTED_PASSWORD>
      u:X`, …: `rules_cli.TOOLS`) and in prose ("my
      password is X", es/de/fr), PINs ("pin is 1234")
    Slack webhook URLs                                  <REDACTED_WEBHOOK>
    `scheme://user:pass@`, `scheme://<token>@`          scheme://<REDACTED_CREDENTIALS>@
    `.onion` hosts, emails, non-loopback IPv4           <REDACTED_ONION>, <REDACTED_EMAIL>, <REDACTED_IP>
    payment cards (issuer prefix, length, Luhn), IBANs  <REDACTED_CARD>, <REDACTED_IBAN>, <REDACTED_SSN>
      (country length, mod 97), US SSNs
    `/home/<name>/…`, `/Users/<name>/…`                 /home/<user>/…, /Users/<user>/…

The full list, with what is deliberately left alone, is in docs/privacy.md. Ids a client chooses become paths
and log fields: `session_key` and `request_id` redact them first, then bound them; `redact_url` is how every
configured URL is shown.

Contract: idempotent (placeholders match no rule, and a pass repeats until nothing changes), order-preserving,
linear time (patterns start with a literal, repeats are possessive or bounded, a rejected candidate never
makes the scan go back far, a command line is read once), inputs never mutated. Order of the rules
(`redact_rules.RULES`): private key blocks first (their base64 body holds fragments other rules would cut), then
AWS (it pairs an id with the secret after it, so it must see the id untouched), then context rules (URL
credentials, headers, cookies, command lines, assignments, prose), so a value is removed whole even where a
shape rule would recognise only part of it, then shape rules (`sk-…`, `ghp_…`, JWTs, the vendor table), then
personal data.

Speed: a record's strings are joined by a separator that every rule treats as a boundary and redacted as one
text (per-call costs dominate short strings); every rule is gated by a single rare character (memchr speed)
or a literal, and has a literal prefix for sre's fast scan (digit runs get one in the text's shape, where every
digit is "9"); vendor prefixes sharing a separator are found by one search. Costs per ordinary ~4 KB record:
bench/bench_redaction.py and bench/bench_redaction_coverage.py (old and new rules side by side).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import hashlib
import re
import secrets
import uuid
from collections.abc import Iterator, MutableMapping
from typing import Any, Final

from ghost_agent.privacy.placeholders import (
    API_KEY,
    AWS_KEY,
    CARD,
    CREDENTIALS,
    EMAIL,
    IBAN,
    IP,
    ONION,
    PASSWORD,
    PRIVATE_KEY,
    SECRET,
    SSN,
    TOKEN,
    TOO_DEEP,
    USER,
    WEBHOOK,
)
from ghost_agent.privacy.redact_rules import MAX_PASSES, redact_text
from ghost_agent.privacy.rule import RECORD_SEP, is_inert_value

MAX_DEPTH: Final = 100  # containers nested deeper are replaced whole: JSON never nests this deep, cycles do
# Generated ids and enums, never content. `session_id` is NOT here: clients choose it (it can be an email),
# and a real id (hex, "default") comes out of redaction unchanged anyway.
PROTECTED_FIELDS: Final = frozenset({"id", "ts", "schema", "outcome", "source"})
# Log fields that can carry user or upstream content (the `request` event's `error` carries upstream messages).
USER_CONTENT_KEYS: Final = frozenset({
    "user_request", "content", "messages", "prompt", "error", "detail", "final_response", "query", "args",
    "tool_args", "result_preview", "exception", "message", "text", "body", "response", "output", "stdout",
    "stderr", "command", "url", "reason", "failure_reason", "description",
})

# --- structures ----------------------------------------------------------------------------------------

_SECRET_KEY_PARTS = ("apikey", "secret", "password", "passwd", "passphrase", "privatekey", "authorization",
                     "accesstoken", "authtoken", "refreshtoken", "sessiontoken", "idtoken", "bottoken",
                     "oauthtoken", "apitoken", "cookie", "passwort", "kennwort", "contrasena", "contraseña",
                     "motdepasse", "passcode")
# Whole key names only: as parts they would hit ordinary keys ("spin", "mapping", "descvv").
_SECRET_KEY_NAMES = frozenset({"token", "pin", "pincode", "pinnumber", "cvv", "cvv2", "cvc", "cvc2", "ssn",
                               "cardnumber", "creditcard", "creditcardnumber", "ccnumber"})
_SECRET_NAME, _DIRTY = 1, 2  # _DIRTY: the key text itself has something to redact
_KEY_FLAGS: dict[str, int] = {}  # keys repeat across records; grows to a bound, never changes an entry
_KEY_FLAGS_MAX = 8192
_PLAIN_KEYS: set[str] = set()  # the keys of _KEY_FLAGS that are neither secret names nor dirty


def _key_flags(key: str) -> int:
    """Whether `key` names a secret and whether the key itself needs redacting; the same answer every call."""
    flags = _KEY_FLAGS.get(key)
    if flags is None:
        norm = "".join(c for c in key.lower() if c.isalnum())
        secret = norm in _SECRET_KEY_NAMES or any(part in norm for part in _SECRET_KEY_PARTS)
        flags = (_SECRET_NAME if secret else 0) | (_DIRTY if redact_text(key) is not key else 0)
        if len(_KEY_FLAGS) < _KEY_FLAGS_MAX and len(key) <= 256:  # field names, not data used as keys
            _KEY_FLAGS[key] = flags
            if not flags:
                _PLAIN_KEYS.add(key)
    return flags


def is_secret_key(key: str) -> bool:
    """A key whose string values are secrets whatever they look like (`password`, `X-Api-Key`, `token`)."""
    return bool(_key_flags(key) & _SECRET_NAME)


def _replaced_whole(value: str) -> bool:
    """Whether a string under a secret key becomes `<REDACTED_SECRET>` (inert values are redacted as text)."""
    return bool(value) and not is_inert_value(value)


_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset({int, float, bool, type(None)})


def _collect(obj: Any, acc: list[str], depth: int, secret: bool) -> bool:
    """Append the strings of container `obj` that need redacting, in walk order; True if a change is certain.

    The hot path (every append walks a whole record), hence exact-type checks before isinstance, and clean
    keys recognised by one set lookup. `_rebuild` mirrors every decision made here.
    """
    if depth >= MAX_DEPTH:
        return True
    forced = False
    pairs = obj.items() if isinstance(obj, dict) else ((None, item) for item in obj)
    for key, value in pairs:
        under = secret
        if key is not None and key not in _PLAIN_KEYS and isinstance(key, str):
            flags = _key_flags(key)
            if flags & _DIRTY:
                acc.append(key)
            under = under or bool(flags & _SECRET_NAME)
        kind = type(value)
        if kind is str or (kind not in _SCALARS and kind not in _CONTAINERS and isinstance(value, str)):
            if under and _replaced_whole(value):
                forced = True
            else:
                acc.append(value)
        elif kind in _SCALARS:
            continue
        elif isinstance(value, _CONTAINERS) and _collect(value, acc, depth + 1, under):
            forced = True
    return forced


def _rebuild_value(value: Any, texts: Iterator[str], depth: int, secret: bool) -> Any:
    if isinstance(value, str):
        if secret and _replaced_whole(value):
            return SECRET
        new = next(texts)
        return value if new == value else new  # keeps str subclasses (enum values) that did not change
    if isinstance(value, (dict, list, tuple)):
        return _rebuild(value, texts, depth, secret)
    return value


def _rebuild(obj: Any, texts: Iterator[str], depth: int, secret: bool) -> Any:
    """Container `obj` rebuilt from the redacted strings, consumed in the order `_collect` produced them."""
    if depth >= MAX_DEPTH:
        return TOO_DEEP
    if not isinstance(obj, dict):
        rebuilt = [_rebuild_value(item, texts, depth + 1, secret) for item in obj]
        return tuple(rebuilt) if isinstance(obj, tuple) else rebuilt
    items: list[tuple[Any, Any, bool]] = []
    for key, value in obj.items():
        under, new_key = secret, key
        if key not in _PLAIN_KEYS and isinstance(key, str):
            flags = _key_flags(key)
            if flags & _DIRTY:
                new_key = next(texts)
            under = under or bool(flags & _SECRET_NAME)
        items.append((new_key, _rebuild_value(value, texts, depth + 1, under), new_key != key))
    return _dedupe_keys(items)


def _dedupe_keys(items: list[tuple[Any, Any, bool]]) -> dict[Any, Any]:
    """Redacted keys can collide ({"a@x.io": 1, "b@y.io": 2}): suffix them rather than drop a value.

    Keys that did not change keep their name; changed ones get "#2", "#3", ... on a collision.
    """
    taken = {key for key, _, changed in items if not changed}
    out: dict[Any, Any] = {}
    for key, value, changed in items:
        if changed:
            base, n = key, 2
            while key in taken:
                key, n = f"{base}#{n}", n + 1
            taken.add(key)
        out[key] = value
    return out


def _redact_many(texts: list[str]) -> list[str]:
    """Redact many strings in one pass over their concatenation: per-call costs dominate short strings."""
    joined = RECORD_SEP.join(texts)
    redacted = redact_text(joined)
    if redacted is joined:
        return texts
    parts = redacted.split(RECORD_SEP)
    if len(parts) != len(texts):  # a string held the separator itself
        return [redact_text(t) for t in texts]
    return parts


def _redact(obj: Any, secret: bool) -> Any:
    if isinstance(obj, str):
        return SECRET if secret and _replaced_whole(obj) else redact_text(obj)
    if not isinstance(obj, (dict, list, tuple)):
        return obj
    texts: list[str] = []
    forced = _collect(obj, texts, 0, secret)
    redacted = _redact_many(texts) if texts else texts
    if redacted is texts and not forced:
        return obj
    return _rebuild(obj, iter(redacted), 0, secret)


def redact_obj(obj: Any) -> Any:
    """`obj` with every string redacted, deep through dicts, lists and tuples. Never mutates `obj`.

    Dict keys are redacted too (colliding keys get a `#n` suffix, no value is dropped); strings anywhere under
    a key naming a secret (`password`, `api_key`, `Authorization`, ...) become `<REDACTED_SECRET>` whole.
    Non-string scalars and other objects are returned as they are; containers nested deeper than `MAX_DEPTH`
    become `<REDACTED_TOO_DEEP>`. Returns `obj` itself when nothing changed, else a copy that may share
    unchanged parts with `obj`.
    """
    return _redact(obj, secret=False)


def redact_trajectory(record: dict[str, Any]) -> dict[str, Any]:
    """A new record with everything redacted except the ids and enums (`PROTECTED_FIELDS`), in the same order."""
    rest = {key: value for key, value in record.items() if key not in PROTECTED_FIELDS}
    redacted = iter(redact_obj(rest).items())
    out: dict[str, Any] = {}
    for key in record:
        if key in PROTECTED_FIELDS:
            out[key] = record[key]
        else:
            new_key, value = next(redacted)
            out[new_key] = value
    return out


_LOG_NATIVE = (int, float, bool, type(None), dt.date, dt.time, uuid.UUID, enum.Enum)


def _loggable(value: Any) -> Any:
    """A log value as the sink will serialize it, so redaction sees the text that reaches the file: the sink
    writes unknown objects (exceptions, paths, URLs) with `str()`, dataclasses as dicts."""
    if isinstance(value, (str, dict, list, tuple)) or isinstance(value, _LOG_NATIVE):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def redact_event(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: every field of a log event redacted (request ids, settings and exception text as
    much as user content), and fields named like a secret replaced whole."""
    for key, value in event.items():
        value = _loggable(value)
        if isinstance(value, (str, dict, list, tuple)):
            event[key] = _redact(value, secret=is_secret_key(key))  # same keys: safe while iterating
    return event


# --- URLs and client-chosen ids --------------------------------------------------------------------------

_URL_HEAD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)")


def redact_url(url: str) -> str:
    """`url` fit to show or log: its userinfo (`user:password@`, `token@`) becomes `<REDACTED_CREDENTIALS>@`,
    whatever it looks like, and its path, query and fragment go through the text rules (`?api_key=…`); the
    scheme, host and port stay readable. Text that is not a URL is redacted as text."""
    m = _URL_HEAD.search(url)
    if m is None:
        return redact_text(url)
    authority = m.group(2)
    at = authority.rfind("@")
    if at >= 0:
        authority = CREDENTIALS + authority[at:]
    return redact_text(url[:m.start()]) + m.group(1) + authority + redact_text(url[m.end():])


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._:=+/-]+")
_READABLE_CHARS = 40
# A digest of an id that held a secret. Slow on purpose (PBKDF2): the digest is stored (directory names, logs),
# so guessing a weak secret from it should cost something. Only ids that hold a secret are ever hashed.
_DIGEST_SALT = b"ghost-agent.client-id.v1"
_DIGEST_ROUNDS = 10_000


@functools.lru_cache(maxsize=1024)
def _digest(value: str) -> str:
    raw = value.encode("utf-8", "surrogatepass")
    return hashlib.pbkdf2_hmac("sha256", raw, _DIGEST_SALT, _DIGEST_ROUNDS)[:8].hex()


_PLACEHOLDER_NAME = re.compile(r"<(REDACTED_[A-Z_]+|user)>")


def _pseudonym(redacted: str, suffix: str) -> str:
    """What was redacted from an id (`REDACTED_API_KEY`, `REDACTED_AWS_KEY_REDACTED_SECRET`), then a suffix.
    Only the kinds: the rest of an id that held a secret (a host, an account name) is no one's business either."""
    kinds = dict.fromkeys(m.group(1) for m in _PLACEHOLDER_NAME.finditer(redacted))
    readable = "_".join(kinds)[:_READABLE_CHARS].strip("_") or "redacted"
    return f"{readable}-{suffix}"


def session_key(value: str, *, max_len: int = 128) -> str:
    """A client-chosen session id as the daemon stores and uses it (trajectory file, workspace directory, logs).

    Redacted first, then bounded. An id holding no secret is itself, cut to `max_len`. One holding a secret
    (an API key sent as `user`, an email) becomes `<what was redacted>-<16 hex digits>`, e.g.
    `REDACTED_API_KEY-3f2a9c01d4e5b6a7`: the digits are a salted PBKDF2 digest of the whole id, so the same id
    always maps to the same name (a session keeps its workspace and its trajectory file), distinct ids to
    distinct names, and no part of the secret reaches a file or a path.
    """
    if redact_text(value) is value:
        cut = value[:max_len]
        if redact_text(cut) is cut:
            return cut
    return _pseudonym(redact_text(value), _digest(value))[:max_len]


def request_id(value: str, *, max_len: int = 64) -> str:
    """A client's `x-request-id` as the daemon logs, records and echoes it: redacted first, then reduced to
    `[A-Za-z0-9._:=+/-]` and cut to `max_len`. One that holds a secret is replaced by
    `<what was redacted>-<random hex>`: request ids need no stability, and a fresh one costs no hashing on a
    path that runs before authentication. Empty when `value` is empty (the caller then makes its own)."""
    if not value:
        return ""
    if redact_text(value) is value:
        cut = _ID_UNSAFE.sub("_", value)[:max_len]
        if redact_text(cut) is cut:
            return cut
    return _pseudonym(redact_text(value), secrets.token_hex(8))[:max_len]


__all__ = [
    "API_KEY", "AWS_KEY", "CARD", "CREDENTIALS", "EMAIL", "IBAN", "IP", "MAX_DEPTH", "MAX_PASSES", "ONION", "PASSWORD",
    "PRIVATE_KEY", "PROTECTED_FIELDS", "SECRET", "SSN", "TOKEN", "TOO_DEEP", "USER", "USER_CONTENT_KEYS", "WEBHOOK",
    "is_secret_key",
    "redact_event", "redact_obj", "redact_text", "redact_trajectory", "redact_url", "request_id", "session_key",
]
