"""Settings in sections, resolved as: defaults < config file < GHOST_* env < CLI flags.

`Settings` holds GHOST_HOME, the config file read, and one section per table of ghost.toml (server, backend,
storage, logging, agent, sandbox, learning, watchdog); a component takes its own section
(`make_backend(settings.backend)`). Each config key is also `GHOST_<KEY>` and `--<key>`:

    sections.py  the section dataclasses: each field's type (choices as `Literal`) and default
    table.py     every key in flag order: its [table], where it lives, its help and range (`FIELDS`)
    values.py    one value read and checked: `coerce`, `check_value`, `arg_type`, `SettingsError`
    model.py     `Settings`: the sections together, the cross-field rules (`validate`), `public_dict`
    load.py      `resolve_settings`/`load_settings`: the layers merged, each value's source remembered
    render.py    `render_config_toml`: config/ghost.toml, or the settings in force with their sources

Values are converted and checked by pydantic (a `TypeAdapter` per declared type, `Literal` choices,
`Field(ge=, le=)` ranges) instead of a home-made converter. Not pydantic-settings: its sources merge into one
model and forget which layer set a value, and `ghost-agent config` prints exactly that; the four layers stay
plain dicts merged here, so provenance is a by-product. The error messages and the inputs accepted are kept as
they were (values.py pins pydantic's few extra leniencies).
"""

from __future__ import annotations

from ghost_agent.settings.load import (
    HOME_CONFIG_NAME,
    home_config_path,
    load_settings,
    read_config_file,
    read_env,
    resolve_settings,
)
from ghost_agent.settings.model import WINDOWED_PHASES, Settings
from ghost_agent.settings.render import render_config_toml
from ghost_agent.settings.sections import (
    LOCAL_MODELS,
    AgentSettings,
    BackendSettings,
    LearningSettings,
    LoggingSettings,
    SandboxSettings,
    ServerSettings,
    StorageSettings,
    WatchdogSettings,
)
from ghost_agent.settings.table import FIELDS, SECRET_FIELDS, URL_FIELDS, Spec, env_name, flag_name
from ghost_agent.settings.values import SettingsError, arg_type, check_value, coerce, field_type

__all__ = [
    "FIELDS",
    "HOME_CONFIG_NAME",
    "LOCAL_MODELS",
    "SECRET_FIELDS",
    "URL_FIELDS",
    "WINDOWED_PHASES",
    "AgentSettings",
    "BackendSettings",
    "LearningSettings",
    "LoggingSettings",
    "SandboxSettings",
    "ServerSettings",
    "Settings",
    "SettingsError",
    "Spec",
    "StorageSettings",
    "WatchdogSettings",
    "arg_type",
    "check_value",
    "coerce",
    "env_name",
    "field_type",
    "flag_name",
    "home_config_path",
    "load_settings",
    "read_config_file",
    "read_env",
    "render_config_toml",
    "resolve_settings",
]
