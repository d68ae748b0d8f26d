"""GHOST_HOME is laid out on first start."""

from __future__ import annotations

from pathlib import Path

import orjson

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import app_client, make_settings


def test_ensure_creates_the_design_layout(tmp_path: Path) -> None:
    home = GhostHome(tmp_path / "g").ensure()
    for rel in ("system/trajectories", "system/prm", "system/router", "system/skills", "system/selfhood",
                "system/eval", "system/logs", "workspace"):
        assert (home.root / rel).is_dir(), rel
    assert (home.system.stat().st_mode & 0o777) == 0o700
    GhostHome(tmp_path / "g").ensure()  # idempotent


async def test_first_start_lays_out_home_and_logs_json(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    async with app_client(settings, ScriptedBackend()) as client:
        r = await client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 200
    log = settings.home / "system" / "logs" / "ghost.jsonl"

    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    names = [e["event"] for e in events]
    assert "startup" in names and "backend_ready" in names and "shutdown_complete" in names
    request = next(e for e in events if e["event"] == "request")
    assert request["status"] == 200 and request["path"] == "/v1/chat/completions"
    for key in ("request_id", "total_ms", "ttft_ms", "queue_ms", "ts", "level"):
        assert key in request, key
