"""How a self-play reply is graded: deterministic checks, run in the sandbox where code is involved, each
wrapped by the reward adapter (`learned/reward.py`) into the `(success, failure_class, auxiliary)` reward.

A check reads what a person would: the number in the answer, the one-line answer, the code in the reply (a
fenced block, or the reply itself when it is only code). Code never runs in this process: the program, the
script, the SQL query and the regex all run under `SandboxBackend.run_sync`, in a fresh copy of the task's files,
so a check gives the same verdict every time (the admission rule, `selfplay/admission.py`).

| check          | passes when                                                                           |
|----------------|---------------------------------------------------------------------------------------|
| NumberAnswer   | the reply's answer number ("Answer: N" line, else its last number) is within tolerance |
| TextAnswer     | the reply, stripped of fences, quotes and a trailing period, is the expected text      |
| PythonTests    | the reply's code followed by the tests exits 0                                         |
| ScriptOutput   | the reply's bash/python script exits 0 printing the expected lines                     |
| SqlRows        | the reply's query, run on the task's database, returns the expected rows               |
| RegexMatches   | the reply's pattern matches every positive, no negative, and finds what is expected    |
| FileContents   | the file the reply's code writes (or the turn's tools wrote) holds the expected text   |
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.reward import Reward, RewardAdapter
from ghost_agent.sandbox.base import ExecLimits, ExecResult, SandboxBackend
from ghost_agent.sandbox.code_program import assemble_program, extract_code
from ghost_agent.text.fences import find_fences
from ghost_agent.text.numbers import last_number

CHECK_TIMEOUT_S = 10.0
_DETAIL_CHARS = 400


@dataclass(frozen=True)
class Verdict:
    """A check's score (1.0 pass, 0.0 miss) and a short reason."""

    score: float
    detail: str = ""


@dataclass
class CheckEnv:
    """What a check may use: the sandbox, the task's files (copied afresh for every run) and, after a real
    turn, the session's workspace (files the turn's tools wrote; read, never run in)."""

    sandbox: SandboxBackend
    files: dict[str, str] = field(default_factory=dict)
    workspace: Path | None = None
    timeout_s: float = CHECK_TIMEOUT_S

    def run(self, language: str, source: str, *, collect: tuple[str, ...] = (),
            overlay: dict[str, str] | None = None) -> tuple[ExecResult, dict[str, str]]:
        """Run `source` in a fresh directory holding the task's files (with `overlay`'s written over them); the
        result and the text of each `collect` path afterwards (absent when the program did not leave it)."""
        limits = ExecLimits(timeout_s=self.timeout_s, memory_mb=512, max_output_bytes=64 * 1024)
        with tempfile.TemporaryDirectory(prefix="ghost-selfplay-", ignore_cleanup_errors=True) as tmp:
            root = Path(tmp)
            write_files(root, {**self.files, **(overlay or {})})
            result = self.sandbox.run_sync(language, source, limits=limits, workspace=root)
            found = {}
            for rel in collect:
                path = root / rel
                if path.is_file() and not path.is_symlink():
                    found[rel] = path.read_text(encoding="utf-8", errors="replace")
        return result, found


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write a task's files under `root` (paths are relative and stay inside it)."""
    for rel, text in files.items():
        path = (root / rel).resolve()
        if not path.is_relative_to(root.resolve()):
            raise ValueError(f"task file {rel!r} is outside the workspace")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


class Check(Protocol):
    """Grades one reply. `kind` names it in the trajectory's validator detail."""

    kind: ClassVar[str]

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        """The verdict on `reply`; raises only when the check itself cannot run (a CRASH, not a miss)."""
        ...

    def to_dict(self) -> JSON:
        """A JSON-ready description (kind and parameters)."""
        ...


def validate(check: Check, reply: str, env: CheckEnv, *, finish_reason: str | None = None) -> Reward:
    """The reward of `reply` under `check`: the reward adapter's labels (EMPTY, REFUSAL, TRUNCATED, DISCARD,
    CRASH when the check or the sandbox broke) with the check's reason in `auxiliary["detail"]`. Blocking."""
    details: list[str] = []

    def verifier(predicted: str, expected: Any) -> float:
        verdict = check.score(predicted, env)
        details.append(verdict.detail)
        return verdict.score

    verifier.__name__ = check.kind
    reward = RewardAdapter(verifier, detect_refusal=True).score({"predicted": reply, "finish_reason": finish_reason})
    if details and details[-1]:
        reward.auxiliary["detail"] = details[-1][:_DETAIL_CHARS]
    return reward


# Reading a reply


def _failure(result: ExecResult) -> str:
    """Why a run failed, in a line or two (the end of stderr, where the traceback's last line is)."""
    if result.timed_out:
        return "timed out"
    tail = (result.stderr or result.stdout or "").strip().splitlines()[-3:]
    return f"exit {result.exit_code}: " + " | ".join(tail)


def normalize_output(text: str) -> str:
    """Output as compared: trailing spaces off each line, blank lines at the ends dropped."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


_SHELL_TAGS = ("bash", "sh", "shell", "console", "zsh")
_PROMPT = re.compile(r"^\$ ", re.M)


def script_in(reply: str, language: str) -> str:
    """The script of `language` ("bash" or "python") in a reply: its fenced blocks of that language joined
    (untagged blocks count too), else the reply itself when it has no fence."""
    tags = _SHELL_TAGS if language == "bash" else ("python", "python3", "py")
    if language == "python":
        return extract_code(reply)
    blocks = [f.body for f in find_fences(reply) if f.language.lower() in tags]
    if not blocks:
        blocks = [f.body for f in find_fences(reply) if not f.language]
    if not blocks and not find_fences(reply):
        blocks = [reply.strip()]
    return _PROMPT.sub("", "\n".join(blocks)).strip()


_SQL_START = re.compile(r"(?is)\b(with|select)\b.*")


def sql_in(reply: str) -> str:
    """The SQL query in a reply: a ```sql block, else any fenced block, else the text from its first SELECT or
    WITH to the first semicolon."""
    fences = find_fences(reply)
    for fence in fences:
        if fence.language.lower() in ("sql", "sqlite", "postgresql", "mysql"):
            return fence.body.strip()
    if fences:
        return fences[0].body.strip()
    found = _SQL_START.search(reply)
    if not found:
        return ""
    return found.group(0).split(";", 1)[0].strip()


_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_PY_RAW = re.compile(r"""\br(['"])(.+?)\1""")
_SLASHED = re.compile(r"^/(.+)/[a-z]*$")
# where Python code uses a pattern: `re.compile(r"...")`, `re.fullmatch(r'...', s)`, `PATTERN = r"..."`
_PY_PATTERN_USE = re.compile(
    r"""\bre\.(?:compile|match|fullmatch|search|findall|finditer|sub|subn|split)\(\s*[rR]?(['"])(.+?)(?<!\\)\1"""
    r"""|^[ \t]*\w*(?:pattern|regex|rx|PATTERN|REGEX|RX)\w*[ \t]*=[ \t]*[rR](['"])(.+?)(?<!\\)\3""",
    re.M,
)


def regex_in(reply: str) -> str:
    """The pattern in a reply, as a person reading it would take it: in a fenced block, the pattern its Python
    code uses (`re.compile(r"...")`, `re.fullmatch(r'...', s)`, `pattern = r"..."`) when it has such code, else
    the block's first line (a raw string literal in it unwrapped); else the first inline `code` span; else the
    reply when it is one line. `/.../flags` delimiters are dropped."""
    candidates = []
    for fence in find_fences(reply):
        body = fence.body.strip()
        if not body:
            continue
        used = _PY_PATTERN_USE.search(body)
        candidates.append((used.group(2) or used.group(4)) if used else body.splitlines()[0])
    candidates += _INLINE_CODE.findall(reply)
    stripped = reply.strip()
    if "\n" not in stripped:
        candidates.append(stripped)
    if not candidates:
        return ""
    pattern = candidates[0].strip()
    raw = _PY_RAW.search(pattern)
    if raw:
        pattern = raw.group(2)
    slashed = _SLASHED.match(pattern)
    return slashed.group(1) if slashed else pattern


_ANSWER = re.compile(r"(?im)^[ \t>*_#-]*(?:final[ \t]+)?answer[ \t*_]*[:=][ \t*_]*(.+?)[ \t*_]*$")


def answer_text(reply: str) -> str:
    """The reply's answer: the value of its last "Answer:" line, else the whole reply; fences, backticks,
    quotes and a trailing period stripped."""
    found = _ANSWER.findall(reply)
    text = found[-1] if found else reply
    fences = find_fences(text)
    if fences:
        text = fences[0].body
    return text.strip().strip("`").strip().strip("\"'").strip().rstrip(".").strip()


# The checks


@dataclass(frozen=True)
class NumberAnswer:
    """The answer is a number; relative tolerance `rel_tol` (and `abs_tol` around zero)."""

    expected: float
    rel_tol: float = 1e-6
    abs_tol: float = 1e-9
    kind: ClassVar[str] = "number_answer"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        found = _ANSWER.findall(reply)
        got = last_number(found[-1]) if found else None
        if got is None:
            got = last_number(reply)
        if got is None:
            return Verdict(0.0, "no number in the reply")
        ok = math.isclose(got, self.expected, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        return Verdict(float(ok), f"answered {got:g}, expected {self.expected:g}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class TextAnswer:
    """The answer is one short text (a name, a word, a date)."""

    expected: str
    case_sensitive: bool = False
    kind: ClassVar[str] = "text_answer"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        got = answer_text(reply)
        same = got == self.expected if self.case_sensitive else got.casefold() == self.expected.casefold()
        return Verdict(float(same), f"answered {got[:80]!r}, expected {self.expected!r}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class PythonTests:
    """The reply's Python code, followed by `tests` (asserts; `check(fn)` is called when defined), exits 0."""

    tests: str
    entry_point: str | None = None
    kind: ClassVar[str] = "python_tests"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        if not extract_code(reply, self.entry_point).strip():
            return Verdict(0.0, "no Python code in the reply")
        program = assemble_program("", reply, self.tests, self.entry_point)
        result, _ = env.run("python", program)
        return Verdict(1.0, "tests passed") if result.ok else Verdict(0.0, _failure(result))

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class ScriptOutput:
    """The reply's script (`language`: bash or python) exits 0 and prints `expected_stdout` (compared line by
    line, trailing spaces ignored; `sort_lines` when order does not matter). With `hidden_files` the script runs
    on those written over the task's files (the same layout, other data: a script that prints the answer it saw
    instead of computing it fails), and `expected_stdout` is its output there."""

    language: str
    expected_stdout: str
    sort_lines: bool = False
    hidden_files: dict[str, str] = field(default_factory=dict)
    kind: ClassVar[str] = "script_output"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        source = script_in(reply, self.language)
        if not source:
            return Verdict(0.0, f"no {self.language} script in the reply")
        result, _ = env.run(self.language, source, overlay=self.hidden_files)
        if not result.ok:
            return Verdict(0.0, _failure(result))
        got, want = normalize_output(result.stdout), normalize_output(self.expected_stdout)
        if self.sort_lines:
            got, want = "\n".join(sorted(got.splitlines())), "\n".join(sorted(want.splitlines()))
        if got == want:
            return Verdict(1.0, "output matches")
        return Verdict(0.0, f"printed {got[:150]!r}, expected {want[:150]!r}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


_SQL_HARNESS = """
import json, sqlite3, sys
db = sqlite3.connect(":memory:")
db.executescript(open({setup!r}, encoding="utf-8").read())
query = {query!r}
try:
    rows = db.execute(query).fetchall()
except (sqlite3.Error, sqlite3.Warning) as exc:
    print("SQL error:", exc, file=sys.stderr)
    sys.exit(2)
print(json.dumps([[round(v, 6) if isinstance(v, float) else v for v in row] for row in rows]))
"""


@dataclass(frozen=True)
class SqlRows:
    """The reply's query (one statement), run by SQLite on the database that `setup_file` (SQL, among the
    task's files) builds, returns `expected_rows` (in order when `ordered`; numbers compared as floats to 6
    places, so an integer column read back as 3.0 still matches)."""

    expected_rows: tuple[tuple[Any, ...], ...]
    ordered: bool = False
    setup_file: str = "setup.sql"
    kind: ClassVar[str] = "sql_rows"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        query = sql_in(reply).rstrip().rstrip(";")
        if not query:
            return Verdict(0.0, "no SQL query in the reply")
        result, _ = env.run("python", _SQL_HARNESS.format(setup=self.setup_file, query=query))
        if not result.ok:
            return Verdict(0.0, _failure(result))
        rows = [_sql_row(r) for r in json.loads(result.stdout)]
        want = [_sql_row(r) for r in self.expected_rows]
        same = rows == want if self.ordered else sorted(map(repr, rows)) == sorted(map(repr, want))
        if same:
            return Verdict(1.0, f"{len(rows)} rows match")
        return Verdict(0.0, f"returned {rows[:5]!r}{'...' if len(rows) > 5 else ''}, expected {want[:5]!r}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


def _sql_row(row: Any) -> tuple[Any, ...]:
    """A row as compared: every number a float to 6 places (SQLite's 3 and 3.0 are the same answer)."""
    return tuple(round(float(v), 6) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in row)


_REGEX_HARNESS = """
import json, re, sys
cases = json.loads({cases!r})
try:
    rx = re.compile(cases["pattern"], re.IGNORECASE if cases["ignore_case"] else 0)
except re.error as exc:
    print("bad pattern:", exc, file=sys.stderr)
    sys.exit(2)
match = rx.fullmatch if cases["mode"] == "fullmatch" else rx.search
misses = [s for s in cases["matches"] if not match(s)]
wrong = [s for s in cases["non_matches"] if match(s)]
found = [[text, [m.group(0) for m in rx.finditer(text)]] for text, _ in cases["finds"]]
bad_finds = [f for f, (_, want) in zip(found, cases["finds"]) if f[1] != want]
print(json.dumps({{"misses": misses, "wrong": wrong, "bad_finds": bad_finds}}))
"""


@dataclass(frozen=True)
class RegexMatches:
    """The reply's pattern (Python `re`) matches every string of `matches` and none of `non_matches` (whole
    string with mode "fullmatch", anywhere with "search"), and in each `finds` text finds exactly the listed
    substrings (`finditer`, whole matches). Run in the sandbox: a pattern can backtrack for ever."""

    matches: tuple[str, ...] = ()
    non_matches: tuple[str, ...] = ()
    finds: tuple[tuple[str, tuple[str, ...]], ...] = ()
    mode: str = "fullmatch"
    ignore_case: bool = False
    kind: ClassVar[str] = "regex_matches"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        pattern = regex_in(reply)
        if not pattern:
            return Verdict(0.0, "no pattern in the reply")
        cases = json.dumps({
            "pattern": pattern, "ignore_case": self.ignore_case, "mode": self.mode, "matches": list(self.matches),
            "non_matches": list(self.non_matches), "finds": [[t, list(w)] for t, w in self.finds],
        })
        result, _ = env.run("python", _REGEX_HARNESS.format(cases=cases))
        if not result.ok:
            return Verdict(0.0, _failure(result))
        report = json.loads(result.stdout)
        if not (report["misses"] or report["wrong"] or report["bad_finds"]):
            return Verdict(1.0, f"pattern {pattern!r} behaves")
        return Verdict(0.0, f"pattern {pattern!r}: misses {report['misses'][:3]}, wrongly matches "
                            f"{report['wrong'][:3]}, finds {report['bad_finds'][:2]}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class FileContents:
    """After the turn the workspace file `path` holds `expected` (compared as output is). When the turn's tools
    did not write it, the reply's code (a python block, else a bash one) is run on the task's files, and the
    file it leaves is compared instead."""

    path: str
    expected: str
    sort_lines: bool = False
    kind: ClassVar[str] = "file_contents"

    def score(self, reply: str, env: CheckEnv) -> Verdict:
        text = None
        if env.workspace is not None:
            candidate = env.workspace / self.path
            if candidate.is_file() and not candidate.is_symlink():
                text = candidate.read_text(encoding="utf-8", errors="replace")
        if text is None:
            text, why = self._run_reply(reply, env)
            if text is None:
                return Verdict(0.0, why)
        return self._compare(text)

    def _run_reply(self, reply: str, env: CheckEnv) -> tuple[str | None, str]:
        for language in ("python", "bash"):
            fenced = any(f.language.lower() in ((language,) if language == "python" else _SHELL_TAGS)
                         for f in find_fences(reply))
            if language == "python" and not fenced and not extract_code(reply).strip():
                continue
            if language == "bash" and not fenced:
                continue
            result, found = env.run(language, script_in(reply, language), collect=(self.path,))
            if not result.ok:
                return None, _failure(result)
            if self.path not in found:
                return None, f"the code ran but left no {self.path}"
            return found[self.path], ""
        return None, f"{self.path} was not written and the reply has no code that writes it"

    def _compare(self, text: str) -> Verdict:
        got, want = normalize_output(text), normalize_output(self.expected)
        if self.sort_lines:
            got, want = "\n".join(sorted(got.splitlines())), "\n".join(sorted(want.splitlines()))
        if got == want:
            return Verdict(1.0, f"{self.path} matches")
        return Verdict(0.0, f"{self.path} holds {got[:150]!r}, expected {want[:150]!r}")

    def to_dict(self) -> JSON:
        return {"kind": self.kind, **asdict(self)}


CHECKS: dict[str, Callable[..., Check]] = {
    c.kind: c for c in (NumberAnswer, TextAnswer, PythonTests, ScriptOutput, SqlRows, RegexMatches, FileContents)
}

__all__ = [
    "CHECKS", "Check", "CheckEnv", "FileContents", "NumberAnswer", "PythonTests", "RegexMatches", "ScriptOutput",
    "SqlRows", "TextAnswer", "Verdict", "answer_text", "normalize_output", "regex_in", "script_in", "sql_in",
    "validate", "write_files",
]
