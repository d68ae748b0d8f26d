"""Mining frequent tool-call sequences: pure functions, no I/O (the phase runs them in a worker thread).

A trajectory's **sequence** is its successful tool steps in order, each normalised to a *token*: the tool
name and the *shape* of its arguments — which keys were given, the value of enum-like ones
(`file_system(action=list)`), the programs a shell command runs (`bash(command=wc|tail)`), the modules a
Python program imports (`python(code=import pandas)`). Free text (paths, file contents, code, queries) is
reduced to its key, so two turns that did the same thing to different files share a token.

A **candidate** is a contiguous run of 2 … `max_len` tokens (an n-gram) found in at least `min_support`
validator-passing trajectories; support counts trajectories, not occurrences. Only *closed* runs are
proposed: a run is dropped when a run one step longer that contains it has the same support (it says
nothing the longer one does not).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.trajectories.record import Source, Step, Trajectory

MIN_LEN = 2
DEFAULT_MAX_LEN = 4
DEFAULT_MIN_SUPPORT = 3
MAX_ARG_KEYS = 6
MAX_PROGRAMS = 3
MAX_IMPORTS = 3
KEEP_IDS = 20  # supporting trajectory ids kept per candidate (the most recent)
KEEP_SAMPLES = 3  # sample requests kept per candidate
SAMPLE_CHARS = 200
SEP = "\x1f"  # joins tokens into a candidate's key (never inside a token)
ARROW = " → "
# Sources whose trajectories are turns of work (a reflection record is a critique, not a turn).
MINED_SOURCES = frozenset(s.value for s in Source) - {Source.REFLECTION.value}

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,23}")
_ENUMISH = re.compile(r"[a-z][a-z0-9_-]{0,15}")
_PROGRAM = re.compile(r"[A-Za-z0-9_.+-]{1,24}")
_FREE_TEXT = frozenset({"code", "command", "content", "stdin", "query", "path", "pattern", "text", "url", "sql"})
_SEGMENTS = re.compile(r"\|\||&&|[|;\n&]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "timeout", "xargs", "command", "exec"})
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_][\w. ,]*))", re.M)


def step_token(tool_name: str | None, args: Mapping[str, Any] | None) -> str | None:
    """The normalised token of one tool call (None when there is no usable tool name)."""
    if not isinstance(tool_name, str) or not _NAME.fullmatch(tool_name):
        return None
    parts: list[str] = []
    for key in sorted(k for k in (args or {}) if isinstance(k, str))[:MAX_ARG_KEYS]:
        if not _KEY.fullmatch(key):
            continue
        shape = _shape(key, (args or {})[key])
        parts.append(f"{key}={shape}" if shape else key)
    return f"{tool_name}({', '.join(parts)})"


def _shape(key: str, value: Any) -> str:
    if not isinstance(value, str):
        return ""
    if key == "command":
        return "|".join(programs(value))
    if key == "code":
        found = imports(value)
        return "import " + ",".join(found) if found else ""
    if key not in _FREE_TEXT and _ENUMISH.fullmatch(value):
        return value
    return ""


def programs(command: str) -> list[str]:
    """The programs a shell command runs, in order (first word of each pipeline/list segment, basename)."""
    out: list[str] = []
    for segment in _SEGMENTS.split(command):
        words = segment.split()
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS or words[0].startswith("-")):
            words = words[1:]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1].strip("'\"()")
        if _PROGRAM.fullmatch(name) and name not in out:
            out.append(name)
        if len(out) >= MAX_PROGRAMS:
            break
    return out


def imports(code: str) -> list[str]:
    """Top-level modules a Python program imports (sorted, at most `MAX_IMPORTS`)."""
    found: set[str] = set()
    for match in _IMPORT.finditer(code):
        if match.group(1):
            found.add(match.group(1))
        else:
            for item in match.group(2).split(","):
                name = item.strip().split(" ")[0].split(".")[0]
                if name.isidentifier():
                    found.add(name)
    return sorted(found)[:MAX_IMPORTS]


def sequence(steps: Iterable[Step]) -> list[str]:
    """The tokens of a trajectory's successful tool steps, in order (loop-guard replays excluded)."""
    out: list[str] = []
    for step in steps:
        if not step.ok or step.error or step.extra.get("loop_guard"):
            continue
        token = step_token(step.tool_name, step.tool_args)
        if token is not None:
            out.append(token)
    return out


@dataclass(frozen=True)
class Observed:
    """What mining keeps of one trajectory: its id, when, its recorded outcome, its request, its tokens."""

    id: str
    ts: str
    source: str
    outcome: str
    request: str
    tokens: tuple[str, ...]


def observe(traj: Trajectory) -> Observed | None:
    """The mining view of `traj`, or None when it cannot contribute (not a turn, fewer than 2 tool steps)."""
    if traj.source not in MINED_SOURCES:
        return None
    tokens = sequence(traj.steps)
    if len(tokens) < MIN_LEN:
        return None
    request = " ".join(traj.user_request.split())[:SAMPLE_CHARS]
    return Observed(traj.id, traj.ts, traj.source, traj.outcome.value, request, tuple(tokens))


def ngrams(tokens: Sequence[str], max_len: int = DEFAULT_MAX_LEN) -> set[tuple[str, ...]]:
    """Every contiguous run of 2 … `max_len` tokens (each distinct run once)."""
    out: set[tuple[str, ...]] = set()
    n = len(tokens)
    for length in range(MIN_LEN, min(max_len, n) + 1):
        for start in range(n - length + 1):
            out.add(tuple(tokens[start:start + length]))
    return out


def candidate_key(steps: Sequence[str]) -> str:
    """The stored key of a run of tokens."""
    return SEP.join(steps)


def candidate_id(steps: Sequence[str]) -> str:
    """A stable short id for a run of tokens (the same sequence always gets the same id)."""
    return hashlib.sha256(candidate_key(steps).encode("utf-8")).hexdigest()[:12]


def render(steps: Sequence[str]) -> str:
    """A run of tokens as one readable line."""
    return ARROW.join(steps)


@dataclass
class Support:
    """One run of tokens and the passing trajectories that contain it (ids oldest first, capped on output)."""

    steps: tuple[str, ...]
    ids: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def id(self) -> str:
        return candidate_id(self.steps)

    @property
    def key(self) -> str:
        return candidate_key(self.steps)

    def samples(self) -> list[str]:
        """Up to `KEEP_SAMPLES` distinct sample requests, shortest first (the most general wording)."""
        distinct = sorted({r for r in self.requests if r}, key=lambda r: (len(r), r))
        return distinct[:KEEP_SAMPLES]

    def recent_ids(self) -> list[str]:
        """The `KEEP_IDS` most recent supporting trajectory ids."""
        return self.ids[-KEEP_IDS:]


def count_support(passing: Iterable[Observed], max_len: int = DEFAULT_MAX_LEN) -> dict[tuple[str, ...], Support]:
    """Support of every run in the passing trajectories (given oldest first)."""
    table: dict[tuple[str, ...], Support] = {}
    for obs in passing:
        for gram in ngrams(obs.tokens, max_len):
            entry = table.get(gram)
            if entry is None:
                entry = table[gram] = Support(gram)
            entry.ids.append(obs.id)
            if obs.request and len(entry.requests) < 4 * KEEP_SAMPLES:
                entry.requests.append(obs.request)
    return table


def closed(frequent: Mapping[tuple[str, ...], Support]) -> list[Support]:
    """The runs not subsumed by a one-step-longer run of equal support, by support (desc), then length (desc),
    then key — a deterministic order."""
    subsumed: set[tuple[str, ...]] = set()
    for gram, entry in frequent.items():
        if len(gram) <= MIN_LEN:
            continue
        for sub in (gram[1:], gram[:-1]):
            inner = frequent.get(sub)
            if inner is not None and inner.count == entry.count:
                subsumed.add(sub)
    kept = [entry for gram, entry in frequent.items() if gram not in subsumed]
    kept.sort(key=lambda e: (-e.count, -len(e.steps), e.key))
    return kept


def mine(
    observed: Iterable[Observed],
    *,
    min_support: int = DEFAULT_MIN_SUPPORT,
    max_len: int = DEFAULT_MAX_LEN,
    overlay: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[Support], dict[str, Support]]:
    """Candidates from `observed` (oldest first): only trajectories whose outcome — the latest correction's
    when `overlay` has one, else the recorded one — is PASSED count.

    Returns (the closed runs with support ≥ `min_support`, every frequent run by key — for updating the
    support of runs already promoted or rejected).
    """
    overlay = overlay or {}

    def passed(obs: Observed) -> bool:
        correction = overlay.get(obs.id)
        outcome = correction.get("outcome") if correction is not None else obs.outcome
        return outcome == "passed"

    table = count_support((o for o in observed if passed(o)), max_len)
    frequent = {gram: entry for gram, entry in table.items() if entry.count >= max(min_support, 1)}
    return closed(frequent), {entry.key: entry for entry in table.values()}


__all__ = [
    "ARROW",
    "DEFAULT_MAX_LEN",
    "DEFAULT_MIN_SUPPORT",
    "MINED_SOURCES",
    "Observed",
    "Support",
    "candidate_id",
    "candidate_key",
    "closed",
    "count_support",
    "imports",
    "mine",
    "ngrams",
    "observe",
    "programs",
    "render",
    "sequence",
    "step_token",
]
