"""`ghost-agent eval transfer`: does a correction teach the daemon? (the correction-transfer suite, issue 13)

    ghost-agent eval transfer --url http://127.0.0.1:8000 [--families dates money ...] [--probes N]
        [--controls N] [--lesson-timeout S] [--timeout S] [--json] [--output PATH] [--list]

Prints a table — per family: whether the corrected reply followed the convention ("told"), how the lesson
wait ended, the probe pass rate before learning (fresh sessions) and after (the taught session), how many
probes were shown a lesson, and the controls (other families' probes) before -> after — then the totals.
`--json` prints the result document instead; it is always written to `--output` (default
`$GHOST_HOME/system/eval/transfer.json`). `--home` should be the daemon's home: the run reads its lesson
store and trajectories to see the lesson and what each turn was shown (without it, or when it is another
home, only `/v1/ghost/status` is watched). Exit 0 when the run finished (whatever the rates), 2 when it could
not be made (bad flags, a non-loopback url, an unreachable daemon, a refused key, an egress attempt).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import IO, Any

import orjson

from ghost_agent.atomic import atomic_write_bytes
from ghost_agent.cli.args import home_config_overrides, home_config_parent, positive_float, positive_int
from ghost_agent.logging import warnings_to

EXIT_OK, EXIT_USAGE = 0, 2


class TransferUsageError(Exception):
    """The run cannot be made: one line on stderr, exit 2."""


def add_command(commands: Any) -> argparse.ArgumentParser:
    """Add `transfer` to the `eval` subcommands."""
    from ghost_agent.eval.runners import DEFAULT_BASE_URL
    from ghost_agent.eval.suites.transfer import family_ids
    from ghost_agent.eval.transfer import DEFAULT_CONTROLS, DEFAULT_LESSON_TIMEOUT_S, DEFAULT_POLL_S

    parser: argparse.ArgumentParser = commands.add_parser(
        "transfer", parents=[home_config_parent("the daemon's GHOST_HOME (its lessons and trajectories are read)")],
        help="does it learn? teach each family's convention by one correction, probe before and after",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", "--base-url", dest="base_url", default=DEFAULT_BASE_URL,
                        help=f"the daemon, loopback only (default {DEFAULT_BASE_URL})")
    parser.add_argument("--api-key", default=None, help="the daemon's api key (default: the api_key setting)")
    parser.add_argument("--model", default=None, help="model name sent with each request (default: the daemon's)")
    parser.add_argument("--families", nargs="+", default=None, metavar="ID",
                        help=f"only these families (default: all of {', '.join(family_ids())})")
    parser.add_argument("--probes", type=positive_int, default=None, metavar="N",
                        help="probes per family (default: all of them, 4)")
    parser.add_argument("--controls", type=int, default=DEFAULT_CONTROLS, metavar="N",
                        help=f"control probes (other families) per family after learning (default {DEFAULT_CONTROLS})")
    parser.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                        help="seconds per request (default 300)")
    parser.add_argument("--lesson-timeout", type=positive_float, default=DEFAULT_LESSON_TIMEOUT_S, metavar="S",
                        help=f"seconds to wait for a correction's reflection (default {DEFAULT_LESSON_TIMEOUT_S:g})")
    parser.add_argument("--poll", type=positive_float, default=DEFAULT_POLL_S, metavar="S",
                        help=f"seconds between lesson checks (default {DEFAULT_POLL_S:g})")
    parser.add_argument("--output", type=Path, default=None, metavar="PATH",
                        help="where the result JSON goes (default: $GHOST_HOME/system/eval/transfer.json)")
    parser.add_argument("--json", action="store_true", help="print the result JSON instead of the table")
    parser.add_argument("--no-home", action="store_true",
                        help="do not read the daemon's home; watch /v1/ghost/status only")
    parser.add_argument("--list", action="store_true", help="list the families and their probes, then exit")
    parser.add_argument("--no-progress", action="store_true", help="no per-request lines on stderr")
    parser.set_defaults(func=cmd_transfer, parser=parser, eval_command="transfer")
    return parser


def _list(out: IO[str], ids: list[str] | None) -> None:
    from ghost_agent.eval.suites.transfer import families

    for family in families(ids):
        out.write(f"{family.id}: {family.convention}  [check {family.check}]\n")
        out.write(f"  teach:      {family.teach.prompt}\n  correction: {family.correction}\n")
        for probe in family.probes:
            out.write(f"  probe {probe.id}: {probe.prompt}\n")


def _run(args: argparse.Namespace, err: IO[str]) -> tuple[Any, Path]:
    from ghost_agent.eval.network_guard import NetworkEgressError
    from ghost_agent.eval.runners import RunnerError
    from ghost_agent.eval.suites.transfer import FAMILIES, families
    from ghost_agent.eval.transfer import HomeStore, TransferClient, run_transfer
    from ghost_agent.home import GhostHome
    from ghost_agent.settings import SettingsError, load_settings

    try:
        settings = load_settings(cli=home_config_overrides(args))
        chosen = families(args.families)
    except (SettingsError, ValueError) as exc:
        raise TransferUsageError(str(exc)) from exc
    if args.controls < 0:
        raise TransferUsageError(f"--controls must be 0 or more, got {args.controls}")
    output = args.output or GhostHome(settings.home).eval / "transfer.json"
    api_key = args.api_key if args.api_key is not None else settings.server.api_key
    try:
        client = TransferClient(args.base_url, api_key=api_key, model=args.model, timeout_s=args.timeout)
    except ValueError as exc:
        raise TransferUsageError(str(exc)) from exc
    store = None if args.no_home else HomeStore(settings.home)

    def progress(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    async def go() -> Any:
        try:
            return await run_transfer(client, chosen, pool=FAMILIES, store=store, probes_per_family=args.probes,
                                      controls_per_family=args.controls, lesson_timeout_s=args.lesson_timeout,
                                      poll_s=args.poll, progress=None if args.no_progress else progress)
        finally:
            await client.aclose()

    try:
        return asyncio.run(go()), output
    except RunnerError as exc:
        raise TransferUsageError(str(exc)) from exc
    except NetworkEgressError as exc:
        raise TransferUsageError(f"egress attempt refused, run aborted: {exc}") from exc


def cmd_transfer(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Run a parsed `eval transfer`; returns the exit code (a usage error: one line on stderr, 2)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        if args.list:
            try:
                _list(out, args.families)
            except ValueError as exc:
                raise TransferUsageError(str(exc)) from exc
            return EXIT_OK
        with warnings_to(err):
            result, output = _run(args, err)
        document = result.to_dict()
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(output, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        except OSError as exc:
            raise TransferUsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
        if args.json:
            out.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            out.write(result.render_table())
            out.write(f"result: {output}\n")
        return EXIT_OK
    except TransferUsageError as exc:
        err.write(f"eval transfer: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE


__all__ = ["EXIT_OK", "EXIT_USAGE", "add_command", "cmd_transfer"]
