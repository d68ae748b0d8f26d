"""Settings in sections: where each key lives, the cross-field rules, the public view, building from keys."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from ghost_agent.settings import (
    FIELDS,
    SandboxSettings,
    ServerSettings,
    Settings,
    SettingsError,
    WatchdogSettings,
)
from ghost_agent.settings.sections import SECTIONS


def test_every_key_lives_in_exactly_one_place() -> None:
    places = [(spec.section, spec.attr) for spec in FIELDS.values()]
    assert len(places) == len(set(places)) == len(FIELDS)
    section_fields = {(name, f.name) for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)}
    assert {p for p in places if p[0] is not None} == section_fields
    assert {spec.name for spec in FIELDS.values() if spec.section is None} == {"home", "config"}
    assert [f.name for f in dataclasses.fields(Settings)] == [*SECTIONS, "home", "config"]


def test_a_section_field_is_its_key_without_the_sections_prefix() -> None:
    renamed = {spec.name: f"{spec.section}.{spec.attr}" for spec in FIELDS.values()
               if spec.section is not None and spec.attr != spec.name}
    assert renamed == {
        "log_level": "logging.level", "log_format": "logging.format", "log_max_bytes": "logging.max_bytes",
        "log_backups": "logging.backups", "agent_strategy": "agent.strategy", "agent_max_tokens": "agent.max_tokens",
        "sandbox": "sandbox.mode", "sandbox_timeout_s": "sandbox.timeout_s", "sandbox_memory_mb": "sandbox.memory_mb",
        "sandbox_max_procs": "sandbox.max_procs", "sandbox_concurrency": "sandbox.concurrency",
        "sandbox_max_output_kb": "sandbox.max_output_kb", "watchdog": "watchdog.enabled",
        "watchdog_tick_s": "watchdog.tick_s",
    }


def test_choices_are_typed_as_literals() -> None:
    hints = typing.get_type_hints(SandboxSettings)
    assert hints["mode"] == typing.Literal["auto", "bwrap", "unisolated", "subprocess"]
    assert FIELDS["sandbox"].choices == ("auto", "bwrap", "unisolated", "subprocess")


def test_from_keys_places_each_value_and_get_reads_it_back(tmp_path: Path) -> None:
    s = Settings.from_keys(home=str(tmp_path), port=9000, sandbox="subprocess", watchdog=False, log_level="debug",
                           prm_model="~/p.json")
    assert (s.home, s.server.port, s.sandbox.mode, s.watchdog.enabled) == (tmp_path, 9000, "subprocess", False)
    assert s.logging.level == "debug" and s.learning.prm_model == Path("~/p.json").expanduser()
    assert [s.get(k) for k in ("port", "sandbox", "watchdog", "log_level")] == [9000, "subprocess", False, "debug"]
    assert s.server == ServerSettings(port=9000) and s.watchdog == WatchdogSettings(enabled=False)
    assert Settings.from_keys() == Settings()
    with pytest.raises(TypeError, match="'bogus'"):
        Settings.from_keys(bogus=1)


def test_validate_checks_choices_and_ranges_of_values_given_in_code() -> None:
    with pytest.raises(SettingsError, match="sandbox: invalid choice 'docker'; valid choices are auto, bwrap"):
        Settings.from_keys(sandbox="docker").validate()
    with pytest.raises(SettingsError, match=r"^max_n: 17 is out of range; valid range is \[1, 16\]$"):
        Settings(server=ServerSettings(max_n=17)).validate()
    with pytest.raises(SettingsError, match="rem_dream_idle_max_s"):
        Settings.from_keys(rem_dream_idle_s=4000).validate()


def test_non_loopback_bind_needs_a_key() -> None:
    with pytest.raises(SettingsError, match="--insecure-no-auth"):
        Settings.from_keys(host="0.0.0.0").validate()
    Settings.from_keys(host="0.0.0.0", api_key="k" * 16).validate()
    Settings.from_keys(host="0.0.0.0", insecure_no_auth=True).validate()
    Settings.from_keys(host="127.0.0.5").validate()


def test_a_short_key_is_refused_only_where_the_network_can_guess_it() -> None:
    with pytest.raises(SettingsError, match="1-character api key: use at least 16 characters"):
        Settings.from_keys(host="0.0.0.0", api_key="k").validate()
    with pytest.raises(SettingsError, match="15-character"):
        Settings.from_keys(host="192.168.1.5", api_key="k" * 15).validate()
    Settings.from_keys(host="127.0.0.1", api_key="k").validate()  # loopback: only local programs can try
    Settings.from_keys(host="0.0.0.0", api_key="k", insecure_no_auth=True).validate()  # the operator's call


def test_hostnames_that_look_loopback_are_not() -> None:
    assert ServerSettings(host="::1").is_loopback and ServerSettings(host="localhost").is_loopback
    assert not ServerSettings(host="127.example.com").is_loopback
    with pytest.raises(SettingsError):
        Settings.from_keys(host="127.example.com").validate()


def test_public_dict_masks_secrets() -> None:
    d = Settings.from_keys(api_key="secret", upstream_api_key="other").public_dict()
    assert d["api_key"] == "***" and d["upstream_api_key"] == "***"
    assert "secret" not in str(d)


def test_public_dict_is_flat_by_config_key_in_table_order() -> None:
    d = Settings.from_keys(upstream_url="http://user:pw@host/v1", sandbox="bwrap").public_dict()
    assert list(d) == list(FIELDS)
    assert d["sandbox"] == "bwrap" and d["upstream_url"] == "http://<REDACTED_CREDENTIALS>@host/v1"
    assert isinstance(d["home"], str) and d["config"] is None
