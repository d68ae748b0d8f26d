"""What the `prm` and `router` commands share: `train` and `inspect`, exit codes, errors, logging, settings.

Both are command groups over a learned linear model (`ghost-agent <kind> train | inspect | ...`):

- `train [--home] [--config] [--out] [--since] [--json]` fits from the home's trajectories (read-only: the
  store is never created) and writes the checkpoint; exit 0 fitted and saved, 3 bailed on the data floors,
  1 on an error (including a fit whose checkpoint could not be written). Unless logging is already
  configured, its log events go to the home's log file, never to stdout (which carries the report).
- `inspect CHECKPOINT [--json]`: schema, model id, weights ranked, training metadata.
- Bad input (an unusable checkpoint, bad JSON) is one line on stderr, `ghost-agent <kind> <command>: why`,
  and exit 2 — never a traceback. Usage errors are argparse's, also exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from ghost_agent.cli.args import cli_settings, home_config_parent
from ghost_agent.cli.trajectories import parse_when  # one parser for "7d / 2026-04-26 / ISO time" across CLIs
from ghost_agent.home import GhostHome
from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.linear import CheckpointError, LogisticModel
from ghost_agent.learned.trainer import LinearTrainer
from ghost_agent.logging import LogSink, configure_logging
from ghost_agent.trajectories.collector import TrajectoryCollector

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_BAIL = 3

TRAIN_EPILOG = """\
exit codes:
  0  fitted (checkpoint written to --out)
  1  error: the store could not be read, the fit failed, or the checkpoint could not be saved
  2  usage error
  3  bailed: too little or too lopsided data (floors not met); no checkpoint written, the old one is kept
"""

# What a subcommand runs (its `handler` default): (args, parser, out) → exit code.
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser, IO[str]], int]


class UserError(Exception):
    """Bad input from the command line: reported as one line on stderr, exit code 2."""


# ------------------------------------------------------------------------------------------ parsers


def add_command_group(sub: Any, name: str, help: str) -> tuple[argparse.ArgumentParser, Any]:
    """Register `name` on the main parser's subparsers action; returns it and its (required) subcommands.

    The chosen subcommand lands in `args.<name>_command`.
    """
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help)
    commands = parser.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND")
    commands.required = True
    return parser, commands


def settings_parent() -> argparse.ArgumentParser:
    """A parent parser with `--home` and `--config`, for the subcommands that read settings."""
    return home_config_parent()


def add_train_parser(
    commands: Any,
    func: Callable[..., int],
    *,
    parents: Sequence[argparse.ArgumentParser],
    help: str,
    out_help: str,
    trainer_class: Callable[..., LinearTrainer[Any]],
    default_checkpoint: Callable[[GhostHome], Path],
    options: Callable[[argparse.Namespace], dict[str, Any]] = lambda args: {},
) -> argparse.ArgumentParser:
    """The `train` subcommand (`--out`, `--since`, `--json`, the exit codes in its help): see `train_command`."""
    train: argparse.ArgumentParser = commands.add_parser(
        "train",
        parents=list(parents),
        help=help,
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("--out", type=Path, help=out_help)
    train.add_argument("--since", type=parse_when, help="only trajectories newer than DURATION (7d) or a date/ISO time")
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    handler = partial(
        train_command, trainer_class=trainer_class, default_checkpoint=default_checkpoint, options=options
    )
    train.set_defaults(func=func, parser=train, handler=handler)
    return train


def add_inspect_parser(
    commands: Any, func: Callable[..., int], *, help: str, checkpoint_help: str, model_class: type[BoundModel],
    meaning: str = "",
) -> None:
    """The `inspect CHECKPOINT [--json]` subcommand for checkpoints of `model_class`: see `inspect_command`."""
    inspect: argparse.ArgumentParser = commands.add_parser("inspect", help=help)
    inspect.add_argument("checkpoint", type=Path, help=checkpoint_help)
    inspect.add_argument("--json", action="store_true", help="print as JSON")
    handler = partial(inspect_command, model_class=model_class, meaning=meaning)
    inspect.set_defaults(func=func, parser=inspect, handler=handler)


# ---------------------------------------------------------------------------------------- running


def run_command(
    name: str, args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None, err: IO[str] | None
) -> int:
    """Run the parsed subcommand's `handler` (a set_defaults entry, a `Handler`) of group `name`.

    UserError or CheckpointError → one line on stderr, `ghost-agent <name> <command>: why`, exit 2.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    handler: Handler = args.handler
    try:
        return handler(args, parser, out)
    except (UserError, CheckpointError) as exc:
        err.write(f"ghost-agent {name} {getattr(args, f'{name}_command')}: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE


def run_standalone(
    add_subparser: Callable[[Any], Any], name: str, argv: Sequence[str], out: IO[str] | None, err: IO[str] | None
) -> int:
    """Run `ghost-agent <name> <argv>` outside the main CLI (tests, scripts); usage errors return 2, not exit."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args([name, *argv])
        code: int = args.func(args, args.parser, out, err)
        return code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


def print_json(out: IO[str], value: Any) -> None:
    """`value` as indented JSON and a newline."""
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


# ------------------------------------------------------------------------------------------- train


def train_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    out: IO[str],
    *,
    trainer_class: Callable[..., LinearTrainer[Any]],
    default_checkpoint: Callable[[GhostHome], Path],
    options: Callable[[argparse.Namespace], dict[str, Any]],
) -> int:
    """`train`: fit a `trainer_class` (plus `options(args)`) on the home's store, print the report.

    Returns EXIT_OK (fitted and saved), EXIT_BAIL (floors not met) or EXIT_ERROR (`report.error`).
    """
    home = GhostHome(cli_settings(args, parser).home)
    checkpoint = args.out if args.out is not None else default_checkpoint(home)
    store = TrajectoryCollector(home.trajectories, enabled=False)  # read-only: never creates the store
    trainer = trainer_class(store, checkpoint_path=checkpoint, since=args.since, **options(args))
    with home_logging(home):
        report = trainer.run()
    if args.json:
        print_json(out, report.to_dict())
    else:
        out.write(report.render() + "\n")
    if report.error is not None:
        return EXIT_ERROR
    return EXIT_OK if report.fit_succeeded else EXIT_BAIL


@contextmanager
def home_logging(home: GhostHome) -> Iterator[None]:
    """Inside: log events go to the home's log file only, unless the caller already configured logging.

    The fit/bail events belong in the home's log (`ghost-agent logs --event prm_train_fit`), not on stdout,
    where structlog's unconfigured default would print them into the report. A caller that configured
    logging itself (the daemon, a test) keeps its configuration; otherwise structlog is reset to its
    defaults afterwards, as the process had it.
    """
    if structlog.is_configured():
        yield
        return
    sink = log_to_home(home)
    try:
        yield
    finally:
        sink.close()
        structlog.reset_defaults()


def log_to_home(home: GhostHome) -> LogSink:
    """Route log events to the home's log file only; nowhere at all if that file cannot be opened."""
    try:
        return configure_logging(home.log_file, console=None)
    except OSError:
        return configure_logging(None, console=None)


# ----------------------------------------------------------------------------------------- inspect


def inspect_command(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str], *, model_class: type[BoundModel],
    meaning: str = "",
) -> int:
    """`inspect`: the checkpoint's `describe` figures as JSON (`--json`) or text (CheckpointError if unusable)."""
    figures = describe(model_class.load(args.checkpoint))
    if args.json:
        print_json(out, figures)
    else:
        out.write(format_description(figures, args.checkpoint, meaning))
    return EXIT_OK


def describe(model: LogisticModel) -> dict[str, Any]:
    """What `inspect --json` prints: schema, id, features, ranked weights, bias, training metadata."""
    return {
        "schema": model.schema,
        "model_id": model.model_id,
        "n_features": model.n_features,
        "feature_names": list(model.feature_names),
        "weights_ranked": [
            {"name": name, "raw": raw, "standardized": std} for name, raw, std in model.ranked_weights()
        ],
        "bias": model.bias,
        "training": model.metadata,
    }


def format_description(figures: dict[str, Any], path: Path, meaning: str = "") -> str:
    """`describe`'s figures as readable text; `meaning` says what a positive weight does, if given."""
    lines = [
        f"checkpoint: {path}",
        f"schema: {figures['schema']}",
        f"model_id: {figures['model_id']}",
        f"features: {figures['n_features']}",
        f"bias: {figures['bias']:+.6f}",
        f"weights (strongest first{'; ' + meaning if meaning else ''}):",
        f"  {'feature':<36} {'raw':>12} {'standardized':>13}",
    ]
    lines.extend(
        f"  {w['name']:<36} {w['raw']:>+12.6f} {w['standardized']:>+13.6f}" for w in figures["weights_ranked"]
    )
    training = figures["training"]
    lines.append("training:" + ("" if training else " (no metadata)"))
    for key, value in training.items():
        shown = orjson.dumps(value).decode() if isinstance(value, (dict, list)) else str(value)
        lines.append(f"  {key}: {shown}")
    return "\n".join(lines) + "\n"


__all__ = [
    "EXIT_BAIL",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "TRAIN_EPILOG",
    "UserError",
    "add_command_group",
    "add_inspect_parser",
    "add_train_parser",
    "cli_settings",
    "describe",
    "format_description",
    "home_logging",
    "inspect_command",
    "log_to_home",
    "print_json",
    "run_command",
    "run_standalone",
    "settings_parent",
    "train_command",
]
