"""The `bash` tool: run a shell command in the sandbox, in the session's workspace."""

from __future__ import annotations

from typing import Any, ClassVar

from ghost_agent.tools.base import JSON, SandboxTool

MAX_COMMAND_CHARS = 20_000


class BashTool(SandboxTool):
    """Runs `command` as a bash script in the sandbox; cwd is the session's workspace. Output as for the
    python tool (see SandboxTool)."""

    name = "bash"
    language = "bash"
    description = (
        "Run a bash command (coreutils, grep, sed, python3...). No network. The working directory is your "
        "workspace; files persist between calls."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "maxLength": MAX_COMMAND_CHARS,
                        "description": "The command or script to run."},
            "timeout_s": {"type": "number", "minimum": 0.1, "maximum": 3600,
                          "description": "Wall-clock limit in seconds (capped by the server's limit)."},
            "stdin": {"type": "string", "maxLength": 100_000, "description": "Text fed to standard input."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def source(self, args: JSON) -> str:
        """The command as given."""
        return str(args["command"])


__all__ = ["BashTool", "MAX_COMMAND_CHARS"]
