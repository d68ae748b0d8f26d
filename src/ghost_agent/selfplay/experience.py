"""The experience bank: every validated self-play solution, kept as a worked example for similar requests (DESIGN §8).

An `Example` is a request the daemon solved and a validator checked, with the answer that passed. A turn is shown
the few most similar ones as the delimited examples block (`memory/examples.py`, the `ExperienceStage`), in
front of the last user message, never as system text. Self-play requests are the daemon's own, with no user
text in them, so every session may see them.

Retrieval is lexical, by what a request asks, never by the template that made it (the payoff is measured on
requests written by someone else): the request's content words (`text/words.py`) without its data — lines
that look like table rows, and any token with a digit — weighted by rarity in the bank (idf) and compared by
cosine; below `SIMILARITY_FLOOR`, or with fewer than `MIN_SHARED` words in common, nothing is shown, so an
unrelated request gets no example. Of two results
that ask almost the same (`DIVERSE_JACCARD`), only the better one is returned: two copies of one template
would waste the block.

Rank = similarity × value, where value is a Beta mean over what happened after the example was shown:
`(2 + passes) / (3 + passes + fails)` — a validated solution starts at 2/3, a failure after being shown
lowers it, a pass raises it, and one below `RETIRE_VALUE` is no longer shown. The bank is bounded
(`max_examples`): past it, the lowest value goes first (fewest confirmations, then the oldest).
Deduplicated: the same request (whitespace and case aside) is kept once, and so is a near-duplicate (content
words, numbers included, Jaccard ≥ `DUPLICATE_JACCARD`); a repeat only adds to the kept one's `support`.

Storage: one SQLite file in WAL (like the lesson store) under `system/selfplay/`, with the index in memory
(search costs well under a millisecond at 500 examples); a write by another process (`ghost-agent selfplay
run` beside the daemon) is noticed through `PRAGMA data_version` and reloaded. A corrupt or unreadable file is
set aside (`*.corrupt-<time>`), reported (`recovered_from`, a `experience_bank_corrupt` warning) and a fresh
bank started: it refills from practice, and a broken bank never costs a turn. Blocking calls have `a*`
wrappers that run in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import math
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger
from ghost_agent.text.fences import find_fences
from ghost_agent.text.words import content_tokens, jaccard

log = get_logger("selfplay")

SCHEMA_VERSION = 1
MAX_EXAMPLES = 500
ANSWER_CHARS = 2400  # a longer answer keeps only its code, and is not kept when even that is longer
REQUEST_CHARS = 8000  # what is stored of a request (its words are taken from the whole of it)
SIMILARITY_FLOOR = 0.25
MIN_SHARED = 2  # words a request must share with an example: one common word is no evidence
DUPLICATE_JACCARD = 0.9
DIVERSE_JACCARD = 0.8
RETIRE_VALUE = 0.3
SCAN_EXTRA = 24  # ranked results a search looks through beyond `k` for ones not too alike (bounds its cost)
PRIOR_PASSES, PRIOR_FAILS = 2, 1  # the validated pass it came from, and a prior of one pass and one failure

_SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    id TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    answer TEXT NOT NULL,
    cluster TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'self_play',
    trajectory_id TEXT NOT NULL DEFAULT '',
    request_key TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    support INTEGER NOT NULL DEFAULT 1,
    shown INTEGER NOT NULL DEFAULT 0,
    passes INTEGER NOT NULL DEFAULT 0,
    fails INTEGER NOT NULL DEFAULT 0,
    last_shown REAL
);
"""
_COLUMNS = ("id", "request", "answer", "cluster", "task_id", "source", "trajectory_id", "created_at", "support",
            "shown", "passes", "fails", "last_shown")
_SEPARATORS = re.compile(r"[,\t|;]")
_DIGIT = re.compile(r"\d")


class ExperienceBankError(RuntimeError):
    """The bank cannot be opened or written (even a fresh file fails: permissions, a full disk)."""


@dataclass(frozen=True)
class Example:
    """One worked example; `score` is the similarity to the query that found it (0.0 outside a search)."""

    id: str
    request: str
    answer: str
    cluster: str = ""
    task_id: str = ""
    source: str = "self_play"
    trajectory_id: str = ""
    created_at: float = 0.0
    support: int = 1
    shown: int = 0
    passes: int = 0
    fails: int = 0
    last_shown: float | None = None
    score: float = 0.0

    @property
    def value(self) -> float:
        """The Beta mean of how it fared after being shown (2/3 for a fresh one)."""
        return (PRIOR_PASSES + self.passes) / (PRIOR_PASSES + PRIOR_FAILS + self.passes + self.fails)

    @property
    def rank(self) -> float:
        """What orders search results: similarity × value."""
        return self.score * self.value

    def ref(self) -> JSON:
        """What a trajectory records of a shown example (`extra.examples_shown`)."""
        return {"id": self.id, "score": round(self.score, 3), "value": round(self.value, 3),
                "task_id": self.task_id, "cluster": self.cluster}

    def to_dict(self) -> JSON:
        return {c: getattr(self, c) for c in (*_COLUMNS, "score")} | {"value": round(self.value, 3)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Example:
        return cls(**{k: data[k] for k in (*_COLUMNS, "score") if k in data})


def ask_tokens(text: str) -> frozenset[str]:
    """The words that say what `text` asks: content words of its lines that are not table rows (more `,` `;`
    tab or `|` than spaces, at least two), without any token holding a digit or a single character."""
    lines = (ln for ln in text.splitlines() if not _is_data_line(ln))
    return frozenset(t for t in content_tokens("\n".join(lines)) if len(t) > 1 and not _DIGIT.search(t))


def request_key(request: str) -> str:
    """The exact-duplicate key: the request lowercased with whitespace squashed, hashed."""
    return hashlib.sha256(" ".join(request.lower().split()).encode("utf-8", "surrogatepass")).hexdigest()


def clip_answer(answer: str, limit: int = ANSWER_CHARS) -> str | None:
    """What is stored of a passing answer: all of it when it fits; else its fenced code blocks, when those fit;
    else None (a cut program would teach a broken one)."""
    answer = answer.strip()
    if len(answer) <= limit:
        return answer or None
    code = "\n\n".join(f"```{f.info}\n{f.body.strip(chr(10))}\n```" for f in find_fences(answer))
    return code if code and len(code) <= limit else None


@dataclass
class _Entry:
    example: Example
    ask: frozenset[str]
    words: frozenset[str]  # all content words, numbers included: what near-duplicates are judged by
    key: str  # `request_key` of its request

    def duplicates(self, key: str, words: frozenset[str]) -> bool:
        """The same request (exactly, or near enough) as the one with this key and these words."""
        return self.key == key or jaccard(self.words, words) >= DUPLICATE_JACCARD


@dataclass
class _Index:
    """Search arrays: row order, each word's rows and squared idf weight, each row's norm and value."""

    ids: list[str]
    rows: dict[str, int]
    postings: dict[str, np.ndarray]
    weights: dict[str, float]
    norms: np.ndarray
    values: np.ndarray


class ExperienceBank:
    """Worked examples at `path` (None: in memory only). Thread-safe; the `a*` methods run in a thread."""

    def __init__(self, path: Path | None = None, *, max_examples: int = MAX_EXAMPLES,
                 clock: Any = time.time) -> None:
        self.path = path
        self.max_examples = max(1, max_examples)
        self.recovered_from: Path | None = None
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._postings: dict[str, set[str]] = {}
        self._arrays: _Index | None = None  # what search reads; None: rebuild (after an example came or went)
        self._version = -1
        self._conn: sqlite3.Connection | None = self._open()
        with self._lock:
            self._reload()

    # ---- lifecycle -------------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        target = ":memory:" if self.path is None else str(self.path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return _connect(target)
        except (sqlite3.Error, ValueError) as exc:
            if self.path is None:
                raise ExperienceBankError(f"experience bank: {exc}") from exc
            self.recovered_from = _set_aside(self.path)
            log.warning("experience_bank_corrupt", path=str(self.path), set_aside=str(self.recovered_from),
                        error=repr(exc))
        try:
            return _connect(target)
        except (sqlite3.Error, ValueError) as exc:
            raise ExperienceBankError(f"experience bank {self.path} cannot be opened: {exc}") from exc

    def close(self) -> None:
        """Close the file (idempotent); later calls raise `ExperienceBankError`."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def copy_to(self, dest: Path) -> int:
        """Write a consistent copy of the bank to `dest` (SQLite's online backup: the WAL's rows included, safe
        while another process writes) and return how many examples it holds. For benches and exports."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            target = sqlite3.connect(str(dest))
            try:
                self._live().backup(target)
            except sqlite3.Error as exc:
                raise ExperienceBankError(f"experience bank copy to {dest} failed: {exc}") from exc
            finally:
                target.close()
            self._refresh(self._live())
            return len(self._entries)

    def __enter__(self) -> ExperienceBank:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._live()
            try:
                conn.execute("BEGIN IMMEDIATE")
                self._refresh(conn)
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    self._version = -1  # the memory index may be ahead of the file: reload on next use
                    raise
                self._version = _data_version(conn)
            except sqlite3.Error as exc:
                raise ExperienceBankError(f"experience bank write failed: {exc}") from exc

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ExperienceBankError("the experience bank is closed")
        return self._conn

    def _refresh(self, conn: sqlite3.Connection) -> None:
        """Reload the index when another connection changed the file (the lock is held)."""
        if _data_version(conn) != self._version:
            self._reload()

    def _reload(self) -> None:
        conn = self._live()
        rows = conn.execute(f"SELECT {', '.join(_COLUMNS)}, request_key FROM examples").fetchall()
        self._entries, self._postings, self._arrays = {}, {}, None
        for row in rows:
            self._index(Example(**dict(zip(_COLUMNS, row[:-1], strict=True))), row[-1])
        self._version = _data_version(conn)

    def _index(self, example: Example, key: str) -> None:
        entry = _Entry(example, ask_tokens(example.request), content_tokens(example.request), key)
        self._entries[example.id] = entry
        for token in entry.ask:
            self._postings.setdefault(token, set()).add(example.id)
        self._arrays = None

    def _unindex(self, example_id: str) -> None:
        entry = self._entries.pop(example_id, None)
        if entry is None:
            return
        for token in entry.ask:
            ids = self._postings.get(token)
            if ids is not None:
                ids.discard(example_id)
                if not ids:
                    del self._postings[token]
        self._arrays = None

    # ---- writing ---------------------------------------------------------------------------------------

    def add(self, request: str, answer: str, *, cluster: str = "", task_id: str = "", source: str = "self_play",
            trajectory_id: str = "") -> Example | None:
        """Keep a validated answer to `request`. Returns the kept example: a new one, or the one it duplicates
        (its `support` counted up). None when there is nothing to keep (an empty request, or an answer too long
        to keep whole, see `clip_answer`)."""
        kept = clip_answer(answer)
        request = request.strip()
        if kept is None or not request:
            return None
        key, words = request_key(request), content_tokens(request)
        with self._write() as conn:
            same = next((e.example for e in self._entries.values() if e.duplicates(key, words)), None)
            if same is not None:
                conn.execute("UPDATE examples SET support = support + 1 WHERE id = ?", (same.id,))
                updated = replace(same, support=same.support + 1)
                self._entries[same.id].example = updated
                return updated
            example = Example(id=uuid.uuid4().hex[:16], request=request[:REQUEST_CHARS], answer=kept, cluster=cluster,
                              task_id=task_id, source=source, trajectory_id=trajectory_id, created_at=self._clock())
            conn.execute(
                f"INSERT INTO examples ({', '.join(_COLUMNS)}, request_key) VALUES ({', '.join('?' * 14)})",
                (*(getattr(example, c) for c in _COLUMNS), key),
            )
            self._index(example, key)
            evicted = self._evict(conn)
        if evicted:
            log.info("experience_bank_evicted", ids=evicted, size=len(self._entries))
        return example if example.id in self._entries else None

    def _evict(self, conn: sqlite3.Connection) -> list[str]:
        over = len(self._entries) - self.max_examples
        if over <= 0:
            return []
        order = sorted(self._entries.values(), key=lambda e: (e.example.value, e.example.support,
                                                              e.example.last_shown or e.example.created_at))
        gone = [e.example.id for e in order[:over]]
        conn.executemany("DELETE FROM examples WHERE id = ?", [(i,) for i in gone])
        for example_id in gone:
            self._unindex(example_id)
        return gone

    def mark_shown(self, ids: Iterable[str]) -> None:
        """Count that these examples were shown to a turn."""
        now = self._clock()
        self._bump(ids, "shown = shown + 1, last_shown = ?", (now,),
                   lambda e: replace(e, shown=e.shown + 1, last_shown=now))

    def mark_outcome(self, ids: Iterable[str], passed: bool) -> None:
        """What followed a turn these examples were shown to: a pass raises their value, a failure lowers it."""
        if passed:
            self._bump(ids, "passes = passes + 1", (), lambda e: replace(e, passes=e.passes + 1))
        else:
            self._bump(ids, "fails = fails + 1", (), lambda e: replace(e, fails=e.fails + 1))

    def _bump(self, ids: Iterable[str], assignment: str, args: tuple[Any, ...], change: Any) -> None:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        with self._write() as conn:
            known = [i for i in wanted if i in self._entries]
            conn.executemany(f"UPDATE examples SET {assignment} WHERE id = ?", [(*args, i) for i in known])
            for example_id in known:
                entry = self._entries[example_id]
                entry.example = change(entry.example)
                if self._arrays is not None:
                    self._arrays.values[self._arrays.rows[example_id]] = entry.example.value

    # ---- reading ---------------------------------------------------------------------------------------

    def search(self, query: str, k: int, *, exclude_same: bool = False) -> list[Example]:
        """Up to `k` examples for `query`, best rank first, each with its similarity as `score`; only those at
        or above `SIMILARITY_FLOOR` and not retired. `exclude_same`: leave out an example of this very request
        (the same text, whitespace and case aside: a practice turn must not be shown its own task's answer; a
        near-duplicate is another seed of its template, whose data differs, so it may be shown)."""
        asked = ask_tokens(query)
        if k <= 0 or not asked:
            return []
        with self._lock:
            self._refresh(self._live())
            found = self._rank(asked)
            key = request_key(query.strip()) if exclude_same else ""
            out: list[Example] = []
            for score, example_id in itertools.islice(found, k + SCAN_EXTRA):
                entry = self._entries[example_id]
                if exclude_same and entry.key == key:
                    continue
                if any(jaccard(entry.ask, self._entries[o.id].ask) >= DIVERSE_JACCARD for o in out):
                    continue
                out.append(replace(entry.example, score=score))
                if len(out) == k:
                    break
        return out

    def _rank(self, asked: frozenset[str]) -> Iterator[tuple[float, str]]:
        """(similarity, id) of every live example at or above the floor, best rank first (the lock is held)."""
        built = self._built()
        n = len(built.ids)
        if n == 0:
            return
        unseen = math.log1p(n) ** 2  # a word no example has weighs as one that a single example has
        hits = [(built.postings[t], built.weights[t]) for t in asked if t in built.postings]
        query_norm = sum(w for _, w in hits) + unseen * (len(asked) - len(hits))
        if not hits:
            return
        rows = np.concatenate([r for r, _ in hits])
        dots = np.bincount(rows, weights=np.repeat([w for _, w in hits], [len(r) for r, _ in hits]), minlength=n)
        shared = np.bincount(rows, minlength=n)
        similarity = dots / (math.sqrt(query_norm) * built.norms)
        eligible = np.flatnonzero((similarity >= SIMILARITY_FLOOR) & (shared >= MIN_SHARED)
                                  & (built.values >= RETIRE_VALUE))
        ranks = similarity[eligible] * built.values[eligible]
        for row in eligible[np.lexsort((eligible, -ranks))]:
            yield float(similarity[row]), built.ids[row]

    def _built(self) -> _Index:
        """The search arrays for the current examples, rebuilt after a change (the lock is held)."""
        if self._arrays is None:
            ids = list(self._entries)
            rows = {example_id: row for row, example_id in enumerate(ids)}
            n = len(ids)
            postings = {t: np.fromiter((rows[i] for i in members), dtype=np.intp, count=len(members))
                        for t, members in self._postings.items()}
            weights = {t: math.log1p(n / len(r)) ** 2 for t, r in postings.items()}
            norms = np.zeros(n)
            for token, r in postings.items():
                norms[r] += weights[token]
            norms = np.sqrt(norms)
            norms[norms == 0] = np.inf  # an example without words is similar to nothing
            values = np.array([self._entries[i].example.value for i in ids], dtype=float)
            self._arrays = _Index(ids, rows, postings, weights, norms, values)
        return self._arrays

    def get(self, example_id: str) -> Example | None:
        """One example by id."""
        with self._lock:
            self._refresh(self._live())
            entry = self._entries.get(example_id)
            return None if entry is None else entry.example

    def examples(self) -> list[Example]:
        """Every example, best value first (then the most confirmed, then the newest)."""
        with self._lock:
            self._refresh(self._live())
            items = [e.example for e in self._entries.values()]
        return sorted(items, key=lambda e: (-e.value, -e.support, -e.created_at))

    def __len__(self) -> int:
        with self._lock:
            self._refresh(self._live())
            return len(self._entries)

    def stats(self) -> JSON:
        """Size, bound, per-cluster counts, times shown, passes and failures after showing, retired ones."""
        items = self.examples()
        clusters: dict[str, int] = {}
        for e in items:
            clusters[e.cluster] = clusters.get(e.cluster, 0) + 1
        return {
            "examples": len(items), "max_examples": self.max_examples, "by_cluster": dict(sorted(clusters.items())),
            "shown": sum(e.shown for e in items), "passes_after_shown": sum(e.passes for e in items),
            "fails_after_shown": sum(e.fails for e in items),
            "retired": sum(1 for e in items if e.value < RETIRE_VALUE),
            "recovered_from": str(self.recovered_from) if self.recovered_from is not None else None,
        }

    # ---- async wrappers --------------------------------------------------------------------------------

    async def asearch(self, query: str, k: int, *, exclude_same: bool = False) -> list[Example]:
        return await asyncio.to_thread(self.search, query, k, exclude_same=exclude_same)

    async def aadd(self, request: str, answer: str, **labels: str) -> Example | None:
        return await asyncio.to_thread(lambda: self.add(request, answer, **labels))

    async def amark_shown(self, ids: Iterable[str]) -> None:
        await asyncio.to_thread(self.mark_shown, list(ids))

    async def amark_outcome(self, ids: Iterable[str], passed: bool) -> None:
        await asyncio.to_thread(self.mark_outcome, list(ids), passed)


def _is_data_line(line: str) -> bool:
    separators = len(_SEPARATORS.findall(line))
    return separators >= 2 and separators > line.count(" ")


def _connect(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, timeout=5.0)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ValueError(f"schema {version} is newer than {SCHEMA_VERSION}")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise ValueError(f"corrupt: {check}")
        if target != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # an example lost to a power cut is relearned by practice
        conn.executescript(_SCHEMA)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute(f"SELECT {', '.join(_COLUMNS)}, request_key FROM examples LIMIT 1").fetchall()
    except BaseException:
        conn.close()
        raise
    return conn


def _data_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def _set_aside(path: Path) -> Path:
    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    try:
        path.replace(aside)
    except OSError:
        return path
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            path.with_name(path.name + suffix).unlink()
    return aside


__all__ = ["ANSWER_CHARS", "MAX_EXAMPLES", "SIMILARITY_FLOOR", "Example", "ExperienceBank", "ExperienceBankError",
           "ask_tokens", "clip_answer", "request_key"]
