"""Argument types and the `--home`/`--config` parent parser the command-line tools share."""

from __future__ import annotations

import argparse
import math

from ghost_agent.settings import FIELDS, Settings, SettingsError, arg_type, load_settings


def positive_float(raw: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"invalid value {raw!r}: use a positive number")
    return value


def positive_int(raw: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid value {raw!r}: use a positive integer")
    return value


def home_config_parent(home_help: str = "GHOST_HOME to use") -> argparse.ArgumentParser:
    """A parent parser with `--home` and `--config`, for subcommands that read settings."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", dest="home", type=arg_type("home"), default=None, help=home_help)
    common.add_argument("--config", dest="config", type=arg_type("config"), default=None, help="config file")
    return common


def home_config_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The `--home`/`--config` values a subcommand was given (for `load_settings(cli=...)`)."""
    return {k: getattr(args, k) for k in ("home", "config") if getattr(args, k, None) is not None}


def cli_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Settings:
    """Settings from `--home`/`--config` (env and defaults otherwise); a bad value is a usage error."""
    try:
        return load_settings(cli=home_config_overrides(args))
    except SettingsError as exc:
        parser.error(str(exc))


def settings_from_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Settings:
    """Settings from every settings flag given (`serve`'s flags), env and config; a bad value is a usage error."""
    given = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    try:
        return load_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))


__all__ = ["cli_settings", "home_config_overrides", "home_config_parent", "positive_float", "positive_int",
           "settings_from_flags"]
