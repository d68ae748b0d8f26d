"""The config file writer: config/ghost.toml documents every setting, and `ghost-agent config` reads back."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ghost_agent.settings import FIELDS, Settings, load_settings, render_config_toml, resolve_settings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _private_user_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))


def test_rendered_config_documents_every_setting_and_uncomments_to_defaults(tmp_path: Path) -> None:
    text = render_config_toml()
    for name in FIELDS:
        if name != "config":
            assert f"# {name} = " in text, name
            assert f"GHOST_{name.upper()}" in text
    uncommented = "\n".join(
        line[2:] if re.match(r"# [a-z_]+ = ", line) else line for line in text.splitlines()
    )
    parsed = tomllib.loads(uncommented.replace('""  # unset', '""'))
    assert parsed["learning"]["frontier_uniform_sample_prob"] == 0.2
    cfg = tmp_path / "rendered.toml"
    cfg.write_text(uncommented.replace('""  # unset', '""'))
    s = load_settings(cli={"config": cfg}, environ={})
    defaults = Settings()
    for name in FIELDS:
        if name != "config":
            assert s.get(name) == defaults.get(name), name


def test_repo_config_file_is_current() -> None:
    assert (REPO / "config" / "ghost.toml").read_text() == render_config_toml(), (
        "config/ghost.toml is stale: run `ghost-agent config --defaults > config/ghost.toml`"
    )


def test_the_tables_are_the_sections_in_order() -> None:
    tables = re.findall(r"^\[(\w+)\]$", render_config_toml(), re.MULTILINE)
    assert tables == ["server", "backend", "storage", "logging", "agent", "sandbox", "learning", "watchdog"]


def test_settings_in_force_name_their_source_and_read_back(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[sandbox]\nsandbox = "subprocess"\n')
    env = {"GHOST_WATCHDOG": "no", "GHOST_UPSTREAM_URL": "http://u:pw@h/v1", "GHOST_API_KEY": "sk-secret"}
    settings, sources = resolve_settings(cli={"config": config, "agent_max_tokens": 64}, environ=env)
    text = render_config_toml(settings, sources)
    assert f'sandbox = "subprocess"  # from config {config}' in text
    assert "watchdog = false  # from env GHOST_WATCHDOG" in text
    assert "agent_max_tokens = 64  # from flag --agent-max-tokens" in text
    assert '# api_key = "***"  # set by env GHOST_API_KEY; the value is not shown' in text
    assert "pw" not in text and "sk-secret" not in text
    again = tmp_path / "again.toml"
    again.write_text(text)
    back = load_settings(cli={"config": again}, environ={})
    assert (back.sandbox.mode, back.watchdog.enabled, back.agent.max_tokens) == ("subprocess", False, 64)
