"""`Settings`: GHOST_HOME, the config file read, and one section per table of ghost.toml.

Components take the section they need (`make_backend(settings.backend)`); the rules that span sections (the
bind host needs an api key, an idle window's end after its start) are checked here, in `validate`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.privacy.redact import redact_url
from ghost_agent.settings.sections import (
    SECTIONS,
    AgentSettings,
    BackendSettings,
    LearningSettings,
    LoggingSettings,
    SandboxSettings,
    ServerSettings,
    StorageSettings,
    WatchdogSettings,
    default_home,
)
from ghost_agent.settings.table import FIELDS, SECRET_FIELDS, URL_FIELDS
from ghost_agent.settings.values import SettingsError, check_value

WINDOWED_PHASES = ("rem_dream", "reflection", "skills_auto", "retrain", "selfhood")  # idle windows with an end
# A browser origin: scheme://host[:port], nothing after it (an IPv6 host in brackets).
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://(\[[0-9a-f:.]+\]|[^/\s:?#\[\]@]+)(:\d{1,5})?", re.IGNORECASE)

# The shortest api key accepted when the daemon is reachable from other machines.
MIN_EXPOSED_KEY_CHARS = 16


@dataclass
class Settings:
    """Every runtime setting of the daemon, in sections; `table.FIELDS` maps each config key to its place."""

    server: ServerSettings = field(default_factory=ServerSettings)
    backend: BackendSettings = field(default_factory=BackendSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    learning: LearningSettings = field(default_factory=LearningSettings)
    watchdog: WatchdogSettings = field(default_factory=WatchdogSettings)
    home: Path = field(default_factory=default_home)
    config: Path | None = None  # the config file read (None: none)

    def __post_init__(self) -> None:
        # Programmatic callers may pass plain strings for paths.
        if isinstance(self.home, str):
            self.home = Path(self.home).expanduser()
        if isinstance(self.config, str):
            self.config = Path(self.config).expanduser()

    @classmethod
    def from_keys(cls, **values: Any) -> Settings:
        """Settings with the given values by config key (`port=9000, sandbox="subprocess"`), the rest defaults.
        Values are taken as given (typed); `validate()` checks them."""
        sections: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for name, value in values.items():
            spec = FIELDS.get(name)
            if spec is None:
                raise TypeError(f"Settings.from_keys() got an unexpected keyword argument {name!r}")
            if spec.section is None:
                top[name] = value
            else:
                sections.setdefault(spec.section, {})[spec.attr] = value
        return cls(**{name: SECTIONS[name](**kw) for name, kw in sections.items()}, **top)

    def get(self, name: str) -> Any:
        """The value of the setting with config key `name` (KeyError: no such setting)."""
        spec = FIELDS[name]
        holder = self if spec.section is None else getattr(self, spec.section)
        return getattr(holder, spec.attr)

    def validate(self) -> Settings:
        """Check every value's choices and range, then the cross-field rules; returns self so calls chain."""
        for name in FIELDS:
            check_value(name, self.get(name))
        server, api_key = self.server, self.server.api_key
        if api_key is not None and (not api_key.strip() or api_key != api_key.strip()):
            # Clients' tokens are compared stripped: a key that is blank or padded could never be sent.
            raise SettingsError(
                "api_key is blank or starts/ends with whitespace: no client could send it; "
                "set a real key (e.g. `openssl rand -hex 32`) or leave it unset"
            )
        for phase in WINDOWED_PHASES:
            lo, hi = self.get(f"{phase}_idle_s"), self.get(f"{phase}_idle_max_s")
            if hi <= lo:
                raise SettingsError(f"{phase}_idle_max_s ({hi}) must be greater than {phase}_idle_s ({lo})")
        if not server.is_loopback and not api_key and not server.insecure_no_auth:
            raise SettingsError(
                f"refusing to bind non-loopback host {server.host!r} without an api key: "
                "set --api-key (or GHOST_API_KEY), or pass --insecure-no-auth"
            )
        if not server.is_loopback and api_key and len(api_key) < MIN_EXPOSED_KEY_CHARS and not server.insecure_no_auth:
            # Reachable from the network, a short key is guessed: every guess is one cheap HTTP request.
            raise SettingsError(
                f"refusing to bind non-loopback host {server.host!r} with a {len(api_key)}-character api key: "
                f"use at least {MIN_EXPOSED_KEY_CHARS} characters (e.g. `openssl rand -hex 32`), "
                "or pass --insecure-no-auth"
            )
        for origin in server.cors_origins:
            if origin != "*" and not _ORIGIN.fullmatch(origin):
                raise SettingsError(
                    f"cors_allow_origins: {origin!r} is not an origin; write scheme://host[:port] (no path), "
                    "comma-separated, or *"
                )
        url = self.backend.upstream_url
        if url is not None and not url.startswith(("http://", "https://")):
            raise SettingsError(f"upstream_url must start with http:// or https://, got {redact_url(url)!r}")
        return self

    def public_dict(self) -> dict[str, Any]:
        """Settings by config key as plain JSON-able values, secrets masked and URLs without their userinfo (for
        logs and /health)."""
        out: dict[str, Any] = {}
        for name in FIELDS:
            value = self.get(name)
            if name in SECRET_FIELDS and value:
                value = "***"
            elif name in URL_FIELDS and isinstance(value, str):
                value = redact_url(value)
            elif isinstance(value, Path):
                value = str(value)
            out[name] = value
        return out
