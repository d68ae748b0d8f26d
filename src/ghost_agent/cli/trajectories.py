"""`ghost-agent trajectories ls | show | stats | export`: read the trajectory store of a GHOST_HOME.

Read-only: nothing here creates or modifies files. Corrections are overlaid exactly as the learning loops
see them. `add_subparser(sub)` registers the command on the main parser (`cli/main.py`'s `func`/`parser`
convention); `run_trajectories_cli(argv, out)` runs it standalone (tests, scripts).
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime, timedelta, timezone
from itertools import groupby
from typing import IO, Any

import orjson

from ghost_agent.cli.args import cli_settings, home_config_parent, positive_int
from ghost_agent.cli.logs import parse_duration
from ghost_agent.home import GhostHome
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.export import dpo_pairs, sft_records
from ghost_agent.trajectories.record import Outcome, Source, Trajectory, parse_ts

PREVIEW_CHARS = 60




def _day(raw: str) -> str:
    try:
        return date.fromisoformat(raw).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid day {raw!r}: use YYYY-MM-DD") from None


def parse_when(raw: str) -> datetime | str:
    """A duration back from now ('2h', '7d') or a date / ISO timestamp (passed to the collector as is)."""
    try:
        return datetime.now(timezone.utc) - timedelta(seconds=parse_duration(raw))
    except ValueError:
        pass
    try:
        datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid time {raw!r}: use a duration (30m, 2h, 7d) or a date/ISO time (2026-04-26, 2026-04-26T10:00)"
        ) from None
    return raw


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `trajectories` and its subcommands on the main parser's subparsers action."""
    common = home_config_parent("GHOST_HOME to read")

    parser: argparse.ArgumentParser = sub.add_parser(
        "trajectories", help="list, show, count and export recorded trajectories"
    )
    tsub = parser.add_subparsers(dest="traj_command", metavar="SUBCOMMAND")
    tsub.required = True
    sources = [s.value for s in Source]
    outcomes = [o.value for o in Outcome]

    ls = tsub.add_parser("ls", parents=[common], help="one line per trajectory (oldest first)")
    ls.add_argument("--day", type=_day, help="only this UTC day (YYYY-MM-DD)")
    ls.add_argument("--source", choices=sources)
    ls.add_argument("--outcome", choices=outcomes, help="after corrections are applied")
    ls.add_argument("--limit", type=positive_int, help="only the N most recent of the selection")
    ls.set_defaults(func=cmd_trajectories, parser=ls)

    show = tsub.add_parser("show", parents=[common], help="one trajectory as pretty JSON (corrections applied)")
    show.add_argument("id", help="trajectory id")
    show.set_defaults(func=cmd_trajectories, parser=show)

    stats = tsub.add_parser("stats", parents=[common], help="counts per day/source/outcome, corrections, bad lines")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    stats.set_defaults(func=cmd_trajectories, parser=stats)

    export = tsub.add_parser(
        "export", parents=[common],
        help="JSON lines to stdout (corrections applied): the records, or training data (--format sft|dpo)",
        description="--format raw (default): the trajectory records. sft: every PASSED turn as a chat-format "
        "record ({messages: [user, assistant]}). dpo: (rejected, chosen) pairs of one task (a self-play task, or "
        "the same request asked twice) as {prompt, chosen, rejected}, TRL's conversational preference format. "
        "Records on disk are already redacted, so no secret reaches an export.",
    )
    export.add_argument("--format", choices=("raw", "sft", "dpo"), default="raw", help="what to write")
    export.add_argument("--since", type=parse_when, help="DURATION back from now (7d) or a date/ISO time")
    export.add_argument(
        "--until", type=parse_when, help="DURATION back from now or a date/ISO time (a date is inclusive)"
    )
    export.add_argument("--source", choices=sources)
    export.add_argument("--outcome", choices=outcomes)
    export.set_defaults(func=cmd_trajectories, parser=export)
    return parser


def cmd_trajectories(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `trajectories` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    settings = cli_settings(args, parser)
    collector = TrajectoryCollector(GhostHome(settings.home).trajectories, enabled=False)
    command = args.traj_command
    if command == "ls":
        return _ls(collector, args, out)
    if command == "show":
        traj = collector.get(args.id)
        if traj is None:
            err.write(f"no trajectory with id {args.id!r} in {collector.root}\n")
            return 1
        out.write(orjson.dumps(traj.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    if command == "stats":
        figures = collector.stats()
        if args.json:
            out.write(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            out.write(format_stats(figures))
        return 0
    selection = collector.iter_trajectories(
        since=args.since, until=args.until, source=args.source, outcome=args.outcome
    )
    if args.format == "sft":
        for record in sft_records(selection):
            out.write(orjson.dumps(record).decode() + "\n")
    elif args.format == "dpo":
        for record in dpo_pairs(selection):
            out.write(orjson.dumps(record).decode() + "\n")
    else:
        for traj in selection:
            out.write(traj.to_json().decode() + "\n")
    return 0


def _ls(collector: TrajectoryCollector, args: argparse.Namespace, out: IO[str]) -> int:
    selection = collector.iter_trajectories(since=args.day, until=args.day, source=args.source, outcome=args.outcome)
    lines: Iterable[str] = in_time_order(selection)
    if args.limit:
        lines = deque(lines, maxlen=args.limit)  # memory bounded by the limit (and one day's lines)
    for line in lines:
        out.write(line + "\n")
    return 0


def in_time_order(trajectories: Iterable[Trajectory]) -> Iterator[str]:
    """`format_line` of each record, oldest first by its timestamp.

    The store yields days in order but, within a day, session file by session file, so one day's lines are
    gathered (formatted lines only, not records) and sorted by time; equal times keep the store's order.
    A record whose ts does not parse sorts first in its day.
    """
    for _day, group in groupby(trajectories, key=_day_of):
        keyed = [(_when(traj), n, format_line(traj)) for n, traj in enumerate(group)]
        keyed.sort(key=lambda item: (item[0], item[1]))
        for _, _, line in keyed:
            yield line


def _day_of(traj: Trajectory) -> str:
    try:
        return traj.day
    except ValueError:
        return ""


def _when(traj: Trajectory) -> datetime:
    try:
        return parse_ts(traj.ts)
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)


def format_line(traj: Trajectory) -> str:
    """`ts  id  source  outcome  steps  request-preview` on one line."""
    preview = " ".join(traj.user_request.split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[: PREVIEW_CHARS - 1] + "…"
    return f"{traj.ts}  {traj.id}  {traj.source:<16} {traj.outcome.value:<7} {len(traj.steps):>3}  {preview}"


def format_stats(figures: dict[str, Any]) -> str:
    """The `stats` figures as readable text."""
    lines = [f"trajectories: {figures['trajectories']}  ({figures['root']})"]
    for title in ("days", "sources", "outcomes"):
        counts = figures[title]
        lines.append(f"{title}:" + ("" if counts else " none"))
        lines.extend(f"  {key:<18} {value}" for key, value in counts.items())
    c = figures["corrections"]
    lines.append(
        f"corrections: {c['lines']} lines, {c['ids']} ids, {c['applied']} applied, {c['orphans']} orphans, "
        f"{c['malformed']} malformed lines skipped"
    )
    lines.append(f"corrupt lines skipped: {figures['corrupt_lines']}")
    return "\n".join(lines) + "\n"


def run_trajectories_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent trajectories <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args(["trajectories", *argv])
        return cmd_trajectories(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
