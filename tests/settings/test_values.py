"""One value read and checked: the types and words accepted, choices (Literal) and ranges, and the messages."""

from __future__ import annotations

import pytest

from ghost_agent.settings import SettingsError, load_settings


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
