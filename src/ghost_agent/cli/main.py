"""`ghost-agent` command line: serve | logs | doctor | trajectories | lessons | skills | selfplay | config.

`serve` flags are generated from the Settings fields, so every setting has a flag, an env var and a config
key by construction. Invalid values are usage errors (exit 2) that name the valid range.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ghost_agent import __version__, _env  # noqa: F401 - _env applies the telemetry opt-outs at import
from ghost_agent.cli.args import settings_from_flags
from ghost_agent.settings import FIELDS, SettingsError, arg_type, env_name, field_type

# Flags whose names differ from their field.
_FLAG_NAMES = {"home": "--home", "config": "--config"}




def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per Settings field (booleans get --x/--no-x); all default to None = 'not given'."""
    for f in FIELDS.values():
        flag = _FLAG_NAMES.get(f.name, "--" + f.name.replace("_", "-"))
        help_text = f"{f.help} [env {env_name(f.name)}]"
        if field_type(f.name) is bool:
            # On-by-default switches get --x/--no-x; off-by-default ones are a plain --x.
            action: Any = argparse.BooleanOptionalAction if f.default else "store_true"
            parser.add_argument(flag, dest=f.name, action=action, default=None, help=help_text)
            continue
        parser.add_argument(
            flag,
            dest=f.name,
            type=arg_type(f.name),
            default=None,
            metavar=f.name.upper() if not f.choices else "{" + ",".join(f.choices) + "}",
            help=help_text,
        )


def build_parser() -> argparse.ArgumentParser:
    """The full `ghost-agent` parser."""
    parser = argparse.ArgumentParser(prog="ghost-agent", description="Ghost Agent: a local, private LLM agent daemon.")
    parser.add_argument("--version", action="version", version=f"ghost-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    serve = sub.add_parser("serve", help="run the daemon (OpenAI-compatible API)")
    add_settings_flags(serve)
    serve.set_defaults(func=cmd_serve, parser=serve)

    logs = sub.add_parser("logs", help="pretty-print (and follow) the structured log")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    logs.add_argument("--event", action="append", help="only this event name (repeatable)")
    logs.add_argument("--since", help="only events newer than DURATION (e.g. 30s, 15m, 2h, 1d)")
    logs.add_argument("--json", action="store_true", help="print raw JSON lines")
    logs.add_argument("--home", dest="home", type=arg_type("home"), default=None, help="GHOST_HOME to read")
    logs.add_argument("--config", dest="config", type=arg_type("config"), default=None)
    logs.set_defaults(func=cmd_logs, parser=logs)

    doctor = sub.add_parser("doctor", help="check the installation; each line OK/FAIL with the fix")
    add_settings_flags(doctor)
    doctor.add_argument("--full-hash", action="store_true", help="re-hash the model file (slow)")
    doctor.set_defaults(func=cmd_doctor, parser=doctor)

    from ghost_agent.cli.trajectories import add_subparser as add_trajectories

    add_trajectories(sub)

    from ghost_agent.cli.lessons import add_subparser as add_lessons

    add_lessons(sub)

    from ghost_agent.cli.skills import add_subparser as add_skills

    add_skills(sub)

    from ghost_agent.cli.prm import add_subparser as add_prm

    add_prm(sub)

    from ghost_agent.cli.router import add_subparser as add_router

    add_router(sub)

    from ghost_agent.cli.sandbox import add_subparser as add_sandbox

    add_sandbox(sub)

    from ghost_agent.cli.eval import add_subparser as add_eval

    add_eval(sub)

    from ghost_agent.cli.status import add_subparser as add_status

    add_status(sub)

    from ghost_agent.cli.selfplay import add_subparser as add_selfplay

    add_selfplay(sub, add_settings_flags)

    config = sub.add_parser(
        "config",
        help="print the settings in force (ghost.toml format): the values serve would use, with their sources",
        description="Print the settings `serve` would use with the same flags and environment, as a documented "
        "ghost.toml: values that differ from the defaults are set and name their source (config file, env, flag). "
        "The config file is --config / GHOST_CONFIG, else $GHOST_HOME/config.toml when it exists.",
    )
    config.add_argument(
        "--defaults", action="store_true", help="print every setting with its default instead (config/ghost.toml)"
    )
    add_settings_flags(config)
    config.set_defaults(func=cmd_config, parser=config)
    return parser


def cmd_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the daemon until SIGTERM/SIGINT."""
    settings = settings_from_flags(args, parser)
    from ghost_agent.server.runner import serve

    return serve(settings)


def cmd_logs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the log, filtered, optionally following it."""
    settings = settings_from_flags(args, parser)
    from ghost_agent.cli.logs import parse_duration, show_logs
    from ghost_agent.home import GhostHome

    try:
        since = parse_duration(args.since) if args.since else None
    except ValueError as exc:
        parser.error(str(exc))
    return show_logs(
        GhostHome(settings.home).log_file, follow=args.follow, events=args.event, since_s=since, raw=args.json
    )


def cmd_doctor(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check the installation."""
    settings = settings_from_flags(args, parser)
    from ghost_agent.cli.doctor import run_doctor

    return run_doctor(settings, full_hash=args.full_hash)


def cmd_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the settings in force (or, with --defaults, the defaults) as a documented ghost.toml."""
    from ghost_agent.settings import render_config_toml, resolve_settings

    if args.defaults:
        sys.stdout.write(render_config_toml())
        return 0
    given = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    try:
        settings, sources = resolve_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))
    sys.stdout.write(render_config_toml(settings, sources))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ghost-agent` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args, args.parser)
    return result
