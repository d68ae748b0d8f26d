"""Fixtures the agent tests share: a tool context on a fresh workspace with the real sandbox, the real registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.sandbox import ExecLimits, SandboxBackend, Workspaces
from ghost_agent.tools import ToolContext, ToolRegistry, default_registry


@pytest.fixture
def ctx(sandbox: SandboxBackend, tmp_path: Path) -> ToolContext:
    workspaces = Workspaces(tmp_path / "workspaces", quota_mb=64, max_age_days=1)
    return ToolContext.for_session(workspaces, "agent-test", sandbox=sandbox, limits=ExecLimits(timeout_s=20.0))


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()
