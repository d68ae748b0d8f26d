"""The agent's tools (issue 5): python and bash in the sandbox, file_system confined to the workspace, and
the memory_search slot; `ToolRegistry.call` validates arguments and never raises."""

from __future__ import annotations

from ghost_agent.tools.base import MemorySearcher, SandboxTool, Tool, ToolContext, ToolResult
from ghost_agent.tools.bash_tool import BashTool
from ghost_agent.tools.file_system import FileSystemTool
from ghost_agent.tools.memory_search import MemorySearchTool
from ghost_agent.tools.python_tool import PythonTool
from ghost_agent.tools.registry import ToolRegistry, default_registry, parse_arguments
from ghost_agent.tools.schema import SchemaDefinitionError, check_schema, validate

__all__ = [
    "BashTool",
    "FileSystemTool",
    "MemorySearchTool",
    "MemorySearcher",
    "PythonTool",
    "SandboxTool",
    "SchemaDefinitionError",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "check_schema",
    "default_registry",
    "parse_arguments",
    "validate",
]
