"""Self-check of code answers: run the task's own examples against the answer's code before replying.

When the request carries doctest-style examples (`>>> f(1)` followed by the expected output, as in most
function specs and every HumanEval problem) and the answer contains Python code, the loop runs those examples
against the code in the sandbox. On a failure the model sees the failing examples and gets one chance to fix
the code. This does not depend on the model deciding to test its work — a 1.5B model answering a coding task
directly almost never does — and it costs one sandbox run (plus one model call only when something failed).
"""

from __future__ import annotations

import re
import textwrap

FENCE_RE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
DEF_RE = re.compile(r"^\s*def\s+\w+\s*\(", re.MULTILINE)
MAX_EXAMPLES_CHARS = 4000


def extract_examples(request: str) -> str:
    """The `>>>` examples of a request (each with its expected-output lines), dedented, or ''.

    An example's expected output runs until a blank line, the next `>>>` or a line that closes a docstring.
    """
    out: list[str] = []
    lines = request.splitlines()
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith(">>> "):
            block = [stripped]
            i += 1
            while i < len(lines):
                nxt = lines[i].strip()
                if nxt.startswith("... "):
                    block.append(nxt)
                elif not nxt or nxt.startswith(">>>") or nxt.startswith(('"""', "'''")):
                    break
                else:
                    block.append(nxt)
                i += 1
            out.extend(block)
            continue
        i += 1
    text = "\n".join(out)
    return text if len(text) <= MAX_EXAMPLES_CHARS else ""


def extract_code(answer: str) -> str:
    """The answer's Python code: its fenced blocks that define something, else '' (prose is not code)."""
    blocks = [b for b in FENCE_RE.findall(answer) if DEF_RE.search(b)]
    return textwrap.dedent("\n\n".join(blocks)).strip()


def check_program(code: str, examples: str) -> str:
    """A program that defines `code` and runs `examples` as a doctest; exits 1 and prints failures if any fail."""
    return (
        f"{code}\n\n"
        "import doctest as __doctest, sys as __sys\n"
        f"__examples = {examples!r}\n"
        "__test = __doctest.DocTestParser().get_doctest(__examples, dict(globals()), 'examples', None, 0)\n"
        "__runner = __doctest.DocTestRunner(optionflags=__doctest.NORMALIZE_WHITESPACE)\n"
        "__runner.run(__test, out=__sys.stdout.write)\n"
        "__sys.exit(1 if __runner.failures else 0)\n"
    )


def revision_prompt(report: str) -> str:
    """What the model sees when its code failed the task's own examples."""
    return (
        "I ran the examples from the task against your code and some failed:\n"
        f"{report.strip()[:3000]}\n"
        "Fix the code so that every example passes, and reply with the complete corrected code in a ```python "
        "block."
    )


__all__ = ["check_program", "extract_code", "extract_examples", "revision_prompt"]
