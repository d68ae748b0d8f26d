"""The phase table from the settings: every window and cooldown a setting (flag, env, config), scaled."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.cli.main import build_parser
from ghost_agent.settings import FIELDS, Settings, SettingsError, load_settings
from ghost_agent.watchdog.base import NotBuiltPhase
from ghost_agent.watchdog.table import ROWS, build_phases, tick_seconds


def test_default_table_is_design_section_5() -> None:
    phases = build_phases(Settings())
    table = {p.key: (p.name, p.window, p.cooldown_s, p.built) for p in phases}
    assert table == {
        "1": ("journal_drain", (120.0, None), 0.0, True),
        "2": ("rem_dream", (600.0, 3600.0), 1800.0, True),
        "2.5": ("reflection", (900.0, 3600.0), 2400.0, True),
        "2.6": ("skills_auto", (900.0, 3600.0), 7200.0, True),
        "2.7": ("retrain", (900.0, 3600.0), 10800.0, True),
        "2.8": ("selfhood", (900.0, 3600.0), 3600.0, True),
        "3": ("self_play", (3600.0, None), 3600.0, True),
    }
    assert all(p.built and not isinstance(p, NotBuiltPhase) for p in phases)
    assert tick_seconds(Settings()) == 60.0


def test_every_window_and_cooldown_is_a_setting_from_flag_env_or_config(tmp_path: Path) -> None:
    names = {n for row in ROWS for n in (row.min_idle, row.max_idle, row.cooldown) if n}
    assert names <= set(FIELDS)
    config = tmp_path / "ghost.toml"
    config.write_text("[watchdog]\nrem_dream_cooldown_s = 60\n")
    flags = ["serve", "--idle-time-scale", "0.5", "--no-watchdog", "--reflection-idle-s", "100"]
    args = build_parser().parse_args(flags)
    cli = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    settings = load_settings(cli=cli, environ={"GHOST_SELF_PLAY_IDLE_S": "7200"}, config_path=config)
    assert settings.watchdog.enabled is False and settings.watchdog.idle_time_scale == 0.5
    phases = {p.name: p for p in build_phases(settings)}
    assert phases["rem_dream"].cooldown_s == 30.0
    assert phases["reflection"].window == (50.0, 1800.0)
    assert phases["self_play"].window == (3600.0, None)
    assert tick_seconds(settings) == 30.0


def test_an_empty_window_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="rem_dream_idle_max_s"):
        Settings.from_keys(rem_dream_idle_s=4000).validate()
    with pytest.raises(SettingsError, match="idle_time_scale"):
        Settings.from_keys(idle_time_scale=0).validate()
