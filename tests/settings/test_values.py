"""One value read and checked: the types and words accepted, choices (Literal) and ranges, and the messages."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.settings import FIELDS, SettingsError, arg_type, coerce, load_settings


@pytest.fixture(autouse=True)
def _private_user_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))


def test_bool_env_parsing() -> None:
    assert load_settings(environ={"GHOST_FRONTIER_SELFPLAY": "false"}).learning.frontier_selfplay is False
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


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("port", "eighty", "port: invalid value 'eighty' (invalid literal for int() with base 10: 'eighty')"),
        ("port", "8000.0", "port: invalid value '8000.0' (invalid literal for int() with base 10: '8000.0')"),
        ("port", 8000.5, "port: invalid value 8000.5 (expected an integer)"),
        ("port", True, "port: invalid value True (expected an integer)"),
        ("port", [1], "port: invalid value [1] (int() argument must be a string, a bytes-like object or a real "
                      "number, not 'list')"),
        ("port", datetime.date(2020, 1, 2), "port: invalid value datetime.date(2020, 1, 2) (int() argument must be "
                                            "a string, a bytes-like object or a real number, not 'datetime.date')"),
        ("port", "-1", "port: -1 is out of range; valid range is [0, 65535]"),
        ("idle_time_scale", "x", "idle_time_scale: invalid value 'x' (could not convert string to float: 'x')"),
        ("idle_time_scale", False, "idle_time_scale: invalid value False (expected a number)"),
        ("idle_time_scale", "0.0", "idle_time_scale: 0.0 is out of range; valid range is [1e-06, 1000.0]"),
        ("idle_time_scale", "nan", "idle_time_scale: NaN is not a valid value"),
        ("max_request_bytes", "10", "max_request_bytes: 10 is out of range; valid range is >= 1024"),
        ("watchdog", "maybe", "watchdog: invalid value 'maybe' (expected true/false)"),
        ("watchdog", 2, "watchdog: invalid value 2 (expected true/false)"),
        ("watchdog", 1.0, "watchdog: invalid value 1.0 (expected true/false)"),
        ("watchdog", "t", "watchdog: invalid value 't' (expected true/false)"),
        ("nope", "1", "unknown setting 'nope'"),
    ],
)
def test_a_bad_value_is_refused_with_the_same_words(name: str, raw: Any, message: str) -> None:
    with pytest.raises(SettingsError) as info:
        coerce(name, raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("port", " 42 ", 42),
        ("port", "4_2", 42),
        ("port", 42.0, 42),  # a TOML float that is a whole number
        ("idle_time_scale", 2, 2.0),
        ("idle_time_scale", " 1e-3 ", 0.001),
        ("reflection_lookback_h", "inf", float("inf")),
        ("watchdog", " Yes ", True),
        ("watchdog", "OFF", False),
        ("watchdog", 1, True),  # a TOML integer 1/0
        ("watchdog", 0, False),
        ("host", 5, "5"),  # anything becomes a str where a str goes
        ("served_model_name", "", None),  # the empty string unsets an optional setting
        ("prm_model", "/srv/p.json", Path("/srv/p.json")),
        ("home", "", Path(".")),  # ... but is a path where the setting cannot be unset
        ("sandbox", "subprocess", "subprocess"),
    ],
)
def test_values_read_as_before(name: str, raw: Any, value: Any) -> None:
    got = coerce(name, raw)
    assert got == value and type(got) is type(value)


def test_every_choice_is_a_literal_and_refused_alike_from_env_config_and_flag(tmp_path: Path) -> None:
    choices = {name: spec.choices for name, spec in FIELDS.items() if spec.choices}
    assert choices == {
        "local_model": ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"),
        "embeddings": ("lazy", "off"),
        "trajectory_durability": ("batch", "fsync", "none"),
        "log_level": ("debug", "info", "warning", "error"),
        "log_format": ("json", "console"),
        "router": ("auto", "always-agent", "always-fast"),
        "native_tools": ("auto", "on", "off"),
        "agent_strategy": ("auto", "answer-first", "action-loop"),
        "sandbox": ("auto", "bwrap", "unisolated", "subprocess"),
    }
    config = tmp_path / "c.toml"
    for name, valid in choices.items():
        expected = f"{name}: invalid choice 'Bogus'; valid choices are {', '.join(valid)}"
        with pytest.raises(SettingsError) as from_env:
            load_settings(environ={f"GHOST_{name.upper()}": "Bogus"})
        config.write_text(f'{name} = "Bogus"\n')
        with pytest.raises(SettingsError) as from_file:
            load_settings(cli={"config": config}, environ={})
        with pytest.raises(argparse.ArgumentTypeError) as from_flag:
            arg_type(name)("Bogus")
        assert str(from_env.value) == str(from_file.value) == expected
        assert str(from_flag.value) == expected.split(": ", 1)[1]  # argparse names the flag itself
        assert coerce(name, valid[-1]) == valid[-1]


def test_a_choice_is_matched_exactly() -> None:
    with pytest.raises(SettingsError, match="invalid choice 'AUTO'"):
        coerce("router", "AUTO")
    with pytest.raises(SettingsError, match="invalid choice '5'"):
        coerce("local_model", 5)  # a TOML number where a name goes


def test_arg_type_is_a_usage_error_without_the_setting_name() -> None:
    convert = arg_type("port")
    assert convert("9000") == 9000 and convert.__name__ == "port"
    with pytest.raises(argparse.ArgumentTypeError) as info:
        convert("70000")
    assert str(info.value) == "70000 is out of range; valid range is [0, 65535]"
