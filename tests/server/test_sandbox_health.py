"""The daemon probes the sandbox in the background at startup and reports it on /health and in doctor."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.doctor import check_sandbox
from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import app_client, make_settings


async def sandbox_status(client: httpx.AsyncClient, timeout: float = 30.0) -> dict[str, Any]:
    """/health's sandbox section once the background probe has finished."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        body: dict[str, Any] = (await client.get("/health")).json()["sandbox"]
        if body["status"] != "probing":
            return body
        assert asyncio.get_running_loop().time() < deadline, "sandbox probe did not finish"
        await asyncio.sleep(0.02)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox)")
async def test_health_reports_the_isolating_backend(tmp_path: Path) -> None:
    async with app_client(make_settings(tmp_path), ScriptedBackend()) as client:
        sandbox = await sandbox_status(client)
    assert sandbox["status"] == "ready"
    assert sandbox["backend"] == "bwrap" and sandbox["isolated"] is True
    assert sandbox["network"] is True and sandbox["filesystem"] is True
    assert all(p["ok"] for p in sandbox["probes"] if p["candidate"] == sandbox["candidate"])


async def test_health_says_loudly_when_code_would_run_unisolated(tmp_path: Path) -> None:
    async with app_client(make_settings(tmp_path, sandbox="subprocess"), ScriptedBackend()) as client:
        sandbox = await sandbox_status(client)
    assert sandbox["status"] == "ready"
    assert sandbox["backend"] == "subprocess" and sandbox["isolated"] is False
    assert sandbox["network"] is False and sandbox["filesystem"] is False


def test_doctor_reports_the_sandbox(tmp_path: Path) -> None:
    check = check_sandbox(make_settings(tmp_path, sandbox="subprocess"))
    assert check.name == "sandbox" and check.status == "WARN"
    assert "UNISOLATED" in check.detail and check.fix
