"""Data a user pasted into a message: a CSV/TSV table, a JSON document, a fenced data block.

Self-play showed the failure this serves: "here is a CSV … what is the total revenue for West?" made the
model write a program over a variable `data` that nothing defined, so the program died with a NameError and
the guessed number stood. The answer-first turn now saves each block found here as a file in the session's
workspace and tells the program where it is (`agent/checking/answer_first.py`).

What counts: a fenced block tagged csv/tsv/json (or untagged, or text, when its body reads as one of them),
and, outside fences, a run of at least `MIN_ROWS` lines that each hold the same number (one or more) of commas
or tabs and read as rows (short fields, no sentence punctuation at the end), or a JSON object/array that
parses. Code blocks are never data. A false find costs little: one more file the program may ignore.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ghost_agent.text.fences import find_fences, strip_fences

MIN_ROWS = 3
MAX_CHARS = 200_000  # what one block may hold (a pasted table larger than this is not re-typed by anyone)
MAX_JSON_TRIES = 32  # closing lines tried per JSON candidate: bounded work on any text
_DATA_TAGS = {"csv": "csv", "tsv": "tsv", "json": "json"}
_LOOSE_TAGS = {"", "text", "txt", "plain", "data"}


@dataclass(frozen=True)
class InlineData:
    """One pasted block: its format ("csv", "tsv" or "json") and text."""

    kind: str
    text: str

    @property
    def suffix(self) -> str:
        return "." + self.kind


_SENTENCE_END = (".", "?", "!", ":", ";")
MAX_FIELD_WORDS = 6


def _row_like(line: str, sep: str) -> bool:
    """A line that reads as a table row, not a sentence: no sentence punctuation at its end, short fields."""
    stripped = line.strip()
    if not stripped or (stripped.endswith(_SENTENCE_END) and not stripped[-2:-1].isdigit()):
        return False
    return all(len(field.split()) <= MAX_FIELD_WORDS for field in stripped.split(sep))


def _delimited(lines: list[str], sep: str) -> bool:
    counts = {line.count(sep) for line in lines}
    return len(lines) >= 2 and len(counts) == 1 and counts.pop() >= 1 and all(_row_like(x, sep) for x in lines)


def _reads_as(body: str) -> str | None:
    stripped = body.strip()
    if not stripped:
        return None
    if stripped[0] in "[{":
        try:
            json.loads(stripped)
            return "json"
        except ValueError:
            pass
    lines = [line for line in stripped.splitlines() if line.strip()]
    if _delimited(lines, "\t"):
        return "tsv"
    if _delimited(lines, ","):
        return "csv"
    return None


def _runs(text: str) -> list[InlineData]:
    """Delimited runs and JSON documents in unfenced text."""
    found: list[InlineData] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        start = line.lstrip()[:1]
        if start in ("[", "{"):
            ends = [j for j in range(len(lines), i, -1) if lines[j - 1].rstrip()[-1:] in ("]", "}")]
            for j in ends[:MAX_JSON_TRIES]:  # the longest span that parses
                candidate = "\n".join(lines[i:j]).strip()
                if candidate[-1:] in ("]", "}"):
                    try:
                        json.loads(candidate)
                    except ValueError:
                        continue
                    found.append(InlineData("json", candidate))
                    i = j
                    break
            else:
                i += 1
            continue
        for sep, kind in (("\t", "tsv"), (",", "csv")):
            count = line.count(sep)
            if count < 1:
                continue
            j = i
            while j < len(lines) and lines[j].count(sep) == count and _row_like(lines[j], sep):
                j += 1
            if j - i >= MIN_ROWS:
                found.append(InlineData(kind, "\n".join(lines[i:j]).strip() + "\n"))
                i = j - 1
                break
        i += 1
    return found


def find_inline_data(text: str) -> list[InlineData]:
    """The data blocks pasted into `text`, in order (see the module doc)."""
    if not text:
        return []
    found: list[InlineData] = []
    for fence in find_fences(text):
        tag = fence.language.lower()
        if tag in _DATA_TAGS:
            kind: str | None = _DATA_TAGS[tag]
        elif tag in _LOOSE_TAGS:
            kind = _reads_as(fence.body)
        else:
            continue  # code
        if kind is not None and fence.body.strip():
            found.append(InlineData(kind, fence.body.strip() + "\n"))
    found += _runs(strip_fences(text, "\n"))
    return [d for d in found if len(d.text) <= MAX_CHARS]


__all__ = ["InlineData", "MIN_ROWS", "find_inline_data"]
