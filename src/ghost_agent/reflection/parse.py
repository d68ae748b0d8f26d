"""Lenient reading of a critique reply into a lesson draft `(task, mistake, solution)`.

Small local models answer the critique prompt in many shapes: the JSON object asked for, the same object in a
```json fence or wrapped in prose, an object nested under `"lesson"`, keys named differently ("fix", "plan",
"diagnosis"), or plain labelled lines ("Task: ...", "**Solution:** ..."). Everything here degrades to a
`NoLesson` with a reason rather than raising, so the caller can log why nothing was learned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ghost_agent.text.fences import is_fence_line
from ghost_agent.text.lenient_json import iter_json

TASK_CHARS = 200
MISTAKE_CHARS = 400
SOLUTION_CHARS = 600
MAX_JSON_VALUES = 16  # JSON values looked at before giving up on the JSON shapes

UNPARSEABLE = "unparseable reflection response"
EMPTY = "empty reflection response"
DECLINED = "the critique found nothing to learn"
NO_SOLUTION = "the lesson has no solution"

# Key spellings models use for each field (lowercased, spaces and dashes as underscores).
_KEYS: dict[str, tuple[str, ...]] = {
    "task": ("task", "task_kind", "request_kind", "kind_of_request", "kind", "request_type", "task_type",
             "context", "when", "situation", "scope"),
    "mistake": ("mistake", "error", "problem", "what_went_wrong", "diagnosis", "issue", "failure", "cause",
                "root_cause", "wrong"),
    "solution": ("solution", "fix", "correction", "plan", "instead", "what_to_do", "do_instead", "lesson_text",
                 "advice", "remedy", "correct_approach", "next_time", "rule", "guidance"),
}
_NULL_WORDS = frozenset({"", "none", "null", "n/a", "na", "nothing", "no lesson", "-", "unknown"})
_DECLINE_RE = re.compile(
    r"^\W*(?:no lesson|nothing to learn|no_lesson|none\W*$|null\W*$|n/a\W*$)", re.I
)
_LABEL_RE = re.compile(
    r"^[ \t>*#\-\d.)]*"  # bullets, numbering, quote marks, markdown headings
    r"[*_`\"']*([A-Za-z][A-Za-z _\-]{1,30}?)[*_`\"']*"  # the label, maybe bold/quoted
    r"(?:[ \t]*[:=]|[ \t]+[-–—])[*_`\"' \t]*"  # separator ("Task:", "Task =", "Task - "), maybe closing bold
    r"(.*)$"
)
_WS_RE = re.compile(r"\s+")
_EDGE_RE = re.compile(r"^[\s*_`\"'“”‘’,]+|[\s*_`\"'“”‘’,]+$")


@dataclass(frozen=True)
class LessonDraft:
    """A lesson as the critique wrote it (cleaned and clipped, not yet vetted by the quality rules)."""

    task: str
    mistake: str
    solution: str

    def to_dict(self) -> dict[str, str]:
        """The three fields as a dict."""
        return {"task": self.task, "mistake": self.mistake, "solution": self.solution}


@dataclass(frozen=True)
class NoLesson:
    """Why a critique reply produced no lesson."""

    reason: str


ParseResult = LessonDraft | NoLesson


def clean_field(value: Any, limit: int) -> str:
    """A field value as one tidy line: whitespace squashed, quotes/markdown at the edges stripped, clipped."""
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if isinstance(v, (str, int, float)))
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return ""
    text = _EDGE_RE.sub("", _WS_RE.sub(" ", str(value)))
    if text.lower() in _NULL_WORDS:
        return ""
    if len(text) > limit:
        cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
        text = cut.rstrip(" ,;:") + "..."
    return text


def _norm_key(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip().lower())


def _field_of(key: str) -> str | None:
    norm = _norm_key(key)
    for name, spellings in _KEYS.items():
        if norm in spellings:
            return name
    return None


def _from_mapping(data: Mapping[str, Any]) -> ParseResult | None:
    """A draft from a JSON object (or the object nested under "lesson"); None when it has none of our keys."""
    lowered = {_norm_key(str(k)): v for k, v in data.items()}
    if "lesson" in lowered:
        inner = lowered["lesson"]
        if inner is None or (isinstance(inner, str) and inner.strip().lower() in _NULL_WORDS):
            if not any(_field_of(k) for k in lowered if k != "lesson"):
                return NoLesson(DECLINED)
        elif isinstance(inner, Mapping):
            nested = _from_mapping(inner)
            if nested is not None:
                return nested
    found: dict[str, str] = {}
    for key, value in data.items():
        name = _field_of(str(key))
        if name is not None and name not in found:
            found[name] = clean_field(value, _limit(name))
    if not found:
        # {"lesson": "When X, do Y"}: one free-text lesson; the quality rules scope it from the request.
        text = lowered.get("lesson")
        if isinstance(text, str) and text.strip():
            return _draft({"solution": clean_field(text, SOLUTION_CHARS)})
        return None
    return _draft(found)


def _limit(name: str) -> int:
    return {"task": TASK_CHARS, "mistake": MISTAKE_CHARS}.get(name, SOLUTION_CHARS)


def _draft(found: Mapping[str, str]) -> ParseResult:
    solution = found.get("solution", "")
    if not solution:
        return NoLesson(NO_SOLUTION)
    return LessonDraft(task=found.get("task", ""), mistake=found.get("mistake", ""), solution=solution)


def _from_labels(text: str) -> ParseResult | None:
    """A draft from labelled lines; a field runs on over unlabelled lines until the next label."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if is_fence_line(line):
            continue
        match = _LABEL_RE.match(line)
        name = _field_of(match.group(1)) if match else None
        if match and name is not None:
            current = name if name not in found else None  # a second "Task:" is the model repeating itself
            if current is not None:
                found[current] = [match.group(2)]
            continue
        if match and _norm_key(match.group(1)) in ("lesson", "reflection", "critique", "analysis"):
            current = None  # a heading like "Lesson:" that introduces the fields
            continue
        if current is not None:
            if not line.strip():
                current = None
            else:
                found[current].append(line)
    if not found:
        return None
    return _draft({k: clean_field(" ".join(v), _limit(k)) for k, v in found.items()})


def parse_lesson(text: Any) -> ParseResult:
    """The lesson in a critique reply, read leniently; never raises.

    Order: JSON values (whole reply, fences, embedded in prose; the first carrying one of our keys wins), then
    labelled lines. An explicit refusal ("no lesson", `{"lesson": null}`) is `NoLesson(DECLINED)`; a reply
    with no recognisable fields is `NoLesson(UNPARSEABLE)`; fields without a solution are `NoLesson(NO_SOLUTION)`.
    """
    if not isinstance(text, str) or not text.strip():
        return NoLesson(EMPTY)
    for n, value in enumerate(iter_json(text)):
        if n >= MAX_JSON_VALUES:
            break
        candidates = value if isinstance(value, list) else [value]
        for item in candidates:
            if isinstance(item, Mapping):
                result = _from_mapping(item)
                if result is not None:
                    return result
            elif item is None and n == 0:
                return NoLesson(DECLINED)
    labelled = _from_labels(text)
    if labelled is not None:
        return labelled
    if _DECLINE_RE.match(text.strip()):
        return NoLesson(DECLINED)
    return NoLesson(UNPARSEABLE)


__all__ = [
    "DECLINED",
    "EMPTY",
    "MISTAKE_CHARS",
    "NO_SOLUTION",
    "SOLUTION_CHARS",
    "TASK_CHARS",
    "UNPARSEABLE",
    "LessonDraft",
    "NoLesson",
    "ParseResult",
    "clean_field",
    "parse_lesson",
]
