"""`ghost-agent router train | inspect | decide`: train the router, read a checkpoint, try a decision.

- `train [--home] [--config] [--out] [--since] [--json]` fits from the home's trajectories and writes the
  checkpoint (default `GhostHome.router_checkpoint`). Exit 0 fitted and saved, 3 bailed on the data floors,
  1 on an error (including a fit whose checkpoint could not be written). Unless logging is already
  configured, its log events go to the home's log file, never to stdout (which carries the report).
- `inspect CHECKPOINT [--json]`: schema, model id, weights ranked, training metadata. Exit 2 on a file that
  is not a usable router checkpoint (one line on stderr, like every unusable checkpoint here).
- `decide TEXT [--model PATH] [--messages N] [--band B] [--mode M]` prints the RouterDecision JSON. Without
  `--model`, the daemon's choice: the `router_model` setting, else the home's checkpoint if it exists.

`add_subparser(sub)` registers `router` on the main parser (cli.py's `func`/`parser` convention);
`run_router_cli(argv, out)` runs it standalone (tests, scripts).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from ghost_agent.distill.collector import TrajectoryCollector
from ghost_agent.home import GhostHome
from ghost_agent.linear import CheckpointError
from ghost_agent.logging import LogSink, configure_logging
from ghost_agent.router.dispatch import DEFAULT_BAND, MODES, Router, RouterRequest
from ghost_agent.router.model import RouterModel
from ghost_agent.router.trainer import RouterTrainer
from ghost_agent.settings import Settings, SettingsError, arg_type, load_settings
from ghost_agent.trajectories_cli import _when  # one parser for "7d / 2026-04-26 / ISO time" across CLIs

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


def _band(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 0.5:  # NaN fails too
        raise argparse.ArgumentTypeError(f"invalid band {raw!r}: use a number in [0, 0.5]")
    return value


def _messages(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid message count {raw!r}: use a non-negative integer")
    return value


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `router` and its subcommands on the main parser's subparsers action."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", dest="home", type=arg_type("home"), default=None, help="GHOST_HOME to use")
    common.add_argument("--config", dest="config", type=arg_type("config"), default=None, help="config file")

    parser: argparse.ArgumentParser = sub.add_parser("router", help="train, inspect and try the fast/agent router")
    rsub = parser.add_subparsers(dest="router_command", metavar="SUBCOMMAND")
    rsub.required = True

    train = rsub.add_parser(
        "train",
        parents=[common],
        help="fit the router on the home's trajectories and save a checkpoint",
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("--out", type=Path, help="checkpoint path (default: the home's router checkpoint)")
    train.add_argument("--since", type=_when, help="only trajectories newer than DURATION (7d) or a date/ISO time")
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    train.set_defaults(func=cmd_router, parser=train)

    inspect = rsub.add_parser("inspect", help="schema, model id, ranked weights and training metadata")
    inspect.add_argument("checkpoint", type=Path, help="router checkpoint (checkpoint.json)")
    inspect.add_argument("--json", action="store_true", help="print as JSON")
    inspect.set_defaults(func=cmd_router, parser=inspect)

    decide = rsub.add_parser(
        "decide",
        parents=[common],
        help="print the router's decision for a request text",
        description="Without --model: the router_model setting, else the home's checkpoint if present, else no "
        "model (every request goes to the agent).",
    )
    decide.add_argument("text", help="the user's message")
    decide.add_argument("--model", type=Path, help="router checkpoint (default: the daemon's)")
    decide.add_argument("--messages", type=_messages, default=1, help="messages in the conversation (default 1)")
    decide.add_argument("--band", type=_band, default=DEFAULT_BAND, help=f"uncertainty band (default {DEFAULT_BAND})")
    decide.add_argument("--mode", choices=MODES, default="auto", help="routing mode (default auto)")
    decide.set_defaults(func=cmd_router, parser=decide)
    return parser


def cmd_router(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `router` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        if args.router_command == "inspect":
            return _inspect(args, out)
        settings = _settings(args, parser)
        if args.router_command == "train":
            return _train(args, settings, out)
        return _decide(args, settings, out)
    except CheckpointError as exc:
        err.write(f"ghost-agent router {args.router_command}: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE


def _settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Settings:
    given = {k: getattr(args, k) for k in ("home", "config") if getattr(args, k, None) is not None}
    try:
        return load_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))
        raise  # pragma: no cover - parser.error exits


def _train(args: argparse.Namespace, settings: Settings, out: IO[str]) -> int:
    home = GhostHome(settings.home)
    target = args.out if args.out is not None else home.router_checkpoint
    collector = TrajectoryCollector(home.trajectories, enabled=False)  # read-only: never creates the store
    trainer = RouterTrainer(collector, checkpoint_path=target, since=args.since)
    # Fit/bail events belong in the home's log (`ghost-agent logs --event router_train_fit`), not on stdout,
    # where structlog's unconfigured default would print them into the report. A caller that configured
    # logging itself (the daemon, a test) keeps its configuration.
    sink = _log_to_home(home) if not structlog.is_configured() else None
    try:
        report = trainer.run()
    finally:
        if sink is not None:
            sink.close()
            structlog.reset_defaults()
    if args.json:
        out.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(report.render() + "\n")
    if report.error is not None:
        return EXIT_ERROR
    return EXIT_OK if report.fit_succeeded else EXIT_BAIL


def _log_to_home(home: GhostHome) -> LogSink:
    """Route log events to the home's log file only; nowhere at all if that file cannot be opened."""
    try:
        return configure_logging(home.log_file, console=None)
    except OSError:
        return configure_logging(None, console=None)


def _inspect(args: argparse.Namespace, out: IO[str]) -> int:
    figures = describe(RouterModel.load(args.checkpoint))
    if args.json:
        out.write(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(format_description(figures, args.checkpoint))
    return EXIT_OK


def describe(model: RouterModel) -> dict[str, Any]:
    """What `router inspect --json` prints (the same shape as `prm inspect --json`)."""
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


def format_description(figures: dict[str, Any], path: Path) -> str:
    """`describe`'s figures as readable text."""
    lines = [
        f"checkpoint: {path}",
        f"schema: {figures['schema']}",
        f"model_id: {figures['model_id']}",
        f"features: {figures['n_features']}",
        f"bias: {figures['bias']:+.6f}",
        "weights (strongest first; a positive weight pushes toward the full agent):",
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


def _decide(args: argparse.Namespace, settings: Settings, out: IO[str]) -> int:
    path: Path | None = args.model if args.model is not None else settings.router_model
    if path is None:
        default = GhostHome(settings.home).router_checkpoint
        path = default if default.exists() else None
    # An explicitly named or configured checkpoint that cannot be used is an error here (CheckpointError →
    # exit 2), not the daemon's silent no-model: an operator asking wants to hear it.
    model = RouterModel.load(path) if path is not None else None
    decision = Router(model, band=args.band, mode=args.mode).dispatch(RouterRequest(args.text, args.messages))
    out.write(orjson.dumps(decision.to_dict()).decode() + "\n")
    return EXIT_OK


def run_router_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent router <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args(["router", *argv])
        return cmd_router(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


__all__ = [
    "EXIT_BAIL",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_subparser",
    "cmd_router",
    "describe",
    "format_description",
    "run_router_cli",
]
