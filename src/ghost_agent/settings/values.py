"""One setting's value from what a user wrote (an env/flag string or a TOML scalar), converted and checked.

The type comes from the key's declared type (`Spec.base`), the choices and range from the key table; a bad
value is a SettingsError that names the setting and the valid choices or range.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ghost_agent.settings.table import FIELDS, Spec


class SettingsError(ValueError):
    """A setting has an invalid value; the message names the setting and the valid range."""


def coerce(name: str, raw: Any) -> Any:
    """Turn a raw value (str from env/CLI, or a TOML scalar) into the field's type, validating it."""
    spec = FIELDS.get(name)
    if spec is None:
        raise SettingsError(f"unknown setting {name!r}")
    typ = spec.base
    value: Any
    try:
        if raw is None or (raw == "" and spec.optional):
            value = None
        elif typ is bool:
            if isinstance(raw, bool):
                value = raw
            elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                value = True
            elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                value = False
            else:
                raise ValueError("expected true/false")
        elif typ is int:
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError("expected an integer")
            value = int(raw)
        elif typ is float:
            if isinstance(raw, bool):
                raise ValueError("expected a number")
            value = float(raw)
        elif typ is Path:
            value = Path(str(raw)).expanduser()
        else:
            value = str(raw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"{name}: invalid value {raw!r} ({exc})") from None
    check_value(name, value)
    return value


def check_value(name: str, value: Any) -> None:
    """Raise SettingsError if `value` is outside the field's choices or range."""
    spec = FIELDS[name]
    if value is None:
        return
    if spec.choices and value not in spec.choices:
        raise SettingsError(f"{name}: invalid choice {value!r}; valid choices are {', '.join(spec.choices)}")
    lo, hi = spec.lo, spec.hi
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value != value:  # NaN
            raise SettingsError(f"{name}: NaN is not a valid value")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise SettingsError(f"{name}: {value} is out of range; valid range is {range_text(spec)}")


def range_text(spec: Spec) -> str:
    """A key's range as the docs and messages write it: [lo, hi], >= lo or <= hi."""
    if spec.lo is not None and spec.hi is not None:
        return f"[{spec.lo}, {spec.hi}]"
    if spec.lo is not None:
        return f">= {spec.lo}"
    return f"<= {spec.hi}"


def field_type(name: str) -> type:
    """The scalar type (int, float, bool, str, Path) of a setting."""
    return FIELDS[name].base


def arg_type(name: str) -> Callable[[str], Any]:
    """An argparse `type=` for a setting: coerces and validates, failing as a usage error that names the range."""

    def convert(raw: str) -> Any:
        try:
            return coerce(name, raw)
        except SettingsError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    convert.__name__ = name  # argparse names the type in its messages
    return convert
