"""`ghost-agent status` against a daemon on a real loopback port, with the api key."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ghost_agent.cli.main import main
from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import daemon_on_port, make_settings

KEY = "status-key"


def test_status_command_prints_the_daemon_status(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GHOST_API_KEY", raising=False)
    settings = make_settings(tmp_path, api_key=KEY, log_level="warning")
    home = ["--home", str(tmp_path / "cli-home")]  # no config file found by accident
    with daemon_on_port(settings, ScriptedBackend()) as url:
        assert main(["status", *home, "--url", url, "--api-key", KEY, "--json", "--refresh"]) == 0
        doc = orjson.loads(capsys.readouterr().out)
        monkeypatch.setenv("GHOST_API_KEY", KEY)  # the key from the environment, like the daemon's own
        assert main(["status", *home, "--url", url]) == 0
        text = capsys.readouterr().out
        monkeypatch.delenv("GHOST_API_KEY")
        assert main(["status", *home, "--url", url]) == 1
        refused = capsys.readouterr().err
    assert [p["name"] for p in doc["phases"]][:2] == ["journal_drain", "rem_dream"]
    assert doc["counts"]["trajectories"]["total"] == 0
    table = text.split("models:")[0]
    assert "journal_drain " in table and "rem_dream " in table and "self_play " in table and "(not built)" not in table
    assert "watchdog: running" in text and "models:" in text and "prm: no model" in text
    assert "lessons 0" in text and "candidates 0" in text
    assert "401" in refused and "GHOST_API_KEY" in refused


def test_status_command_reports_an_unreachable_daemon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ghost_agent.llm.fake_server import free_port

    code = main(["status", "--home", str(tmp_path), "--url", f"http://127.0.0.1:{free_port()}", "--timeout", "2"])
    assert code == 1
    assert "cannot reach the daemon" in capsys.readouterr().err
