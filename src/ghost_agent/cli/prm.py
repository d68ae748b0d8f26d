"""`ghost-agent prm train | inspect | score`: train the PRM from a GHOST_HOME, look inside a checkpoint, score.

`train` and `inspect`, the exit codes and the one-line errors are the shared `cli/models` conventions (the
router's CLI is the same). `score` is the PRM's own: one `(state, action)` scored with the home's checkpoint
(or `--model`, or the neutral scorer without one), with its features.

`add_subparser(sub)` registers `prm` on the main parser (`cli/main.py`'s `func`/`parser` convention);
`run_prm_cli(argv, out, err)` runs it standalone (tests, scripts). No command prints a traceback for bad
input: unusable checkpoints and bad JSON are one-line errors on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ghost_agent.cli.models import (
    EXIT_BAIL,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    UserError,
    add_command_group,
    add_inspect_parser,
    add_train_parser,
    cli_settings,
    describe,
    print_json,
    run_command,
    run_standalone,
    settings_parent,
)
from ghost_agent.home import GhostHome
from ghost_agent.prm.features import ActionCandidate, PlanState, extract_step_features, feature_dict
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.prm.trainer import PRMTrainer


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `prm` and its subcommands on the main parser's subparsers action."""
    common = settings_parent()
    parser, commands = add_command_group(sub, "prm", "train, inspect and query the Process Reward Model (step scorer)")
    train = add_train_parser(
        commands, cmd_prm, parents=[common], help="fit the PRM on the home's trajectories and save a checkpoint",
        out_help="checkpoint path (default: $GHOST_HOME/system/prm/checkpoint.json)",
        trainer_class=PRMTrainer, default_checkpoint=lambda home: home.prm_checkpoint,
        options=lambda args: {"use_continuous_labels": not args.binary},
    )
    train.add_argument("--binary", action="store_true", help="train on thresholded labels instead of γ-values")
    add_inspect_parser(
        commands, cmd_prm, help="schema, weights ranked by strength and training metadata",
        checkpoint_help="a PRM checkpoint (JSON)", model_class=StepValueModel,
    )

    score = commands.add_parser(
        "score",
        parents=[common],
        help="score one (state, action) and show its features",
        description="STATE and ACTION are JSON objects, or @FILE to read one from a file. "
        "Without --model the home's checkpoint is used if present, else the neutral scorer (0.5).",
    )
    score.add_argument("--state", required=True, help='JSON, e.g. {"user_request": "...", "steps_so_far": 1}')
    score.add_argument("--action", required=True, help='JSON, e.g. {"tool_name": "bash", "tool_args": {}}')
    score.add_argument("--model", type=Path, help="checkpoint to score with (default: the home's, if any)")
    score.set_defaults(func=cmd_prm, parser=score, handler=_score)
    return parser


def cmd_prm(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `prm` command; returns the exit code."""
    return run_command("prm", args, parser, out, err)


def _json_object(raw: str, what: str) -> dict[str, Any]:
    """`raw` as a JSON object; `@path` reads the JSON from a file. UserError with the reason otherwise."""
    text: str | bytes = raw
    if raw.startswith("@"):
        path = Path(raw[1:])
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise UserError(f"cannot read --{what} file {path}: {exc.strerror or exc}") from None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UserError(f"--{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UserError(f"--{what} must be a JSON object, got {type(value).__name__}")
    return value


def _score(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str]) -> int:
    state = PlanState.from_dict(_json_object(args.state, "state"))
    action = ActionCandidate.from_dict(_json_object(args.action, "action"))
    path: Path | None = args.model
    if path is None:
        default = GhostHome(cli_settings(args, parser).home).prm_checkpoint
        path = default if default.exists() else None
    # Not PRMScorer.load: its `prm_loaded` event would land on stdout, in the middle of the JSON.
    scorer = PRMScorer(StepValueModel.load(path), source=str(path)) if path is not None else PRMScorer()
    print_json(out, {
        "score": scorer.score(state, action),
        "uncertainty": scorer.uncertainty(state, action),
        "model_id": scorer.model_id,
        "model": None if path is None else str(path),
        "features": feature_dict(extract_step_features(state, action)),
    })
    return EXIT_OK


def run_prm_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent prm <argv>` standalone; usage errors return 2 instead of exiting."""
    return run_standalone(add_subparser, "prm", argv, out, err)


__all__ = ["EXIT_BAIL", "EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "add_subparser", "cmd_prm", "describe", "run_prm_cli"]
