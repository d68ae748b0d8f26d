"""`ghost-agent router train | inspect | decide`: train the router, read a checkpoint, try a decision.

- `train [--home] [--config] [--out] [--since] [--json]` fits from the home's trajectories and writes the
  checkpoint (default `GhostHome.router_checkpoint`). Exit 0 fitted and saved, 3 bailed on the data floors,
  1 on an error (including a fit whose checkpoint could not be written). Unless logging is already
  configured, its log events go to the home's log file, never to stdout (which carries the report).
- `inspect CHECKPOINT [--json]`: schema, model id, weights ranked, training metadata. Exit 2 on a file that
  is not a usable router checkpoint (one line on stderr, like every unusable checkpoint here).
- `decide TEXT [--model PATH] [--messages N] [--band B] [--mode M]` prints the RouterDecision JSON. Without
  `--model`, the daemon's choice: the `router_model` setting, else the home's checkpoint if it exists.

`train`, `inspect`, the exit codes and the one-line errors are the shared `cli/models` conventions (the PRM's
CLI is the same). `add_subparser(sub)` registers `router` on the main parser (`cli/main.py`'s `func`/`parser`
convention); `run_router_cli(argv, out)` runs it standalone (tests, scripts).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ghost_agent.cli.models import (
    EXIT_BAIL,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    add_command_group,
    add_inspect_parser,
    add_train_parser,
    cli_settings,
    describe,
    run_command,
    run_standalone,
    settings_parent,
)
from ghost_agent.cli.models import format_description as _format_description
from ghost_agent.home import GhostHome
from ghost_agent.router.dispatch import DEFAULT_BAND, MODES, Router, RouterRequest
from ghost_agent.router.model import RouterModel
from ghost_agent.router.trainer import RouterTrainer

WEIGHT_MEANING = "a positive weight pushes toward the full agent"


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
    common = settings_parent()
    parser, commands = add_command_group(sub, "router", "train, inspect and try the fast/agent router")
    add_train_parser(
        commands, cmd_router, parents=[common], help="fit the router on the home's trajectories and save a checkpoint",
        out_help="checkpoint path (default: the home's router checkpoint)",
        trainer_class=RouterTrainer, default_checkpoint=lambda home: home.router_checkpoint,
    )
    add_inspect_parser(
        commands, cmd_router, help="schema, model id, ranked weights and training metadata",
        checkpoint_help="router checkpoint (checkpoint.json)", model_class=RouterModel, meaning=WEIGHT_MEANING,
    )

    decide = commands.add_parser(
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
    decide.set_defaults(func=cmd_router, parser=decide, handler=_decide)
    return parser


def cmd_router(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `router` command; returns the exit code."""
    return run_command("router", args, parser, out, err)


def format_description(figures: dict[str, Any], path: Path) -> str:
    """`describe`'s figures as readable text, saying which way a positive weight routes."""
    return _format_description(figures, path, WEIGHT_MEANING)


def _decide(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str]) -> int:
    settings = cli_settings(args, parser)
    path: Path | None = args.model if args.model is not None else settings.learning.router_model
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
    return run_standalone(add_subparser, "router", argv, out, err)


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
