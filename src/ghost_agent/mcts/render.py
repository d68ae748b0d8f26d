"""Tools and actions as the MCTS prompts show them to the model."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ghost_agent.mcts.parse import ToolSpec
from ghost_agent.prm.features import ActionCandidate

TOOL_DESCRIPTION_CHARS = 300
TOOL_SCHEMA_CHARS = 600


def render_tools(tools: Sequence[ToolSpec]) -> str:
    """One line per tool: name, description and compact parameter schema (both capped in length)."""
    if not tools:
        return "(none: the only option is to answer directly)"
    lines = []
    for tool in tools:
        line = f"- {tool.name}"
        if tool.description:
            line += f": {tool.description[:TOOL_DESCRIPTION_CHARS]}"
        if tool.parameters:
            schema = json.dumps(tool.parameters, separators=(",", ":"), default=str)
            line += f" | parameters: {schema[:TOOL_SCHEMA_CHARS]}"
        lines.append(line)
    return "\n".join(lines)


def render_action(action: ActionCandidate) -> str:
    """An action as the JSON object shape the prompts speak."""
    return json.dumps(
        {"description": action.description, "tool": action.tool_name, "args": action.tool_args},
        default=str,
        ensure_ascii=False,
    )


__all__ = ["render_action", "render_tools"]
