"""Resolving the settings: defaults < config file < env < CLI, which config file is read, and each value's source."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.settings import SettingsError, load_settings, resolve_settings


@pytest.fixture(autouse=True)
def _private_user_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default GHOST_HOME (~/.ghost) is read for its config.toml: keep the developer's own out of these tests."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))


def test_defaults() -> None:
    s = load_settings(environ={})
    assert (s.server.host, s.server.port, s.backend.upstream_url) == ("127.0.0.1", 8000, None)
    assert s.learning.prm_train_cooldown == 10800.0
    assert s.learning.frontier_selfplay is True and s.learning.frontier_uniform_sample_prob == 0.2
    assert s.backend.local_model == "qwen2.5-coder-1.5b"
    assert s.home == Path("~/.ghost").expanduser()


def test_precedence_defaults_config_env_cli(tmp_path: Path) -> None:
    config = tmp_path / "ghost.toml"
    config.write_text('[server]\nport = 9001\nhost = "127.0.0.2"\n[learning]\nprm_train_cooldown = 60\n')
    env = {"GHOST_PORT": "9002", "GHOST_PRM_TRAIN_COOLDOWN": "120", "GHOST_CONFIG": str(config)}
    s = load_settings(cli={"port": 9003}, environ=env)
    assert s.server.port == 9003  # CLI beats env beats config
    assert s.learning.prm_train_cooldown == 120.0  # env beats config
    assert s.server.host == "127.0.0.2"  # config beats default
    assert s.config == config


def test_config_path_from_cli(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("port = 7000\n")  # top-level keys work too
    assert load_settings(cli={"config": config}, environ={}).server.port == 7000


def test_a_key_may_sit_in_any_table(tmp_path: Path) -> None:
    """The tables of ghost.toml document; a key is found whichever table (or none) it is written in."""
    config = tmp_path / "c.toml"
    config.write_text('[agent]\nport = 7001\n[whatever]\nsandbox-timeout-s = 5\nwatchdog = false\n')
    s = load_settings(cli={"config": config}, environ={})
    assert (s.server.port, s.sandbox.timeout_s, s.watchdog.enabled) == (7001, 5.0, False)


def test_config_file_errors_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nprot = 1\n")
    with pytest.raises(SettingsError, match="unknown setting 'prot'"):
        load_settings(cli={"config": bad}, environ={})
    bad.write_text("port = \n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(cli={"config": bad}, environ={})
    with pytest.raises(SettingsError, match="not found"):
        load_settings(cli={"config": tmp_path / "missing.toml"}, environ={})
    bad.write_text("config = 'other.toml'\n")
    with pytest.raises(SettingsError, match="unknown setting 'config'"):  # a config file cannot name another
        load_settings(cli={"config": bad}, environ={})


def test_the_homes_config_toml_is_read_by_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text('[server]\nport = 9100\n[agent]\nmax_steps = 9\n[logging]\nlog_level = "debug"\n')
    s = load_settings(cli={"home": home}, environ={})
    assert (s.server.port, s.agent.max_steps, s.logging.level) == (9100, 9, "debug")
    assert s.config == config  # the file read is reported (startup log, `ghost-agent config`)
    # GHOST_HOME finds it too; precedence stays defaults < file < env < CLI
    s = load_settings(cli={"port": 9300}, environ={"GHOST_HOME": str(home), "GHOST_MAX_STEPS": "7"})
    assert (s.server.port, s.agent.max_steps, s.logging.level) == (9300, 7, "debug")


def test_the_default_home_is_searched_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ghost").mkdir()
    (tmp_path / ".ghost" / "config.toml").write_text("port = 9200\n")
    assert load_settings(environ={}).server.port == 9200


def test_without_a_config_file_the_defaults_hold(tmp_path: Path) -> None:
    s = load_settings(cli={"home": tmp_path / "fresh"}, environ={})
    assert s.config is None and s.server.port == 8000
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "config.toml").write_text("port = 9400\n")
    # an explicit file replaces the home's: /dev/null reads nothing at all
    s = load_settings(cli={"home": tmp_path / "fresh", "config": Path("/dev/null")}, environ={})
    assert s.server.port == 8000
    other = tmp_path / "other.toml"
    other.write_text("port = 9500\n")
    assert load_settings(cli={"home": tmp_path / "fresh"}, environ={"GHOST_CONFIG": str(other)}).server.port == 9500


def test_the_homes_config_cannot_move_the_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[storage]\nhome = "{tmp_path / "elsewhere"}"\n')
    with pytest.raises(SettingsError, match="home.*cannot be set in the home's own config file"):
        load_settings(cli={"home": home}, environ={})
    # passed explicitly, a file may still choose the home
    assert load_settings(cli={"config": home / "config.toml"}, environ={}).home == tmp_path / "elsewhere"


def test_resolve_settings_names_each_source(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("port = 9100\nmax_steps = 9\n")
    s, sources = resolve_settings(cli={"home": home, "log_level": "debug"}, environ={"GHOST_MAX_STEPS": "7"})
    assert sources["port"] == f"config {home / 'config.toml'}"
    assert sources["max_steps"] == "env GHOST_MAX_STEPS"
    assert sources["log_level"] == "flag --log-level" and sources["home"] == "flag --home"
    assert sources["n_ctx"] == "default"
    assert sources["config"] == "found in the home"


def test_each_value_keeps_its_source_through_conversion(tmp_path: Path) -> None:
    """A value converted on the way in (a TOML string to an int, an env word to a bool, a path expanded) is
    still reported as coming from where it was written, by its config key, whatever its section attribute."""
    config = tmp_path / "c.toml"
    config.write_text('[server]\nport = "9100"\n[sandbox]\nsandbox = "subprocess"\nsandbox_timeout_s = 5\n')
    env = {"GHOST_WATCHDOG": " Off ", "GHOST_PRM_MODEL": "~/prm.json", "GHOST_LOG_BACKUPS": "3"}
    s, sources = resolve_settings(cli={"config": config, "agent_strategy": "action-loop"}, environ=env)
    assert (s.server.port, s.sandbox.mode, s.sandbox.timeout_s) == (9100, "subprocess", 5.0)
    assert (s.watchdog.enabled, s.learning.prm_model, s.logging.backups) == (False, Path("~/prm.json").expanduser(), 3)
    assert s.agent.strategy == "action-loop"
    where = f"config {config}"
    assert (sources["port"], sources["sandbox"], sources["sandbox_timeout_s"]) == (where, where, where)
    assert (sources["watchdog"], sources["prm_model"]) == ("env GHOST_WATCHDOG", "env GHOST_PRM_MODEL")
    assert (sources["log_backups"], sources["agent_strategy"]) == ("env GHOST_LOG_BACKUPS", "flag --agent-strategy")
    assert sources["config"] == "flag --config"
    given = {"port", "sandbox", "sandbox_timeout_s", "watchdog", "prm_model", "log_backups", "agent_strategy", "config"}
    assert {name for name, source in sources.items() if source != "default"} == given


def test_empty_env_values_are_ignored_and_an_empty_optional_is_unset(tmp_path: Path) -> None:
    s, sources = resolve_settings(environ={"GHOST_PORT": "", "GHOST_HOME": str(tmp_path)})
    assert s.server.port == 8000 and sources["port"] == "default"
    config = tmp_path / "c.toml"
    config.write_text('upstream_url = ""\nprm_model = ""\n')
    s, sources = resolve_settings(cli={"config": config, "api_key": ""}, environ={})
    assert (s.backend.upstream_url, s.learning.prm_model, s.server.api_key) == (None, None, None)
    assert sources["api_key"] == "flag --api-key" and sources["upstream_url"] == f"config {config}"


def test_log_rotation_defaults_and_env() -> None:
    s = load_settings(environ={})
    assert (s.logging.max_bytes, s.logging.backups) == (20 * 1024 * 1024, 5)
    s = load_settings(environ={"GHOST_LOG_MAX_BYTES": "0", "GHOST_LOG_BACKUPS": "2"})
    assert (s.logging.max_bytes, s.logging.backups) == (0, 2)
    with pytest.raises(SettingsError, match="log_backups"):
        load_settings(environ={"GHOST_LOG_BACKUPS": "-1"})
