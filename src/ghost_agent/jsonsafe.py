"""What orjson can always serialize, checked at the door (`find_problem`) and repaired before a write (`sanitize`).

Python's JSON parser accepts more than orjson writes back: lone UTF-16 surrogates (`"\\ud800"`), integers past
64 bits, `NaN`/`Infinity`, and nesting down to the interpreter's recursion limit (orjson stops at 255
levels). A request carrying a lone surrogate, NaN or too deep a nesting is refused (400) before it reaches a
backend, a log or a record; big integers are valid JSON and pass (forwarded with `dumps`). Data from anywhere
else is repaired rather than dropped when it is written (`sanitize`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

# A JSON object as the project passes it around (request bodies, wire objects, records): the one alias.
JSON = dict[str, Any]

# Well under orjson's 255 so a client's object stays writable when wrapped in our own records.
MAX_DEPTH = 128
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class Problem:
    """Why a value cannot be written as JSON, and where (`path`: dotted keys and list indexes, '' = the root)."""

    path: str
    message: str


def _lone_surrogate(text: str) -> str | None:
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def find_problem(value: Any, max_depth: int = MAX_DEPTH, *, big_ints: bool = False) -> Problem | None:
    """The first thing in `value` (parsed JSON: dict, list, str, int, float, bool, None) that is not writable.

    Checks: strings and keys without lone surrogates, finite floats, nesting of at most `max_depth` containers,
    and (unless `big_ints`) integers in [-2**63, 2**64-1]. Integers past that range are valid JSON: with
    `big_ints=True` they pass, and whoever forwards them writes them with the stdlib (`dumps`). Iterative, so
    depth never costs Python stack.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            bad = _lone_surrogate(item)
            if bad is not None:
                return Problem(path, f"invalid Unicode: lone surrogate {bad} (a UTF-16 surrogate must be paired)")
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not big_ints and not INT_MIN <= item <= INT_MAX:
                return Problem(path, "integer out of range (JSON numbers here must fit in 64 bits)")
        elif isinstance(item, float):
            if not math.isfinite(item):
                return Problem(path, "NaN and Infinity are not JSON numbers")
        elif isinstance(item, (dict, list)):
            if depth > max_depth:  # named by its top-level field: the full path would be max_depth long
                return Problem(path.split(".", 1)[0], f"JSON nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    bad = _lone_surrogate(key) if isinstance(key, str) else None
                    if bad is not None:
                        return Problem(path, f"invalid Unicode in a key: lone surrogate {bad}")
                    stack.append((child, _join(path, key), depth + 1))
            else:
                stack.extend((child, _join(path, i), depth + 1) for i, child in enumerate(item))
    return None


def dumps(value: Any) -> bytes:
    """JSON bytes: orjson, or the stdlib for what orjson cannot write but JSON allows (integers past 64 bits).
    Raises ValueError for what is not JSON at all (lone surrogates, NaN, nesting past the stdlib's limit)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, RecursionError) as exc:
            raise ValueError(f"not writable as JSON: {exc}") from None


def sanitize(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of `value` that orjson can write: lone surrogates become U+FFFD, out-of-range integers and
    non-string keys become strings, NaN/Infinity become None, containers deeper than `max_depth` a marker
    string, tuples lists, anything else its `str()`. Never raises for data; the caller decides to log."""
    return _sanitize(value, max_depth, 1)


def _clean_text(text: str) -> str:
    return text if _lone_surrogate(text) is None else _SURROGATE.sub(REPLACEMENT, text)


def _sanitize(value: Any, max_depth: int, depth: int) -> Any:
    if isinstance(value, str):
        return _clean_text(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT_MIN <= value <= INT_MAX else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dict, list, tuple)):
        if depth > max_depth:
            return f"[nested deeper than {max_depth} levels: dropped]"
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, child in value.items():
                name = _clean_text(key if isinstance(key, str) else str(key))
                while name in out:  # two keys may clean to the same text: keep both values
                    name += "#"
                out[name] = _sanitize(child, max_depth, depth + 1)
            return out
        return [_sanitize(child, max_depth, depth + 1) for child in value]
    return _clean_text(str(value))


__all__ = ["JSON", "INT_MAX", "INT_MIN", "MAX_DEPTH", "Problem", "dumps", "find_problem", "sanitize"]
