"""Resolving the settings: defaults < config file < GHOST_* env < CLI flags, remembering each value's source.

Every layer is a flat {config key: value} dict, each value read by `values.coerce`; the merge records which
layer set each key ("default", "config <path>", "env GHOST_X", "flag --x"), which `ghost-agent config` prints.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ghost_agent.settings.model import Settings
from ghost_agent.settings.sections import default_home
from ghost_agent.settings.table import FIELDS, env_name, flag_name
from ghost_agent.settings.values import SettingsError, coerce

HOME_CONFIG_NAME = "config.toml"


def home_config_path(home: Path) -> Path:
    """The config file read by default: `config.toml` in GHOST_HOME (used only when it exists)."""
    return home / HOME_CONFIG_NAME


def read_config_file(path: Path) -> dict[str, Any]:
    """Read a ghost.toml; keys may sit at top level or inside [section] tables. Unknown keys are errors."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"config file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    for key, value in data.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for name, raw in items:
            name = name.replace("-", "_")
            if name not in FIELDS or name == "config":
                raise SettingsError(f"config file {path}: unknown setting {name!r}")
            flat[name] = coerce(name, raw)
    return flat


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings given as GHOST_* environment variables (empty strings are ignored)."""
    out: dict[str, Any] = {}
    for name in FIELDS:
        raw = environ.get(env_name(name))
        if raw is not None and raw != "":
            out[name] = coerce(name, raw)
    return out


def load_settings(
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Resolve defaults < config file < env < CLI into a validated Settings (see `resolve_settings`)."""
    return resolve_settings(cli, environ, config_path)[0]


def resolve_settings(
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> tuple[Settings, dict[str, str]]:
    """Resolve defaults < config file < env < CLI; also return where each value came from.

    The config file is `--config` (CLI), else `config_path`, else `GHOST_CONFIG`, and then it must exist;
    without any of them it is `$GHOST_HOME/config.toml` (GHOST_HOME from --home / GHOST_HOME / the default)
    when that file exists, else none. That implicit file cannot set `home`: it is found through it.
    Sources are "default", "config <path>", "env GHOST_X" or "flag --x", by config key.
    """
    environ = os.environ if environ is None else environ
    cli_values = {k: coerce(k, v) for k, v in (cli or {}).items() if v is not None}
    env_values = read_env(environ)
    explicit = cli_values.get("config") or config_path or env_values.get("config")
    path: Path | None
    if explicit is not None:
        path = Path(explicit).expanduser()
    else:
        home = cli_values.get("home") or env_values.get("home") or default_home()
        path = home_config_path(Path(home))
        try:
            if not path.is_file():
                path = None
        except OSError as exc:
            raise SettingsError(f"config file {path} cannot be read: {exc}") from None
    file_values: dict[str, Any] = {}
    if path is not None:
        file_values = read_config_file(path)
        if explicit is None and "home" in file_values:
            raise SettingsError(
                f"config file {path}: `home` cannot be set in the home's own config file; "
                "use --home or GHOST_HOME (or pass this file with --config)"
            )
    sources = {name: "default" for name in FIELDS}
    merged: dict[str, Any] = {}
    layers: list[tuple[dict[str, Any], Callable[[str], str]]] = [
        (file_values, lambda _name: f"config {path}"),
        (env_values, lambda name: f"env {env_name(name)}"),
        (cli_values, lambda name: f"flag {flag_name(name)}"),
    ]
    for values, label in layers:
        for name, value in values.items():
            merged[name] = value
            sources[name] = label(name)
    merged["config"] = path
    if explicit is None and path is not None:
        sources["config"] = "found in the home"
    return Settings.from_keys(**merged).validate(), sources
