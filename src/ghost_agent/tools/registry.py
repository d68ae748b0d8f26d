"""The tool registry: what the agent may call, how it is described to the model, and the one safe way to call.

`call` is total: an unknown tool, unparseable or invalid arguments, and a tool that raises all come back as
error results the model can read and act on; nothing propagates into the tool loop (cancellation aside).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ghost_agent.logging import get_logger
from ghost_agent.tools.base import JSON, Tool, ToolContext, ToolResult, one_line
from ghost_agent.tools.bash_tool import BashTool
from ghost_agent.tools.file_system import FileSystemTool
from ghost_agent.tools.memory_search import MemorySearchTool
from ghost_agent.tools.python_tool import PythonTool
from ghost_agent.tools.schema import check_schema, signature, type_of, validate

log = get_logger("tools")

# The whole arguments string in one fence (a one-line ```{...}``` too), closed by its LAST backticks: a string in the
# arguments may hold ``` itself. Its own rule: text.fences.sole_fence ends a block at its first closing backticks.
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.S)


class ToolRegistry:
    """Tools by name. Schemas are checked at registration (a typo in a tool's schema fails at startup, not
    in front of the model); everything describing the tools is sorted by name so it is byte-identical
    from turn to turn (the system-prompt prefix stays cacheable)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add `tool`; ValueError on a duplicate or malformed name, SchemaDefinitionError on a bad schema."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool.name or ""):
            raise ValueError(f"invalid tool name {tool.name!r}")
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        check_schema(tool.parameters, f"{tool.name}.parameters")
        if tool.parameters.get("type") != "object":
            raise ValueError(f"{tool.name}: parameters must be an object schema")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas_openai(self) -> list[JSON]:
        """The OpenAI `tools` list: `{"type": "function", "function": {name, description, parameters}}` per
        tool, sorted by name; deep copies, so callers may change them freely."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": copy.deepcopy(tool.parameters),
                },
            }
            for tool in (self._tools[n] for n in self.names)
        ]

    def describe_for_prompt(self) -> str:
        """A compact block for the system prompt, one tool per line, sorted:
        `- name(arg: type, opt?: type): description`."""
        return "\n".join(
            f"- {tool.name}({signature(tool.parameters)}): {tool.description}"
            for tool in (self._tools[n] for n in self.names)
        )

    async def call(self, name: str, args: Any, ctx: ToolContext) -> ToolResult:
        """Run tool `name` with `args` (a dict, a JSON object string, or None for no arguments).

        Never raises (except cancellation): problems become error results. The output is capped at the
        tool's `result_cap` with a visible marker. Every call is logged as `tool_call`; a tool that raised
        is also logged as `tool_error` with the traceback.
        """
        started = time.perf_counter()
        tool = self._tools.get(name)
        if tool is None:
            result = ToolResult.failure(
                str(name) if name else "tool", f"unknown tool {one_line(str(name), 60)!r}",
                hint=f"available tools: {', '.join(self.names)}",
            )
        else:
            result = await self._call(tool, args, ctx)
            result.capped(tool.result_cap)
        result.tool = tool.name if tool else str(name)
        result.duration_ms = (time.perf_counter() - started) * 1000
        log.info("tool_call", tool=result.tool, ok=result.ok, ms=round(result.duration_ms, 1),
                 truncated=result.truncated, session=ctx.session_id)
        return result

    async def _call(self, tool: Tool, raw_args: Any, ctx: ToolContext) -> ToolResult:
        args, problem = parse_arguments(raw_args)
        if args is None:
            return ToolResult.failure(tool.name, problem or "bad arguments", hint=_usage(tool))
        errors = validate(args, tool.parameters)
        if errors:
            return ToolResult.failure(tool.name, "; ".join(errors), hint=_usage(tool))
        try:
            return await tool.run(args, ctx)
        except Exception as exc:  # a tool bug must not take the turn down; the model gets a readable error
            log.error("tool_error", tool=tool.name, error_type=type(exc).__name__, error=str(exc),
                      session=ctx.session_id, exc_info=True)
            return ToolResult.failure(tool.name, f"internal error: {type(exc).__name__}: {exc}")


def parse_arguments(raw: Any) -> tuple[JSON | None, str | None]:
    """(arguments dict, None) or (None, what is wrong). Accepts a mapping, None / "" (no arguments), or a
    JSON object string, also inside a ```json fence (small models write them so)."""
    if raw is None:
        return {}, None
    if isinstance(raw, Mapping):
        return dict(raw), None
    if not isinstance(raw, str):
        return None, f"arguments must be a JSON object (got {type_of(raw)})"
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return {}, None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            parsed = json.loads(drop_trailing_commas(text))
        except json.JSONDecodeError:
            return None, f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(parsed, dict):
        return None, f"arguments must be a JSON object (got {type_of(parsed)})"
    return parsed, None


def drop_trailing_commas(text: str) -> str:
    """`text` without commas that directly precede a closing brace or bracket, outside strings (`{"a": 1,}`
    is the most common way small models break JSON). Only tried after strict parsing failed."""
    out: list[str] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "," and text[i + 1:].lstrip()[:1] in ("}", "]"):
            continue
        out.append(ch)
    return "".join(out)


def _usage(tool: Tool) -> str:
    return f"expected {{{signature(tool.parameters)}}}"


def default_registry() -> ToolRegistry:
    """The agent's own tools: python, bash, file_system and memory_search."""
    return ToolRegistry([PythonTool(), BashTool(), FileSystemTool(), MemorySearchTool()])


__all__ = ["ToolRegistry", "default_registry", "parse_arguments"]
