"""The `python` tool: run model-written Python 3 in the sandbox, in the session's workspace."""

from __future__ import annotations

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
        "files persist between calls. Print what you need to see."
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
        """The code as given."""
        return str(args["code"])


__all__ = ["MAX_CODE_CHARS", "PythonTool"]
