"""What the end-to-end agent tests share: the daemon in-process in front of the scripted upstream, agent-path
settings, scripted actions, and a skip when no sandbox can run code here (import `needs_sandbox` into a module
to make it autouse there)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedReply
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.settings import Settings
from tests.conftest import app_client, make_settings


@pytest.fixture(autouse=True)
def needs_sandbox(tmp_path: Path) -> None:
    try:
        get_sandbox(make_settings(tmp_path))
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no sandbox backend can run code here: {exc}")


def agent_settings(tmp_path: Path, url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"router": "always-agent", "agent_strategy": "action-loop", "mcts": False,
                              "upstream_url": url}
    values.update(overrides)
    return make_settings(tmp_path, **values)


@contextlib.asynccontextmanager
async def daemon(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings, make_backend(settings.backend)) as client:
        yield client


def act(tool: str, **args: Any) -> ScriptedReply:
    return ScriptedReply(content=json.dumps({"tool": tool, "args": args}))


def say(text: str) -> ScriptedReply:
    return ScriptedReply(content=text)
