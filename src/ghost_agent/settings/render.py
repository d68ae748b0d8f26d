"""The config file writer: a ghost.toml documenting every setting, with the defaults or the values in force.

`config/ghost.toml` in the repository is `render_config_toml()` (a test keeps it current); `ghost-agent config`
prints `render_config_toml(*resolve_settings(...))`. One [table] per section, keys in table order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ghost_agent.privacy.redact import redact_url
from ghost_agent.settings.load import home_config_path
from ghost_agent.settings.model import Settings
from ghost_agent.settings.table import FIELDS, SECRET_FIELDS, URL_FIELDS, Spec
from ghost_agent.settings.values import range_text


def render_config_toml(settings: Settings | None = None, sources: Mapping[str, str] | None = None) -> str:
    """A ghost.toml documenting every setting with its help, env var, flag and range.

    Without arguments: the defaults, every value commented out (what `config/ghost.toml` holds). With the
    resolved `settings` and their `sources` (`resolve_settings`): the same layout, where each value that
    does not come from the defaults is set (uncommented) and says where it came from; secrets are not shown.
    """
    defaults = Settings()
    if settings is None:
        lines = [
            "# Ghost Agent configuration. Every setting below shows its default, commented out.",
            "# Read from $GHOST_HOME/config.toml when it exists (or the file given by --config / GHOST_CONFIG).",
            "# Precedence: defaults < config file < GHOST_* environment < CLI flags.",
            "# Regenerate with: ghost-agent config --defaults > config/ghost.toml",
        ]
    else:
        read = f"config file read: {settings.config}" if settings.config else (
            f"no config file read (none given, no {home_config_path(settings.home)})"
        )
        lines = [
            "# Ghost Agent settings in force. A value set below comes from the config file, the environment or a",
            "# flag, and names its source; the commented-out values are the defaults, in force where not set.",
            f"# {read}",
            "# Precedence: defaults < config file < GHOST_* environment < CLI flags.",
        ]
    tables: dict[str, list[Spec]] = {}
    for spec in FIELDS.values():
        if spec.name != "config":
            tables.setdefault(spec.table, []).append(spec)
    for table, specs in tables.items():
        lines += ["", f"[{table}]"]
        for n, spec in enumerate(specs):
            name = spec.name
            if n:
                lines.append("")
            lines.append(f"# {spec.help}")
            extra = [f"env {spec.env}", f"flag {spec.flag}"]
            if spec.choices:
                extra.append("one of: " + ", ".join(spec.choices))
            if spec.lo is not None or spec.hi is not None:
                extra.append("range " + range_text(spec))
            lines.append("# (" + "; ".join(extra) + ")")
            source = (sources or {}).get(name, "default")
            if settings is None or source == "default":
                lines.append(f"# {name} = {_toml_value(defaults.get(name), name)}")
                continue
            value = settings.get(name)
            if name in SECRET_FIELDS:
                lines.append(f'# {name} = "***"  # set by {source}; the value is not shown')
            elif name in URL_FIELDS and redact_url(str(value)) != value:
                shown = _toml_literal(redact_url(str(value)))
                lines.append(f"# {name} = {shown}  # set by {source}; its credentials are not shown")
            else:
                lines.append(f"{name} = {_toml_literal(value)}  # from {source}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any, name: str) -> str:
    if value is None:
        return '""  # unset'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if name in ("home", "model_cache_dir"):
        return '"' + str(value).replace(str(Path.home()), "~") + '"'
    return '"' + str(value) + '"'


def _toml_literal(value: Any) -> str:
    """A value as TOML that reads back to the same setting (strings escaped; unset -> the empty string)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)
