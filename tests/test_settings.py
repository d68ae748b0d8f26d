"""Settings precedence, validation messages, and the documented config file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ghost_agent.settings import Settings, SettingsError, load_settings, render_config_toml, resolve_settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _private_user_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default GHOST_HOME (~/.ghost) is read for its config.toml: keep the developer's own out of these tests."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))


def test_defaults() -> None:
    s = load_settings(environ={})
    assert (s.host, s.port, s.upstream_url) == ("127.0.0.1", 8000, None)
    assert s.prm_train_cooldown == 10800.0
    assert s.frontier_selfplay is True and s.frontier_uniform_sample_prob == 0.2
    assert s.local_model == "qwen2.5-coder-1.5b"
    assert s.home == Path("~/.ghost").expanduser()


def test_precedence_defaults_config_env_cli(tmp_path: Path) -> None:
    config = tmp_path / "ghost.toml"
    config.write_text('[server]\nport = 9001\nhost = "127.0.0.2"\n[learning]\nprm_train_cooldown = 60\n')
    env = {"GHOST_PORT": "9002", "GHOST_PRM_TRAIN_COOLDOWN": "120", "GHOST_CONFIG": str(config)}
    s = load_settings(cli={"port": 9003}, environ=env)
    assert s.port == 9003  # CLI beats env beats config
    assert s.prm_train_cooldown == 120.0  # env beats config
    assert s.host == "127.0.0.2"  # config beats default
    assert s.config == config


def test_config_path_from_cli(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("port = 7000\n")  # top-level keys work too
    assert load_settings(cli={"config": config}, environ={}).port == 7000


def test_bool_env_parsing() -> None:
    assert load_settings(environ={"GHOST_FRONTIER_SELFPLAY": "false"}).frontier_selfplay is False
    with pytest.raises(SettingsError, match="frontier_selfplay"):
        load_settings(environ={"GHOST_FRONTIER_SELFPLAY": "maybe"})


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"GHOST_FRONTIER_UNIFORM_SAMPLE_PROB": "2"}, "valid range is [0.0, 1.0]"),
        ({"GHOST_PORT": "70000"}, "valid range is [0, 65535]"),
        ({"GHOST_PORT": "eighty"}, "port: invalid value"),
        ({"GHOST_LOCAL_MODEL": "llama"}, "valid choices are qwen2.5-coder-1.5b, qwen2.5-coder-0.5b"),
        ({"GHOST_PRM_TRAIN_COOLDOWN": "nan"}, "NaN"),
        ({"GHOST_UPSTREAM_URL": "ftp://x"}, "http:// or https://"),
    ],
)
def test_invalid_values_name_the_setting_and_range(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(environ=env)
    assert fragment in str(info.value)


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


def test_non_loopback_bind_needs_a_key() -> None:
    with pytest.raises(SettingsError, match="--insecure-no-auth"):
        Settings(host="0.0.0.0").validate()
    Settings(host="0.0.0.0", api_key="k").validate()
    Settings(host="0.0.0.0", insecure_no_auth=True).validate()
    Settings(host="127.0.0.5").validate()


def test_public_dict_masks_secrets() -> None:
    d = Settings(api_key="secret", upstream_api_key="other").public_dict()
    assert d["api_key"] == "***" and d["upstream_api_key"] == "***"
    assert "secret" not in str(d)


def test_rendered_config_documents_every_setting_and_uncomments_to_defaults(tmp_path: Path) -> None:
    text = render_config_toml()
    for name in Settings.__dataclass_fields__:
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
    for name in Settings.__dataclass_fields__:
        if name != "config":
            assert getattr(s, name) == getattr(defaults, name), name


def test_repo_config_file_is_current() -> None:
    assert (REPO / "config" / "ghost.toml").read_text() == render_config_toml(), (
        "config/ghost.toml is stale: run `ghost-agent config --defaults > config/ghost.toml`"
    )


def test_hostnames_that_look_loopback_are_not() -> None:
    assert Settings(host="::1").is_loopback and Settings(host="localhost").is_loopback
    assert not Settings(host="127.example.com").is_loopback
    with pytest.raises(SettingsError):
        Settings(host="127.example.com").validate()


def test_the_homes_config_toml_is_read_by_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text('[server]\nport = 9100\n[agent]\nmax_steps = 9\n[logging]\nlog_level = "debug"\n')
    s = load_settings(cli={"home": home}, environ={})
    assert (s.port, s.max_steps, s.log_level) == (9100, 9, "debug")
    assert s.config == config  # the file read is reported (startup log, `ghost-agent config`)
    # GHOST_HOME finds it too; precedence stays defaults < file < env < CLI
    s = load_settings(cli={"port": 9300}, environ={"GHOST_HOME": str(home), "GHOST_MAX_STEPS": "7"})
    assert (s.port, s.max_steps, s.log_level) == (9300, 7, "debug")


def test_the_default_home_is_searched_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ghost").mkdir()
    (tmp_path / ".ghost" / "config.toml").write_text("port = 9200\n")
    assert load_settings(environ={}).port == 9200


def test_without_a_config_file_the_defaults_hold(tmp_path: Path) -> None:
    s = load_settings(cli={"home": tmp_path / "fresh"}, environ={})
    assert s.config is None and s.port == 8000
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "config.toml").write_text("port = 9400\n")
    # an explicit file replaces the home's: /dev/null reads nothing at all
    assert load_settings(cli={"home": tmp_path / "fresh", "config": Path("/dev/null")}, environ={}).port == 8000
    other = tmp_path / "other.toml"
    other.write_text("port = 9500\n")
    assert load_settings(cli={"home": tmp_path / "fresh"}, environ={"GHOST_CONFIG": str(other)}).port == 9500


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


def test_log_rotation_defaults_and_env() -> None:
    s = load_settings(environ={})
    assert (s.log_max_bytes, s.log_backups) == (20 * 1024 * 1024, 5)
    s = load_settings(environ={"GHOST_LOG_MAX_BYTES": "0", "GHOST_LOG_BACKUPS": "2"})
    assert (s.log_max_bytes, s.log_backups) == (0, 2)
    with pytest.raises(SettingsError, match="log_backups"):
        load_settings(environ={"GHOST_LOG_BACKUPS": "-1"})
