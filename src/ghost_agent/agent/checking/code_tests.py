"""Test-driven checks of a code answer: which cases to run, the program that runs them, how to read the report.

Cases come from two places, kept apart because they deserve different trust:
- the request's own examples (`user` cases): doctest lines (`>>> f(1)` + expected output) and prose examples
  (`f(1) == 2`, `f(1) -> 2`, `f(1) should return 2`, `f(1) ➞ 2`). The user wrote them: a failure is real.
- assertions the model wrote from the spec alone, before seeing its own code (`model` cases, CodeT style). They
  are often wrong on a small model, so they only break ties between candidates and never overrule the user's.

`check_program` builds one program that defines the answer's code (after the request's own code, so its imports
and helpers stay in scope) and runs every case in isolation — a per-case time limit, exceptions caught — then
prints one JSON report line. Only string work happens here; the program runs in the sandbox.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.agent.checking.claims import parses
from ghost_agent.privacy.redact import redact_text
from ghost_agent.sandbox.code_program import assemble_program, extract_code
from ghost_agent.text.fences import find_fences

REPORT_MARK = "__GHOST_CHECK_REPORT__"
MAX_CASES = 24
MAX_CASE_CHARS = 600
CASE_TIMEOUT_S = 3

_DEF_RE = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.M)
# The request's Python fences, inline style, filtered at the opener: a fence tagged otherwise opens no block, so
# the backticks closing it may open one (text.fences, `languages`).
_PY_FENCES = ("", "python", "python3", "py")
_PY_TAGS = frozenset({"python", "python3", "py", "py3"})
# A request for code in another language than Python: "in Ruby", "a SQL query", "a bash one-liner"...
_LANGUAGES = (r"(?:ruby|elixir|scala|groovy|crystal|nim|julia|r|go|golang|rust|java|kotlin|swift|c|c\+\+|cpp|c#|"
              r"javascript|js|typescript|ts|node|php|perl|lua|haskell|dart|matlab|bash|shell|sh|zsh|sql|postgres|mysql|"
              r"sqlite|powershell|awk|sed|jq|regex|vba|excel)")
_OTHER_LANGUAGE = re.compile(
    rf"\b(?:in|using|with|as)\s+(?:an?\s+)?{_LANGUAGES}(?![\w+#])"
    rf"|(?<![\w+#]){_LANGUAGES}\s+(?:function|method|class|program|script|query|code|snippet|one-liner|command|"
    r"module|statement|expression|pattern)s?\b",
    re.I,
)
# `name(args) == value`, `name(args) -> value`, `name(args) ➞ value`, `name(args) should return value`, ...
_ARROWS = r"(?:==>|=>|->|➞|→|==|\bshould\s+(?:return|give|be)\b|\breturns?\b|\bgives?\b|\bis\b)"


@dataclass(frozen=True)
class Case:
    """One check: `expr` evaluated against `want` (a Python expression) or, for an assert, `want` is None."""

    expr: str
    want: str | None = None
    origin: str = "user"  # "user" (the request's example) or "model" (an assertion the model wrote)

    def describe(self) -> str:
        """How the case reads in a revision prompt."""
        return f"assert {self.expr}" if self.want is None else f"{self.expr} == {self.want}"


@dataclass
class CaseResult:
    """A case's outcome in the sandbox."""

    case: Case
    ok: bool
    got: str = ""
    error: str = ""

    def describe(self) -> str:
        """The failing case as the model reads it: the call, what was expected, what came out."""
        if self.case.want is None:
            return f"{self.case.describe()}  -> failed" + (f" ({self.error})" if self.error else "")
        outcome = f"raised {self.error}" if self.error else f"got {self.got}"
        return f"{self.case.expr}  expected {self.case.want}, {outcome}"


@dataclass
class CheckReport:
    """The outcome of running all cases against one candidate; `loaded` is False when the code itself failed."""

    results: list[CaseResult] = field(default_factory=list)
    loaded: bool = True
    load_error: str = ""

    def passed(self, origin: str) -> int:
        """Cases of `origin` that passed."""
        return sum(1 for r in self.results if r.ok and r.case.origin == origin)

    def total(self, origin: str) -> int:
        """Cases of `origin` that ran."""
        return sum(1 for r in self.results if r.case.origin == origin)

    def failures(self, origin: str | None = None) -> list[CaseResult]:
        """The failed cases (of one origin, or all)."""
        return [r for r in self.results if not r.ok and (origin is None or r.case.origin == origin)]

    @property
    def score(self) -> tuple[int, int, int]:
        """Candidates are ranked by this: the code loads, the user's examples, then the model's assertions."""
        return (int(self.loaded), self.passed("user"), self.passed("model"))

    @property
    def all_passed(self) -> bool:
        """The code loaded and every case passed."""
        return self.loaded and all(r.ok for r in self.results)


def request_code(request: str) -> str:
    """The Python code the request itself carries (a stub with imports and a docstring, helper functions)."""
    bodies = [f.body for f in find_fences(request, "inline", languages=_PY_FENCES)]
    blocks = [b for b in bodies if parses(b) or _DEF_RE.search(b)]
    if blocks:
        return "\n\n".join(b.strip("\n") for b in blocks) + "\n"
    return ""


def entry_points(request: str, code: str) -> list[str]:
    """Functions the request asks for: those it defines or names (`is_prime(n)`, `reverse_string`) that the answer
    defines; else the answer's top-level functions, in order."""
    defined = [m.group(1) for m in _DEF_RE.finditer(code)]
    named = [n for n in defined if re.search(rf"\b{re.escape(n)}\b", request)]
    return named or defined


def tests_apply(request: str, reply: str) -> bool:
    """Whether the reply's code is Python, the one language the checks run: a block tagged Python; else untagged
    blocks (or an unfenced reply) unless the request asks for another language and that code does not read as
    Python. A reply whose blocks are all tagged otherwise (```sql, ```bash, ```ruby) is never run as Python: a
    Ruby `def` would fail to load, and the repair round would rewrite the answer into Python."""
    fences = find_fences(reply, unclosed=True)
    tags = {f.language.lower() for f in fences}
    if tags & _PY_TAGS:
        return True
    if fences and "" not in tags:
        return False
    if not _OTHER_LANGUAGE.search(request) or re.search(r"\bpython\b", request, re.I):
        return True
    bodies = [f.body for f in fences if not f.language] or [reply]
    return any(parses(body) and _DEF_RE.search(body) for body in bodies)


def user_cases(request: str, names: list[str]) -> list[Case]:
    """The request's own examples that call one of `names`: doctest lines, then prose `call <arrow> value`."""
    if not names:
        return []
    out: list[Case] = []
    seen: set[str] = set()

    def add(expr: str, want: str) -> None:
        expr, want = expr.strip(), _LITERAL_WORDS.get(want.strip().rstrip(".,;"), want.strip().rstrip(".,;"))
        if not expr or not want or len(expr) + len(want) > MAX_CASE_CHARS or expr in seen:
            return
        # only self-contained examples: the call's arguments and the expected value are values, not formulas
        # over names the text defines elsewhere (`fib4(n) -> fib4(n-1) + ...` is a definition, not an example)
        if not (_only_names(expr, set(names)) and _only_names(want, set())):
            return
        seen.add(expr)
        out.append(Case(expr, want, "user"))

    lines = request.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith(">>> "):
            continue
        expr = stripped[4:]
        j = i + 1
        while j < len(lines) and lines[j].strip().startswith("... "):
            expr += "\n" + lines[j].strip()[4:]
            j += 1
        want_lines = []
        while j < len(lines):
            nxt = lines[j].strip()
            if not nxt or nxt.startswith(">>>") or nxt.startswith(('"""', "'''")):
                break
            want_lines.append(nxt)
            j += 1
        if any(re.search(rf"\b{re.escape(n)}\s*\(", expr) for n in names) and want_lines:
            add(expr, " ".join(want_lines))
    names_re = "|".join(re.escape(n) for n in names)
    for match in re.finditer(rf"(?<![\w.>])((?:{names_re})\s*\()", request):
        call_end = _call_end(request, match.start(1) + len(match.group(1)) - 1)
        if call_end is None:
            continue
        rest = request[call_end:call_end + 400]
        arrow = re.match(rf"\s*{_ARROWS}\s*", rest)
        if arrow is None:
            continue
        want = _leading_expression(rest[arrow.end():])
        if want:
            add(request[match.start(1):call_end], want)
    return out[:MAX_CASES]


def model_cases(reply: str, names: list[str]) -> list[Case]:
    """The `assert` statements in a model's reply that call one of `names` (one case each, parsed, deduped)."""
    out: list[Case] = []
    seen: set[str] = set()
    for raw in reply.splitlines():
        line = raw.strip()
        if not line.startswith("assert ") or not any(re.search(rf"\b{re.escape(n)}\s*\(", line) for n in names):
            continue
        try:
            node = ast.parse(line).body[0]
        except (SyntaxError, ValueError, IndexError):
            continue
        if not isinstance(node, ast.Assert):
            continue
        expr = ast.unparse(node.test)
        if expr not in seen and len(expr) <= MAX_CASE_CHARS:
            seen.add(expr)
            out.append(Case(expr, None, "model"))
    return out[:MAX_CASES]


def answer_code(reply: str, names: list[str]) -> str:
    """The answer's code that defines the entry point (see `code_program.extract_code`)."""
    return extract_code(reply, names[0] if names else None)


def check_program(context: str, reply: str, cases: list[Case], entry_point: str | None) -> str:
    """A program: the request's code, the reply's code over it, then each case run in isolation; it prints one
    `REPORT_MARK {json}` line ({"loaded": bool, "error": str, "results": [{ok, got, error}]})."""
    harness = _HARNESS.replace("__CASES__", repr([(c.expr, c.want) for c in cases]))
    harness = harness.replace("__TIMEOUT__", str(CASE_TIMEOUT_S)).replace("__MARK__", REPORT_MARK)
    body = assemble_program(context, reply, "", entry_point)
    # The definitions run inside a guard, so a module-level crash is reported instead of ending the program.
    return f"__ghost_src = {body!r}\n{harness}"


def parse_report(output: str, cases: list[Case]) -> CheckReport:
    """Read the program's report line; no line (the program died) → not loaded, every case failed."""
    for line in reversed(output.splitlines()):
        if line.startswith(REPORT_MARK):
            try:
                data = json.loads(line[len(REPORT_MARK):])
            except ValueError:
                break
            rows = data.get("results") if isinstance(data, dict) else None
            if not isinstance(rows, list):
                break
            results = [
                CaseResult(case, bool(row.get("ok")), _cut(row.get("got"), 300), _cut(row.get("error"), 300))
                for case, row in zip(cases, rows, strict=False) if isinstance(row, dict)
            ]
            return CheckReport(results, bool(data.get("loaded")), _cut(data.get("error"), 500))
    tail = _cut("\n".join(output.strip().splitlines()[-3:]), 500)
    return CheckReport([CaseResult(c, False, error="the program did not finish") for c in cases], False,
                       tail or "the program produced no report")


# ------------------------------------------------------------------------------------------ helpers


def _cut(value: object, limit: int) -> str:
    """A program's value or error as recorded: redacted, then cut (a cut first can split a secret)."""
    return redact_text(str(value or ""))[:limit]


_LITERAL_WORDS = {"true": "True", "false": "False", "none": "None", "null": "None"}
_SAFE_NAMES = frozenset({"True", "False", "None", "inf", "nan", "float", "int", "str", "list", "tuple", "set",
                         "dict", "frozenset", "abs", "round", "len", "sorted", "range", "math"})


def _only_names(text: str, allowed: set[str]) -> bool:
    """`text` is an expression whose free names are `allowed` (the functions under test) or harmless builtins."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return all(node.id in allowed or node.id in _SAFE_NAMES for node in ast.walk(tree) if isinstance(node, ast.Name))


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _call_end(text: str, open_paren: int) -> int | None:
    """Index just past the `)` matching the `(` at `open_paren` (quote-aware), None when unbalanced."""
    depth, quote = 0, ""
    for i in range(open_paren, min(len(text), open_paren + MAX_CASE_CHARS)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _leading_expression(text: str) -> str:
    """The longest prefix of `text` (up to a line end) that parses as a Python expression."""
    line = text.split("\n", 1)[0].strip().strip("`")
    for end in range(len(line), 0, -1):
        candidate = line[:end].rstrip(" .,;`")
        if candidate and _is_expression(candidate):
            return candidate
    return ""


_HARNESS = r'''
import json as __json, signal as __signal, sys as __sys, io as __io, contextlib as __ctx, ast as __ast

class __GhostTimeout(Exception):
    pass

def __ghost_alarm(*_):
    raise __GhostTimeout("timed out after __TIMEOUT__ s")

__signal.signal(__signal.SIGALRM, __ghost_alarm)
__g = {"__name__": "__ghost_answer__"}
__loaded, __load_error = True, ""
try:
    __signal.alarm(__TIMEOUT__ * 2)
    with __ctx.redirect_stdout(__io.StringIO()):
        exec(compile(__ghost_src, "answer.py", "exec"), __g)
except BaseException as __e:
    __loaded, __load_error = False, type(__e).__name__ + ": " + str(__e)[:300]
finally:
    __signal.alarm(0)

def __same(got, want_src):
    try:
        want = eval(want_src, __g)
    except BaseException:
        return " ".join(repr(got).split()) == " ".join(want_src.split())
    if got == want:
        return True
    if isinstance(got, float) or isinstance(want, float):
        try:
            return abs(float(got) - float(want)) <= 1e-6 * max(1.0, abs(float(want)))
        except (TypeError, ValueError):
            return False
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and type(got) is not type(want):
        return list(got) == list(want)
    return False

__results = []
for __expr, __want in __CASES__:
    if not __loaded:
        __results.append({"ok": False, "got": "", "error": "the code did not load"})
        continue
    try:
        __signal.alarm(__TIMEOUT__)
        with __ctx.redirect_stdout(__io.StringIO()):
            __got = eval(compile(__expr, "case", "eval"), __g)
        __signal.alarm(0)
        if __want is None:
            __ok = bool(__got)
            __results.append({"ok": __ok, "got": "", "error": "" if __ok else "assertion is false"})
        else:
            __ok = __same(__got, __want)
            __results.append({"ok": __ok, "got": repr(__got)[:300], "error": ""})
    except BaseException as __e:
        __signal.alarm(0)
        __results.append({"ok": False, "got": "", "error": type(__e).__name__ + ": " + str(__e)[:200]})
print("__MARK__" + __json.dumps({"loaded": __loaded, "error": __load_error, "results": __results}))
'''


def case_lines(results: list[CaseResult], limit: int = 8) -> str:
    """Failing cases as bullet lines for a revision prompt (at most `limit`)."""
    return "\n".join(f"- {r.describe()}" for r in results[:limit])


def describe_cases(cases: list[Case]) -> list[dict[str, Any]]:
    """Cases as JSON for the trajectory step."""
    return [{"expr": c.expr, "want": c.want, "origin": c.origin} for c in cases]


__all__ = [
    "Case",
    "CaseResult",
    "CheckReport",
    "REPORT_MARK",
    "answer_code",
    "case_lines",
    "check_program",
    "describe_cases",
    "entry_points",
    "model_cases",
    "parse_report",
    "request_code",
    "tests_apply",
    "user_cases",
]
