"""The `memory_search` tool: look up how similar tasks were solved before.

This is the slot the agent turn wires: the context's `memory_searcher` (an async `(query, k) -> list of
{task, solution, ...}`) does the search; without one the tool says so instead of pretending nothing matched.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ghost_agent.tools.base import JSON, Tool, ToolContext, ToolResult, one_line

DEFAULT_K = 3
MAX_K = 10
FIELD_CHARS = 800  # per field of one memory: enough for a short solution, bounded for the prompt
_SHOWN_FIRST = ("task", "solution")


class MemorySearchTool(Tool):
    """Searches past solved tasks and lessons; each hit is rendered as `task`, `solution`, then any other
    scalar fields (score, outcome...) on one line."""

    name = "memory_search"
    description = "Search your memory of past tasks and lessons for ones similar to the query."
    result_cap = 6000
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "What to look for."},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K,
                  "description": f"How many results (default {DEFAULT_K})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    async def run(self, args: JSON, ctx: ToolContext) -> ToolResult:
        """Ask the attached searcher; no searcher → an error result naming the missing store."""
        if ctx.memory_searcher is None:
            return self.fail("no memory store is attached", hint="solve the task without it")
        query = str(args["query"]).strip()
        k = int(args.get("k", DEFAULT_K))
        hits = list(await ctx.memory_searcher(query, k))[:k]
        if not hits:
            return ToolResult.success(f"No memories match {one_line(query, 80)!r}.", data={"hits": 0})
        blocks = [_render(i, hit) for i, hit in enumerate(hits, 1)]
        return ToolResult.success("\n\n".join(blocks), data={"hits": len(hits)})


def _render(index: int, hit: Any) -> str:
    if not isinstance(hit, dict):
        return f"{index}. {_clip(str(hit))}"
    lines = [f"{index}. task: {_clip(str(hit.get('task', '')))}"]
    if hit.get("solution") not in (None, ""):
        lines.append(f"   solution: {_clip(str(hit['solution']))}")
    others = [f"{key}={_clip(str(value), 80)}" for key, value in hit.items()
              if key not in _SHOWN_FIRST and isinstance(value, (str, int, float, bool)) and value != ""]
    if others:
        lines.append("   " + ", ".join(others))
    return "\n".join(lines)


def _clip(text: str, limit: int = FIELD_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["DEFAULT_K", "MAX_K", "MemorySearchTool"]
