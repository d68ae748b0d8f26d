"""What a redaction rule is, and the helpers the rule modules share.

A `Rule` is a regex (searched in the text, or in an ASCII-lowercased copy with the same indices), an optional
gate (literals one of which every match contains: a rule whose gate is absent costs one `in`) and a handler
that turns a match into a `Hit` (what to replace) or declines it. `redact_rules` runs the rules in order; the
rule modules (`rules_shapes`, `rules_context`, `rules_http`, `rules_cli`, `rules_prose`, `rules_personal`)
define them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import AnyStr, Final, Generic, NamedTuple

RECORD_SEP: Final = "\x00"  # joins a record's strings into one text; every rule treats it as a hard boundary


class Hit(NamedTuple):
    """A match to replace: `text[start:end]` becomes `replacement`."""

    start: int
    end: int
    replacement: str
    resume: int = -1  # where to look for the next match; by default right after this one


# A handler gets (text, match, floor = end of the previous replacement) and returns the span to replace, or
# None to keep the match, or an int: keep it, and look for the next match from there rather than after it.
# The match is in the text, its lowercase copy or its shape (`shape_of`): always the same indices as the text.
Handler = Callable[[str, re.Match[AnyStr], int], Hit | int | None]
Searcher = Callable[[int], re.Match[AnyStr] | None]


@dataclass(frozen=True)
class Rule(Generic[AnyStr]):
    """One kind of secret: where to look and what to replace."""

    name: str
    regex: re.Pattern[AnyStr]
    handler: Handler[AnyStr]
    on_lower: bool = False  # matched in an ASCII-lowercased copy, so the pattern keeps a literal prefix
    on_shape: bool = False  # matched in the text's shape (bytes, see `shape_of`): digit runs get a literal prefix
    gate: tuple[AnyStr, ...] = ()  # literals one of which every match contains: str.find beats sre's scan
    searcher: Callable[[AnyStr], Searcher[AnyStr]] | None = None  # replaces regex.search(hay, pos)

    def __post_init__(self) -> None:
        if self.on_shape != isinstance(self.regex.pattern, bytes) or (self.on_shape and self.on_lower):
            raise ValueError(f"rule {self.name}: a shape rule has a bytes pattern, the others a str pattern")


# The shape of a text: one byte per character, so indices are the text's. A pattern that begins with a class
# ("[0-9]{4}") has no literal prefix and costs sre ~30x a literal scan; in the shape, every digit is "9" and every
# ASCII capital "A", so a card number or an IBAN has one ("9999", "AA99"). Lowercase ASCII letters are "a",
# space, "-" and "%" (URL escapes: "%20" is no digit run's start) stay, everything else (punctuation, controls,
# non-ASCII) is ".".
_SHAPE = bytes(
    ord("9") if chr(i).isdigit() and i < 128 else ord("A") if "A" <= chr(i) <= "Z" else ord("a") if "a" <= chr(i) <= "z"
    else i if chr(i) in " -%" else ord(".") for i in range(256)
)


def shape_of(s: str) -> bytes:
    """The shape of `s` (see `_SHAPE`): `len(s)` bytes; characters past Latin-1 become "." like punctuation."""
    return s.encode("latin-1", "replace").translate(_SHAPE)  # "replace" keeps one byte ("?") per character


ALNUM: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
UPPER_DIGIT: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
DIGITS: Final = frozenset("0123456789")
HEX: Final = frozenset("0123456789abcdefABCDEF")
IDENT: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
OUR_PLACEHOLDER: Final = re.compile(r"<(?:REDACTED_[A-Z_]+|user)>")
_NOT_SECRETS = frozenset({"none", "null", "nil", "true", "false", "undefined"})
_PLACEHOLDER = re.compile(r"<[A-Za-z0-9_ .:/-]*>")  # ours, and templates such as "<your-api-key>"
_ENV_REF = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%")

# A character a key cannot follow (it would be part of a word: "risk-…"), unless it ends an escape that
# stands for a separator: "\\nsk-…" in JSON-escaped text, "%20sk-…" in a URL.
GLUED: Final = r"(?<!\\)(?<!%[0-9A-Fa-f])[A-Za-z0-9]"
GLUED_LOWER: Final = r"(?<!\\)(?<!%[0-9a-f])[a-z0-9]"


def glued(s: str, i: int, chars: frozenset[str]) -> bool:
    """Whether the text at `i` continues a word of `chars` (the handler-side twin of `GLUED`)."""
    if i == 0 or s[i - 1] not in chars:
        return False
    return not ((i >= 2 and s[i - 2] == "\\") or (i >= 3 and s[i - 3] == "%" and s[i - 2] in HEX))


def after_escape(s: str, start: int) -> int:
    """`start`, moved past the tail of an escape it begins with: the "n" of a JSON "\\n" ("\\nmysql"), the
    "20" of a URL's "%20" ("%20mysql"). For runs found by looking left, which run into such tails."""
    if start >= 1 and s[start - 1] == "\\" and s[start:start + 1] in ("n", "r", "t"):
        return start + 1
    if start >= 1 and s[start - 1] == "%" and len(s) > start + 1 and s[start] in HEX and s[start + 1] in HEX:
        return start + 2
    return start


def expand_left(s: str, pos: int, chars: frozenset[str], floor: int) -> int:
    """The start of the run of `chars` ending at `pos` (never below `floor`, never past a separator)."""
    while pos > floor and s[pos - 1] in chars:
        pos -= 1
    return pos


def has_upper_or_digit(s: str) -> bool:
    """A capital or a digit somewhere: random token bodies have one, prose and snake_case rarely."""
    return any(c in UPPER_DIGIT for c in s)


def is_inert_value(value: str) -> bool:
    """Assigned values that cannot be secrets: placeholders, templates, literals, env references, masks."""
    return (
        _PLACEHOLDER.fullmatch(value) is not None
        or value[0] in ")]},;"  # the closing quote of a prompt string ("Password: ") followed by syntax
        or value.lower() in _NOT_SECRETS
        or _ENV_REF.fullmatch(value) is not None
        or not value.strip("$*.xX")
        or (len(value) <= 4 and not any(c.isalnum() for c in value))  # syntax: `token: "'')` in an error message
    )


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def lower_same_length(s: str) -> str:
    """A lowercase copy with the same indices (str.lower grows a few characters, such as "İ")."""
    low = s.lower()
    return low if len(low) == len(s) else s.translate(_ASCII_LOWER)


def find_all(hay: str, literal: str) -> Iterator[int]:
    """Every index where `literal` starts in `hay` (overlapping occurrences included)."""
    pos = hay.find(literal)
    while pos >= 0:
        yield pos
        pos = hay.find(literal, pos + 1)


# The positions of a stem in the last text searched for it: the assignment and prose rules both look for "pass"
# in the same lowercase text, one right after the other. Keyed by stem; an entry is used only for the very same
# text object (a replacement makes a new one), so a stale or concurrent entry is merely recomputed.
_LAST_POSITIONS: dict[str, tuple[str, list[int]]] = {}


def stem_positions(hay: str, stem: str) -> list[int]:
    """`list(find_all(hay, stem))`, remembered for the next call with the same `hay` object."""
    last = _LAST_POSITIONS.get(stem)
    if last is not None and last[0] is hay:
        return last[1]
    positions = list(find_all(hay, stem))
    _LAST_POSITIONS[stem] = (hay, positions)
    return positions


def forget_positions() -> None:
    """Drop the remembered positions (and the texts they pin) once a text is redacted."""
    _LAST_POSITIONS.clear()


def stem_searcher(regex: re.Pattern[str], stems: tuple[str, ...]) -> Callable[[str], Searcher[str]]:
    """A searcher that tries `regex.match` only where one of `stems` starts, in text order.

    For patterns that begin with an alternation of words: such a pattern has no literal prefix, so a regex
    search would try every position of the text (measured ~100x slower than a `str.find` per stem).
    """

    def make(hay: str) -> Searcher[str]:
        starts = sorted({pos for stem in stems for pos in stem_positions(hay, stem)})
        index = 0

        def search(pos: int) -> re.Match[str] | None:
            nonlocal index
            while index < len(starts):
                start = starts[index]
                index += 1
                if start >= pos and (m := regex.match(hay, start)) is not None:
                    return m
            return None

        return search

    return make


# Characters from rare to common in ordinary text and code. A rule is gated by the rarest character of its literal:
# one `in` over a text costs a memchr for a single character but a full slow scan for a longer literal, and the
# rule's own regex search (sre's fast literal-prefix scan) follows only when that character occurs at all.
_RARITY = "~^|`\\QZJXKVWYUHGFBOqzjxkvDLMCPNRIASTEbpygw9876543210fmucldhrsnioate-_.:=/ "


def rare(literal: str) -> str:
    """The character of `literal` least likely to occur in a text (see `_RARITY`)."""
    return min(literal, key=lambda c: _RARITY.find(c) % (len(_RARITY) + 1))


__all__ = [
    "ALNUM", "DIGITS", "GLUED", "GLUED_LOWER", "HEX", "IDENT", "OUR_PLACEHOLDER", "RECORD_SEP", "UPPER_DIGIT",
    "Handler", "Hit", "Rule", "Searcher", "after_escape", "expand_left", "find_all", "forget_positions", "glued",
    "has_upper_or_digit", "is_inert_value", "lower_same_length", "rare", "shape_of", "stem_positions", "stem_searcher",
]
