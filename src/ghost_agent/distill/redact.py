"""Redaction: secrets and personal data never touch disk.

`redact_trajectory` runs inside every collector append and `redact_event` inside every structured log line.
Each kind of secret is replaced by a typed placeholder; the text around it is kept as it was:

    API keys: OpenAI, Anthropic, Slack, GitHub, Stripe  <REDACTED_API_KEY>
    AWS access key ids                                  <REDACTED_AWS_KEY>
    AWS secrets, `password=…`-style assignments         <REDACTED_SECRET>
    `Authorization: Bearer …` (HTTP and JSON-quoted)    Authorization: Bearer <REDACTED_TOKEN>
    Slack webhook URLs                                  <REDACTED_WEBHOOK>
    `scheme://user:pass@` credentials                   scheme://<REDACTED_CREDENTIALS>@
    `.onion` hosts, emails, non-loopback IPv4           <REDACTED_ONION>, <REDACTED_EMAIL>, <REDACTED_IP>
    `/home/<name>/…`, `/Users/<name>/…`                 /home/<user>/…, /Users/<user>/…

Contract: idempotent (placeholders match no rule, and a pass repeats until nothing changes), order-preserving,
linear time (patterns start with a literal, repeats are possessive or bounded, a rejected candidate never
makes the scan go back far), inputs never mutated. Order of the rules: AWS first (it pairs an id with the
secret after it, so it must see the id untouched), then context rules (URL credentials, headers, assignments),
so a value is removed whole even where a shape rule would recognise only part of it, then shape rules
(`sk-…`, `ghp_…`), then personal data.

Speed: a record's strings are joined by a separator that every rule treats as a boundary and redacted as one
text (per-call costs dominate short strings); every rule is gated by a literal (`str.find`/memchr speed) or
has a literal prefix for sre's fast scan. About 50 us of CPU for an ordinary 4 KB record
(bench/bench_redaction.py).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from ghost_agent.distill.redact_rules import (  # noqa: F401 - re-exported: the public names live here
    _SEP,
    API_KEY,
    AWS_KEY,
    CREDENTIALS,
    EMAIL,
    IP,
    MAX_DEPTH,
    MAX_PASSES,
    ONION,
    PROTECTED_FIELDS,
    SECRET,
    TOKEN,
    TOO_DEEP,
    USER,
    USER_CONTENT_KEYS,
    WEBHOOK,
    _is_inert_value,
    redact_text,
)

# --- structures ----------------------------------------------------------------------------------------

_SECRET_KEY_PARTS = ("apikey", "secret", "password", "passwd", "passphrase", "privatekey", "authorization",
                     "accesstoken", "authtoken", "refreshtoken", "sessiontoken", "idtoken", "bottoken",
                     "oauthtoken", "apitoken", "cookie")
_SECRET_NAME, _DIRTY = 1, 2  # _DIRTY: the key text itself has something to redact
_KEY_FLAGS: dict[str, int] = {}  # keys repeat across records; grows to a bound, never changes an entry
_KEY_FLAGS_MAX = 8192
_PLAIN_KEYS: set[str] = set()  # the keys of _KEY_FLAGS that are neither secret names nor dirty


def _key_flags(key: str) -> int:
    """Whether `key` names a secret and whether the key itself needs redacting; the same answer every call."""
    flags = _KEY_FLAGS.get(key)
    if flags is None:
        norm = "".join(c for c in key.lower() if c.isalnum())
        secret = norm == "token" or any(part in norm for part in _SECRET_KEY_PARTS)
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
    return bool(value) and not _is_inert_value(value)


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
    joined = _SEP.join(texts)
    redacted = redact_text(joined)
    if redacted is joined:
        return texts
    parts = redacted.split(_SEP)
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


def redact_event(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: redacts a log event's user-content fields, and secret-named fields whole."""
    for key, value in event.items():
        if isinstance(value, (str, dict, list, tuple)) and (key in USER_CONTENT_KEYS or is_secret_key(key)):
            event[key] = _redact(value, secret=is_secret_key(key))  # same keys: safe while iterating
    return event
