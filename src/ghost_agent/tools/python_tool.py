"""The `python` tool: run model-written Python 3 in the sandbox, in the session's workspace."""

from __future__ import annotations

import ast
from typing import Any, ClassVar

from ghost_agent.tools.base import JSON, SandboxTool

MAX_CODE_CHARS = 100_000


class PythonTool(SandboxTool):
    """Runs `code` with the sandbox's Python (numpy, pandas and the stdlib available); cwd is the workspace,
    which persists across the calls of a session. Output: stdout, "--- stderr ---", a status line on
    failure (see SandboxTool)."""

    name = "python"
    language = "python"
    description = (
        "Run Python 3 code (numpy, pandas, stdlib). No network. The working directory is your workspace; "
        "files persist between calls. Print what you need to see (a final bare expression is printed too)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS,
                     "description": "The program to run."},
            "timeout_s": {"type": "number", "minimum": 0.1, "maximum": 3600,
                          "description": "Wall-clock limit in seconds (capped by the server's limit)."},
            "stdin": {"type": "string", "maxLength": MAX_CODE_CHARS, "description": "Text fed to standard input."},
        },
        "required": ["code"],
        "additionalProperties": False,
    }

    def source(self, args: JSON) -> str:
        """The code, with a final bare expression echoed like a REPL would (see `echo_last_expression`)."""
        return echo_last_expression(str(args["code"]))


ECHO_NAME = "__ghost_value__"


def echo_last_expression(code: str) -> str:
    """`code` with its last top-level statement printed when it is a bare expression (not a print call).

    Models routinely end with `sum(x)` instead of `print(sum(x))` and then see "(no output)"; a REPL or a
    notebook would show the value, so we do too: the expression is assigned and its repr printed unless None.
    Code that does not parse, or ends with anything else, is returned unchanged (the sandbox reports errors).
    Only parsed here, never executed.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code
    last = tree.body[-1]
    value = last.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print":
        return code
    if last.end_lineno is None or last.end_col_offset is None:
        return code
    lines = code.splitlines(keepends=True)
    start = _offset(lines, last.lineno, last.col_offset)
    end = _offset(lines, last.end_lineno, last.end_col_offset)
    segment = code[start:end]
    return (
        f"{code[:start]}{ECHO_NAME} = ({segment})\n"
        f"if {ECHO_NAME} is not None:\n    print(repr({ECHO_NAME}))\n{code[end:]}"
    )


def _offset(lines: list[str], lineno: int, col_utf8: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column) — what `ast` reports — in the joined text."""
    before = sum(len(line) for line in lines[: lineno - 1])
    line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
    return before + len(line.encode("utf-8")[:col_utf8].decode("utf-8", errors="ignore"))


__all__ = ["MAX_CODE_CHARS", "PythonTool", "echo_last_expression"]
