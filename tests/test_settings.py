"""Settings precedence, validation messages, and the documented config file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ghost_agent.settings import Settings, SettingsError, load_settings, render_config_toml

REPO = Path(__file__).resolve().parents[1]


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
