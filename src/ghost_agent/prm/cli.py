"""`ghost-agent prm train | inspect | score`: train the PRM from a GHOST_HOME, look inside a checkpoint, score.

`add_subparser(sub)` registers `prm` on the main parser (cli.py's `func`/`parser` convention);
`run_prm_cli(argv, out, err)` runs it standalone (tests, scripts). No command prints a traceback for bad
input: unusable checkpoints and bad JSON are one-line errors on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
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
from ghost_agent.prm.features import ActionCandidate, PlanState, extract_step_features, feature_dict
from ghost_agent.prm.labels import StepLabelSpec
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.prm.trainer import PRMTrainer
from ghost_agent.settings import SettingsError, arg_type, load_settings
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


class UserError(Exception):
    """Bad input from the command line: reported as one line on stderr, exit code 2."""


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `prm` and its subcommands on the main parser's subparsers action."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", dest="home", type=arg_type("home"), default=None, help="GHOST_HOME to use")
    common.add_argument("--config", dest="config", type=arg_type("config"), default=None, help="config file")

    parser: argparse.ArgumentParser = sub.add_parser(
        "prm", help="train, inspect and query the Process Reward Model (step scorer)"
    )
    psub = parser.add_subparsers(dest="prm_command", metavar="SUBCOMMAND")
    psub.required = True

    train = psub.add_parser(
        "train",
        parents=[common],
        help="fit the PRM on the home's trajectories and save a checkpoint",
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("--out", type=Path, help="checkpoint path (default: $GHOST_HOME/system/prm/checkpoint.json)")
    train.add_argument("--since", type=_when, help="only trajectories newer than DURATION (7d) or a date/ISO time")
    train.add_argument("--binary", action="store_true", help="train on thresholded labels instead of γ-values")
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    train.set_defaults(func=cmd_prm, parser=train)

    inspect = psub.add_parser("inspect", help="schema, weights ranked by strength and training metadata")
    inspect.add_argument("checkpoint", type=Path, help="a PRM checkpoint (JSON)")
    inspect.add_argument("--json", action="store_true", help="print as JSON")
    inspect.set_defaults(func=cmd_prm, parser=inspect)

    score = psub.add_parser(
        "score",
        parents=[common],
        help="score one (state, action) and show its features",
        description="STATE and ACTION are JSON objects, or @FILE to read one from a file. "
        "Without --model the home's checkpoint is used if present, else the neutral scorer (0.5).",
    )
    score.add_argument("--state", required=True, help='JSON, e.g. {"user_request": "...", "steps_so_far": 1}')
    score.add_argument("--action", required=True, help='JSON, e.g. {"tool_name": "bash", "tool_args": {}}')
    score.add_argument("--model", type=Path, help="checkpoint to score with (default: the home's, if any)")
    score.set_defaults(func=cmd_prm, parser=score)
    return parser


def cmd_prm(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `prm` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        if args.prm_command == "train":
            return _train(args, parser, out)
        if args.prm_command == "inspect":
            return _inspect(args, out)
        return _score(args, parser, out)
    except UserError as exc:
        err.write(f"ghost-agent prm {args.prm_command}: {_one_line(str(exc))}\n")
        return EXIT_USAGE


def _home(args: argparse.Namespace, parser: argparse.ArgumentParser) -> GhostHome:
    given = {k: getattr(args, k) for k in ("home", "config") if getattr(args, k, None) is not None}
    try:
        settings = load_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))
    return GhostHome(settings.home)


def _train(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str]) -> int:
    home = _home(args, parser)
    checkpoint = args.out if args.out is not None else home.prm_checkpoint
    collector = TrajectoryCollector(home.trajectories, enabled=False)  # read-only: never creates the store
    trainer = PRMTrainer(
        collector, spec=StepLabelSpec(), use_continuous_labels=not args.binary, checkpoint_path=checkpoint,
        since=args.since,
    )
    # The fit/bail events belong in the home's log (`ghost-agent logs --event prm_train_fit`), not on stdout,
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
    if report.error:
        return EXIT_ERROR
    return EXIT_OK if report.fit_succeeded else EXIT_BAIL


def _log_to_home(home: GhostHome) -> LogSink:
    """Route log events to the home's log file only; nowhere at all if that file cannot be opened."""
    try:
        return configure_logging(home.log_file, console=None)
    except OSError:
        return configure_logging(None, console=None)


def _load(path: Path) -> StepValueModel:
    try:
        model: StepValueModel = StepValueModel.load(path)
    except CheckpointError as exc:
        raise UserError(str(exc)) from None
    return model


def describe(model: StepValueModel) -> dict[str, Any]:
    """What `prm inspect --json` prints: schema, id, features, ranked weights, bias, training metadata."""
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


def _inspect(args: argparse.Namespace, out: IO[str]) -> int:
    info = describe(_load(args.checkpoint))
    if args.json:
        out.write(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    lines = [
        f"checkpoint: {args.checkpoint}",
        f"schema: {info['schema']}",
        f"model_id: {info['model_id']}",
        f"features: {info['n_features']}",
        f"bias: {info['bias']:+.6f}",
        "weights (strongest first):",
        f"  {'feature':<36} {'raw':>12} {'standardized':>13}",
    ]
    lines.extend(
        f"  {w['name']:<36} {w['raw']:>+12.6f} {w['standardized']:>+13.6f}" for w in info["weights_ranked"]
    )
    training = info["training"]
    lines.append("training:" + ("" if training else " (no metadata)"))
    for key, value in training.items():
        shown = orjson.dumps(value).decode() if isinstance(value, (dict, list)) else str(value)
        lines.append(f"  {key}: {shown}")
    out.write("\n".join(lines) + "\n")
    return EXIT_OK


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
        default = _home(args, parser).prm_checkpoint
        path = default if default.exists() else None
    scorer = PRMScorer(_load(path), source=str(path)) if path is not None else PRMScorer()
    result = {
        "score": scorer.score(state, action),
        "uncertainty": scorer.uncertainty(state, action),
        "model_id": scorer.model_id,
        "model": None if path is None else str(path),
        "features": feature_dict(extract_step_features(state, action)),
    }
    out.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return EXIT_OK


def _one_line(text: str) -> str:
    return " ".join(text.split())


def run_prm_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent prm <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args(["prm", *argv])
        return cmd_prm(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


__all__ = ["EXIT_BAIL", "EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "add_subparser", "cmd_prm", "describe", "run_prm_cli"]
