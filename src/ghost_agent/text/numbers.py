"""Reading numbers out of a reply: `numbers_in` (every number, in order) and `last_number` (the answer's number).

Shared by the verifiers (`numeric_match`, `answer_line`, `eval/verifiers.py`) and the `number` check of the
`delivered` verifier (`eval/delivery.py`); it imports neither, so both can import it.
"""

from __future__ import annotations

import re

# A number: thousands groups with commas ("338,350", "-1,234.5"), or plain digits with an optional fraction and
# exponent. A minus sign counts only when it does not follow a word character ("pages 3-5" ends with 5, not -5).
_NUMBER = re.compile(
    r"(?:(?<![\w.])[-\u2212])?"
    r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+(?!\d|,\d)(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+)"
)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def _to_float(token: str) -> float:
    return float(token.replace(",", "").replace("\u2212", "-"))


def numbers_in(text: str) -> list[float]:
    """Every number in `text`, in order (thousands commas understood, as in `last_number`)."""
    return [_to_float(m.group(0)) for m in _NUMBER.finditer(text)]


def last_number(text: str) -> float | None:
    """The last number in `text` (inside the last `\\boxed{...}` when there is one), or None.

    Commas as thousands separators are understood ("338,350" is 338350); "1,2,3" is three numbers.
    """
    boxed = _BOXED.findall(text)
    if boxed:
        inner = [m.group(0) for m in _NUMBER.finditer(boxed[-1])]
        if inner:
            return _to_float(inner[-1])
    found = [m.group(0) for m in _NUMBER.finditer(text)]
    return _to_float(found[-1]) if found else None


__all__ = ["last_number", "numbers_in"]
