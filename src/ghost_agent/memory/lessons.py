"""The lesson record and the one text normalization every memory tier shares.

A lesson is "when <task>, <mistake> went wrong; <solution> fixed it", with its provenance: the trajectory
that produced it (`source_trajectory_id`, "" for legacy lessons) plus the trajectories whose near-duplicate
writes strengthened it (`merged_sources`), the session that wrote it (`session_id`, as shown: redacted) and
how it was learned (`source`). Retraction is defined over the two trajectory fields; visibility over the
session and the status (see `memory/store.py`).

`lesson_tokens` is the normalization used by the full-text index, by query building, by the relevance floor
and by write-time dedup alike, so "the query matched the lesson" means the same thing everywhere.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ghost_agent.jsonsafe import JSON
from ghost_agent.text.words import STOPWORDS

_WORD_RE = re.compile(r"\w+(?:'\w+)*")
MIN_TOKEN_CHARS = 2  # single letters ("a", "x", "l" of `wc -l`) match everything and mean nothing


def lesson_tokens(text: object) -> list[str]:
    """The content tokens of `text`, distinct, in order of first appearance.

    Lowercased NFKC words (letters, digits, underscores — `snake_case` survives whole) minus the shared
    `STOPWORDS` and one-character words; apostrophes are dropped ("o'brien" → "obrien") and a plural "s" is
    stripped ("files" → "file") so the trivial inflection does not split a match. Never raises: a non-string
    is empty. The output only ever contains `[\\w]` characters, so it is safe to quote into an FTS5 query.
    """
    if not isinstance(text, str) or not text:
        return []
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    seen: dict[str, None] = {}
    for raw in _WORD_RE.findall(text):
        if raw in STOPWORDS:
            continue
        if raw.endswith("'s"):
            raw = raw[:-2]
        token = _singular(raw.replace("'", ""))
        if len(token) >= MIN_TOKEN_CHARS and token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


# Tokens that say a request is being made, not what it is about ("write", "give", "please", "user"), and
# the words of the lessons' own frames ("requests like: ...", 'As the user put it: "..."'). A lesson that
# shares only these with a request is not about it: "I write dates as DD/MM/YYYY" has nothing for "Write a
# haiku". Relevance is computed without them (`relevance_tokens`); they still reach the full-text index.
WEAK_TOKENS = frozenset(
    "write make give get use show tell need want please request like user put answer reply help create find "
    "provide suggest know just thing way".split()
)


def relevance_tokens(tokens: list[str]) -> list[str]:
    """`tokens` without `WEAK_TOKENS` — unless that leaves nothing, then all of them (a request made only of
    weak words can still match a lesson that uses them)."""
    strong = [t for t in tokens if t not in WEAK_TOKENS]
    return strong or tokens


def _singular(token: str) -> str:
    # Deliberately tiny: plural "s" only. A real stemmer would have to run identically in SQL and Python,
    # and "parse"/"parsing" misses are cheaper than "pass"→"pa" false merges.
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


STATUSES = ("active", "pinned", "archived", "retracted")


@dataclass(frozen=True)
class Lesson:
    """One stored lesson (a snapshot: mutating the store does not change an instance already returned).

    `created_at`/`last_used`/`retracted_at` are UTC ISO-8601 strings (`last_used` is None until the lesson is
    first shown or strengthened); `uses` counts showings plus near-duplicate strengthenings. `status` is one
    of `STATUSES`: `pinned` (the operator promoted it: shown to every session, never consolidated away),
    `archived` (hidden from search and dedup, kept), `retracted` (judged wrong by the verifier, a user
    correction or the operator: never shown again, kept for the record with `retract_reason`), else `active`.
    `session_id` is the writing session as shown (redacted; "" = unscoped, e.g. legacy), `source` how the
    lesson was learned (`recovery`, `reflection`, `operator`, `legacy` …).
    """

    id: str
    task: str
    mistake: str
    solution: str
    source_trajectory_id: str = ""
    created_at: str = ""
    uses: int = 0
    last_used: str | None = None
    pinned: bool = False
    archived: bool = False
    merged_sources: tuple[str, ...] = field(default=())
    session_id: str = ""
    source: str = ""
    retracted_at: str | None = None
    retract_reason: str = ""

    @property
    def status(self) -> str:
        """`retracted`, `archived`, `pinned` or `active` (in that precedence)."""
        if self.retracted_at:
            return "retracted"
        if self.archived:
            return "archived"
        return "pinned" if self.pinned else "active"

    def to_dict(self) -> JSON:
        """A JSON-ready dict of every field (`merged_sources` as a list) plus the derived `status`."""
        return {
            "id": self.id,
            "status": self.status,
            "task": self.task,
            "mistake": self.mistake,
            "solution": self.solution,
            "source": self.source,
            "session_id": self.session_id,
            "source_trajectory_id": self.source_trajectory_id,
            "created_at": self.created_at,
            "uses": self.uses,
            "last_used": self.last_used,
            "pinned": self.pinned,
            "archived": self.archived,
            "retracted_at": self.retracted_at,
            "retract_reason": self.retract_reason,
            "merged_sources": list(self.merged_sources),
        }

    @classmethod
    def from_dict(cls, data: JSON) -> Lesson:
        """Parse a lesson; `id` is required, everything else defaults (legacy provenance reads back as "")."""
        if not isinstance(data.get("id"), str) or not data["id"]:
            raise ValueError("a lesson needs a non-empty string id")
        last_used = data.get("last_used")
        retracted_at = data.get("retracted_at")
        return cls(
            id=data["id"],
            task=str(data.get("task") or ""),
            mistake=str(data.get("mistake") or ""),
            solution=str(data.get("solution") or ""),
            source_trajectory_id=str(data.get("source_trajectory_id") or ""),
            created_at=str(data.get("created_at") or ""),
            uses=int(data.get("uses") or 0),
            last_used=str(last_used) if last_used else None,
            pinned=bool(data.get("pinned", False)),
            archived=bool(data.get("archived", False)),
            merged_sources=tuple(str(s) for s in data.get("merged_sources") or ()),
            session_id=str(data.get("session_id") or ""),
            source=str(data.get("source") or ""),
            retracted_at=str(retracted_at) if retracted_at else None,
            retract_reason=str(data.get("retract_reason") or ""),
        )

    @property
    def text(self) -> str:
        """task, mistake and solution joined: the text dedup and relevance are computed over."""
        return "\n".join((self.task, self.mistake, self.solution))


@dataclass(frozen=True)
class ScoredLesson:
    """A search hit: `score` is the BM25 score (higher is better, comparable only within one search) and
    `relevance` the fraction of the query's content tokens the lesson contains (0..1)."""

    lesson: Lesson
    score: float
    relevance: float

    def to_dict(self) -> JSON:
        """The lesson's dict plus `score` and `relevance`."""
        return {**self.lesson.to_dict(), "score": self.score, "relevance": self.relevance}


@dataclass(frozen=True)
class LearnResult:
    """What `learn_lesson` did: `created` a new lesson, or strengthened `merged_into` (then `lesson` is the
    existing lesson after the update)."""

    lesson: Lesson
    created: bool
    merged_into: str | None = None


__all__ = [
    "JSON",
    "STATUSES",
    "WEAK_TOKENS",
    "LearnResult",
    "Lesson",
    "ScoredLesson",
    "lesson_tokens",
    "relevance_tokens",
]
