"""The checks behind the `delivered` verifier: did a chat reply deliver what the user asked for?

A task's `expected` is a list of checks, each a dict with a `kind`:

- `function` {name, tests}: a ```python block defines `name`, and the hidden asserts `tests` pass against it.
- `tests` {name, reference, min_asserts=2}: the reply's python blocks hold >= `min_asserts` asserts calling
  `name` (or a test function calling it), and they run green against `reference`, a correct implementation.
- `sql` {schema, rows, ordered=False}: a query in the reply returns `rows` on a sqlite3 database built by the
  `schema` script (compared as a multiset unless `ordered`; numbers rounded to 6 places).
- `shell` {patterns}: every regex in `patterns` is found in the reply's code (fenced or inline).
- `regex` {positives, negatives, mode="fullmatch"|"search"}: a pattern given in the reply (inline code, a
  fenced line, a string literal in code) accepts every positive and rejects every negative (Python `re`).
- `terms` {groups, min_words=0}: every group (a list of synonyms / stems) has a term in the reply, and the reply
  has at least `min_words` words.
- `number` {value, rel_tolerance=1e-6, abs_tolerance=1e-9}: some number in the reply is close to `value`.
- `list` {min_items}: the reply has at least that many bullet or numbered items.
- `contains` {any | all, case_sensitive=False}: one of / all of the strings appear as whole words.

The sandbox runs everything that executes reply text (code, SQL, a regex that could backtrack forever); the
rest is string work here. `failed_checks` returns what failed, in words; an empty list means delivered.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ghost_agent.sandbox.base import ExecLimits, SandboxBackend
from ghost_agent.sandbox.code_program import assemble_program
from ghost_agent.text.fences import find_fences, strip_fences
from ghost_agent.text.numbers import numbers_in

Check = Mapping[str, Any]

_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_PYTHON_TAGS = {"python", "python3", "py", "py3", ""}
_SQL_START = re.compile(r"^\s*(?:SELECT|WITH)\b", re.I)
_SQL_IN_TEXT = re.compile(r"\b(?:SELECT|WITH)\b[^;`]*?\bFROM\b[^;`]*(?:;|$)", re.I | re.S)
_STRING_LITERAL = re.compile(r"""[rRbB]{0,2}("|')((?:\\.|(?!\1).)+)\1""")
_ANCHORED = re.compile(r"(?<!\S)/?\^\S*\$(?:/[a-z]*)?(?=[\s.,;:)]|$)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+\S", re.M)
_WORD = re.compile(r"[A-Za-z0-9']+")
_MAX_CANDIDATES = 24

# Runs every test function / TestCase the reply defined (a bare-assert reply has run by the time this does).
_TEST_RUNNER = """

import inspect as _inspect, sys as _sys, unittest as _unittest
for _name, _fn in list(globals().items()):
    if _name.startswith("test") and _inspect.isfunction(_fn) and not _inspect.signature(_fn).parameters:
        _fn()
_suite = _unittest.defaultTestLoader.loadTestsFromModule(_sys.modules[__name__])
if _suite.countTestCases() and not _unittest.TextTestRunner(verbosity=0).run(_suite).wasSuccessful():
    _sys.exit(1)
"""

_SQL_PROGRAM = """
import json, sqlite3, sys
schema, candidates, want, ordered = json.loads(sys.stdin.read())
def norm(rows):
    out = [[round(float(v), 6) if isinstance(v, (int, float)) else v for v in row] for row in rows]
    return out if ordered else sorted(out, key=repr)
for sql in candidates:
    db = sqlite3.connect(":memory:")
    db.executescript(schema)
    rows = None
    try:
        for stmt in sql.split(";"):
            stmt = "\\n".join(line for line in stmt.splitlines() if not line.strip().startswith("--")).strip()
            if stmt.upper().startswith(("SELECT", "WITH")):
                rows = db.execute(stmt).fetchall()
    except sqlite3.Error:
        continue
    if rows is not None and norm(rows) == norm(want):
        sys.exit(0)
sys.exit(1)
"""

_REGEX_PROGRAM = """
import json, re, sys
candidates, positives, negatives, mode = json.loads(sys.stdin.read())
for pattern in candidates:
    try:
        rx = re.compile(pattern)
    except (re.error, ValueError):
        continue
    test = rx.fullmatch if mode == "fullmatch" else rx.search
    if all(test(s) for s in positives) and not any(test(s) for s in negatives):
        sys.exit(0)
sys.exit(1)
"""


def _blocks(reply: str) -> list[tuple[str, str]]:
    """Every fenced block as (language tag lower-cased, body); the closing fence may be missing (a cut-off reply)."""
    return [(f.language.lower(), f.body) for f in find_fences(reply, unclosed=True)]


def _python_blocks(reply: str) -> list[str]:
    return [body for tag, body in _blocks(reply) if tag in _PYTHON_TAGS]


def _code_text(reply: str) -> str:
    """The reply's fenced blocks and inline code spans, or the whole reply when it has neither."""
    parts = [body for _, body in _blocks(reply)] + _INLINE.findall(strip_fences(reply, unclosed=True))
    return "\n".join(parts) if parts else reply


def _field(check: Check, name: str, kind: type | tuple[type, ...]) -> Any:
    value = check.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ValueError(f"{check.get('kind')} check: {name!r} is missing or not a {kind}: {value!r}")
    return value


def _run(sandbox: SandboxBackend | None, program: str, timeout_s: float, stdin: str | None = None) -> bool:
    if sandbox is None:
        from ghost_agent.sandbox import get_sandbox

        sandbox = get_sandbox()
    limits = ExecLimits(timeout_s=timeout_s, memory_mb=512, max_output_bytes=16 * 1024)
    return sandbox.run_sync("python", program, limits=limits, stdin=stdin).ok


def _check_function(reply: str, check: Check, sandbox: SandboxBackend | None, timeout_s: float) -> str | None:
    name = _field(check, "name", str)
    tests = _field(check, "tests", str)
    if not name.isidentifier():
        raise ValueError(f"function check: name must be an identifier, got {name!r}")
    defines = re.compile(rf"^(?:async\s+)?def\s+{re.escape(name)}\s*\(", re.M)
    if not any(defines.search(body) for body in _python_blocks(reply)):
        return f"no ```python block defines {name}()"
    if not _run(sandbox, assemble_program("", reply, tests, name), timeout_s):
        return f"{name}() fails the hidden tests"
    return None


def _check_tests(reply: str, check: Check, sandbox: SandboxBackend | None, timeout_s: float) -> str | None:
    name = _field(check, "name", str)
    reference = _field(check, "reference", str)
    min_asserts = int(check.get("min_asserts", 2))
    # The function is already defined (the reference): an import of it from a made-up module would fail.
    drop_import = re.compile(rf"^\s*(?:from\s+[\w.]+\s+)?import\s+[^\n]*\b{re.escape(name)}\b[^\n]*$", re.M)
    code = "\n\n".join(drop_import.sub("", body) for body in _python_blocks(reply))
    calls = re.compile(rf"\b{re.escape(name)}\s*\(")
    asserts = [line for line in code.splitlines()
               if re.match(r"\s*(?:assert\b|self\.assert\w*\()", line) and calls.search(line)]
    test_fn = re.search(r"^\s*def\s+test\w*\s*\(", code, re.M) is not None and calls.search(code) is not None
    if len(asserts) < min_asserts and not test_fn:
        return f"no ```python tests of {name}() (>= {min_asserts} asserts or a test function)"
    if not _run(sandbox, reference.rstrip() + "\n\n\n" + code + _TEST_RUNNER, timeout_s):
        return f"the tests fail against a correct {name}()"
    return None


def _sql_candidates(reply: str) -> list[str]:
    blocks = _blocks(reply)
    found = [body for tag, body in blocks if tag in ("sql", "sqlite", "postgresql", "mysql")]
    found += [body for tag, body in blocks if tag in ("", "text") and _SQL_START.match(body)]
    if not found:
        found = [m.group(0) for m in _SQL_IN_TEXT.finditer(strip_fences(reply, unclosed=True))]
    return found[:_MAX_CANDIDATES]


def _check_sql(reply: str, check: Check, sandbox: SandboxBackend | None, timeout_s: float) -> str | None:
    schema = _field(check, "schema", str)
    rows = _field(check, "rows", list)
    candidates = _sql_candidates(reply)
    if not candidates:
        return "no SQL query in the reply"
    payload = json.dumps([schema, candidates, rows, bool(check.get("ordered", False))])
    if not _run(sandbox, _SQL_PROGRAM, timeout_s, stdin=payload):
        return "no query in the reply returns the expected rows"
    return None


def _check_shell(reply: str, check: Check, _sandbox: SandboxBackend | None, _timeout_s: float) -> str | None:
    patterns = _field(check, "patterns", list)
    code = _code_text(reply)
    missing = [p for p in patterns if not re.search(p, code)]
    return f"the command lacks {missing}" if missing else None


def _regex_candidates(reply: str) -> list[str]:
    """Patterns a reply may have given: inline code spans, fenced lines, string literals inside code, anchored
    ^...$ words in the prose; each also without /slashes/."""
    prose = strip_fences(reply, unclosed=True)
    raw: list[str] = _INLINE.findall(prose) + _ANCHORED.findall(_INLINE.sub("", prose))
    for _, body in _blocks(reply):
        raw += [m.group(2) for m in _STRING_LITERAL.finditer(body)]
        raw += [line.strip() for line in body.splitlines() if line.strip()]
    out: list[str] = []
    for item in raw:
        for variant in (item, item.strip("/"), re.sub(r"^/(.*)/[a-z]*$", r"\1", item)):
            if variant and variant not in out:
                out.append(variant)
    return out[:_MAX_CANDIDATES * 2]


def _check_regex(reply: str, check: Check, sandbox: SandboxBackend | None, timeout_s: float) -> str | None:
    positives = _field(check, "positives", list)
    negatives = _field(check, "negatives", list)
    mode = check.get("mode", "fullmatch")
    if mode not in ("fullmatch", "search"):
        raise ValueError(f"regex check: mode must be 'fullmatch' or 'search', got {mode!r}")
    candidates = _regex_candidates(reply)
    if not candidates:
        return "no pattern in the reply"
    if not _run(sandbox, _REGEX_PROGRAM, timeout_s, stdin=json.dumps([candidates, positives, negatives, mode])):
        return "no pattern in the reply matches exactly the intended strings"
    return None


def _term_found(term: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(term)}", text, re.I) is not None


def _check_terms(reply: str, check: Check, _sandbox: SandboxBackend | None, _timeout_s: float) -> str | None:
    groups = _field(check, "groups", list)
    missing = [group for group in groups if not any(_term_found(term, reply) for term in group)]
    if missing:
        return f"none of {missing[0]} in the reply"
    words = len(_WORD.findall(reply))
    min_words = int(check.get("min_words", 0))
    return f"only {words} words (wanted >= {min_words})" if words < min_words else None


def _check_number(reply: str, check: Check, _sandbox: SandboxBackend | None, _timeout_s: float) -> str | None:
    value = float(_field(check, "value", (int, float)))
    rel, abs_ = float(check.get("rel_tolerance", 1e-6)), float(check.get("abs_tolerance", 1e-9))
    if any(math.isclose(n, value, rel_tol=rel, abs_tol=abs_) for n in numbers_in(reply)):
        return None
    return f"{value:g} is not in the reply"


def _check_list(reply: str, check: Check, _sandbox: SandboxBackend | None, _timeout_s: float) -> str | None:
    wanted = int(_field(check, "min_items", int))
    items = len(_LIST_ITEM.findall(reply))
    return f"{items} list items (wanted >= {wanted})" if items < wanted else None


def _check_contains(reply: str, check: Check, _sandbox: SandboxBackend | None, _timeout_s: float) -> str | None:
    flags = 0 if check.get("case_sensitive") else re.I
    needles_all, needles_any = check.get("all"), check.get("any")
    if not needles_all and not needles_any:
        raise ValueError("contains check: needs 'any' or 'all'")

    def found(needle: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", reply, flags) is not None

    if needles_all and not all(found(n) for n in needles_all):
        return f"missing one of {needles_all}"
    if needles_any and not any(found(n) for n in needles_any):
        return f"none of {needles_any}"
    return None


_CHECKS: dict[str, Callable[[str, Check, SandboxBackend | None, float], str | None]] = {
    "function": _check_function,
    "tests": _check_tests,
    "sql": _check_sql,
    "shell": _check_shell,
    "regex": _check_regex,
    "terms": _check_terms,
    "number": _check_number,
    "list": _check_list,
    "contains": _check_contains,
}
CHECK_KINDS = tuple(_CHECKS)


def failed_checks(
    reply: str,
    checks: Any,
    *,
    timeout_s: float = 10.0,
    sandbox: SandboxBackend | None = None,
    validate_only: bool = False,
) -> list[str]:
    """Why `reply` fails `checks` (a non-empty list of check dicts), one reason per failed check; [] = passed.

    ValueError for a malformed list (not a list, an unknown kind); a check missing a field raises when it runs.
    `validate_only` checks the list's shape and runs nothing. Blocking: checks that run reply text use
    `sandbox.run_sync` (default `get_sandbox()`); SandboxError propagates.
    """
    if isinstance(checks, (str, bytes)) or not isinstance(checks, Sequence) or not checks:
        raise ValueError(f"delivered: expected must be a non-empty list of checks, got {checks!r}"[:300])
    for check in checks:
        if not isinstance(check, Mapping) or check.get("kind") not in _CHECKS:
            raise ValueError(f"delivered: unknown check {check!r} (kinds: {', '.join(CHECK_KINDS)})"[:300])
    if validate_only:
        return []
    reasons: list[str] = []
    for check in checks:
        reason = _CHECKS[check["kind"]](reply, check, sandbox, timeout_s)
        if reason is not None:
            reasons.append(reason)
    return reasons


__all__ = ["CHECK_KINDS", "Check", "failed_checks"]
