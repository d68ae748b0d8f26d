"""`ghost-agent eval freeze | compare` and `python -m scripts.eval_baseline freeze | compare` (seed 001).

Both run a suite (`--suite`, one of `eval.suites.SUITES`) through a runner (`--runner stub` by default,
`--runner http --base-url URL` for a daemon on loopback) and then:

- `freeze` writes the result JSON to `--output` (default `$GHOST_HOME/system/eval/<suite>.json`); exit 0.
- `compare` reads `--baseline` (same default), runs the suite, prints the per-suite / per-cluster diff table
  and exits 1 on any drop of the top-level pass rate, 0 otherwise (`--output` also saves this run).

Exit 2, with one line on stderr and no traceback, when the run cannot be made: bad flags, a missing/corrupt
baseline or one of another suite, unknown task ids, a non-loopback base url, an unreachable daemon or one
that refuses the api key, no working sandbox for code tasks, an egress attempt. Progress goes to stderr: a
bar on a terminal, one line per task otherwise. `add_subparser(sub)` registers `eval` on the main parser
(`cli/main.py`'s `func`/`parser` convention); `main(argv)` is the standalone script; `run_eval_cli(argv, out, err)`
runs `ghost-agent eval <argv>` for tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ghost_agent.cli.args import home_config_overrides, home_config_parent, positive_float, positive_int
from ghost_agent.eval.suites import SUITES
from ghost_agent.eval.task import EvalTask, SuiteResult, TaskOutcome
from ghost_agent.logging import warnings_to
from ghost_agent.settings import Settings, SettingsError, load_settings

EXIT_OK, EXIT_REGRESSED, EXIT_USAGE = 0, 1, 2
SUITE_NAMES = SUITES
DEFAULT_TIMEOUT_S = 300.0

EPILOG = """\
exit codes:
  0  freeze: result written; compare: no drop in the top-level pass rate
  1  compare: the top-level pass rate dropped (any amount)
  2  the run could not be made: bad input, missing/corrupt baseline, unreachable daemon, egress attempt, ...
"""


class EvalUsageError(Exception):
    """Bad input or an environment the run cannot start in: one line on stderr, exit 2."""


def _common() -> argparse.ArgumentParser:
    from ghost_agent.eval.runners import DEFAULT_BASE_URL, RUNNER_KINDS

    common = home_config_parent("GHOST_HOME")
    common.add_argument("--suite", choices=SUITE_NAMES, default="default", help="which suite (default: default)")
    common.add_argument("--runner", choices=RUNNER_KINDS, default="stub",
                        help="stub: echo the prompt, no daemon (CI); http: ask a daemon on loopback (default: stub)")
    common.add_argument("--base-url", default=DEFAULT_BASE_URL,
                        help=f"the daemon, loopback only (--runner http; default {DEFAULT_BASE_URL})")
    common.add_argument("--api-key", default=None, help="the daemon's api key (default: the api_key setting)")
    common.add_argument("--model", default=None, help="model name sent with each request (default: the daemon's)")
    common.add_argument("--workspace-root", type=Path, default=None, metavar="DIR",
                        help="the daemon's workspace root, where tasks' files are placed (--runner http; "
                             "default: <home>/workspace)")
    common.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT_S, metavar="N",
                        help="seconds: the HTTP client timeout AND each task's deadline (default 300)")
    common.add_argument("--limit", type=positive_int, default=None, metavar="N", help="only the first N tasks")
    common.add_argument("--ids", nargs="+", default=None, metavar="ID", help="only these task ids")
    common.add_argument("--concurrency", type=positive_int, default=1, metavar="N",
                        help="tasks in flight at once (default 1)")
    common.add_argument("--seed", type=int, default=None, help="the suite's sampling seed (recorded in the result)")
    common.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    return common


def add_commands(commands: Any) -> None:
    """Add `freeze`, `compare` and `transfer` to a subparsers action (shared by `ghost-agent eval` and the
    script)."""
    common = _common()
    freeze = commands.add_parser(
        "freeze", parents=[common], help="run the suite and write the result as the baseline",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    freeze.add_argument("--output", type=Path, default=None, metavar="PATH",
                        help="where to write (default: $GHOST_HOME/system/eval/<suite>.json)")
    freeze.set_defaults(func=cmd_eval, parser=freeze, eval_command="freeze")
    compare = commands.add_parser(
        "compare", parents=[common], help="run the suite and diff it against a frozen baseline (exit 1 on a drop)",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("--baseline", type=Path, default=None, metavar="PATH",
                         help="the frozen result (default: $GHOST_HOME/system/eval/<suite>.json)")
    compare.add_argument("--output", type=Path, default=None, metavar="PATH", help="also write this run's result")
    compare.set_defaults(func=cmd_eval, parser=compare, eval_command="compare")
    from ghost_agent.cli.eval_transfer import add_command as add_transfer  # "does it learn?" (its own flags)

    add_transfer(commands)


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `eval freeze|compare` on the main parser's subparsers action."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "eval", help="run an eval suite; freeze a baseline or compare against one",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="eval_command", metavar="SUBCOMMAND")
    commands.required = True
    add_commands(commands)
    return parser


class Progress:
    """Per-task progress on `stream`: a carriage-return bar on a terminal, one plain line per task otherwise."""

    WIDTH = 24

    def __init__(self, stream: IO[str], *, tty: bool | None = None, label: str = "") -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.label = label
        self.passed = 0
        self._t0 = time.perf_counter()
        self._drawn = False

    def __call__(self, outcome: TaskOutcome, done: int, total: int) -> None:
        """Report one finished task (`run_suite`'s progress callback)."""
        self.passed += outcome.passed
        if self.tty:
            filled = self.WIDTH * done // max(total, 1)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            line = (f"{self.label}[{bar}] {done}/{total}  {self.passed} passed  "
                    f"{time.perf_counter() - self._t0:6.1f}s  {outcome.task_id}")
            self.stream.write("\r" + line[:118].ljust(118))
            self._drawn = True
        else:
            verdict = "PASS" if outcome.passed else str(outcome.reward.get("failure_class") or "fail").upper()
            extra = f"  trajectory {outcome.trajectory_id}" if outcome.trajectory_id else ""
            error = f"  ({outcome.error[:120]})" if outcome.error else ""
            self.stream.write(f"{self.label}[{done:>{len(str(total))}}/{total}] {verdict:<15} {outcome.task_id}  "
                              f"{outcome.duration_ms:.0f} ms{extra}{error}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def _settings(args: argparse.Namespace) -> Settings:
    try:
        return load_settings(cli=home_config_overrides(args))
    except SettingsError as exc:
        raise EvalUsageError(str(exc)) from exc


def _default_path(settings: Settings, suite: str) -> Path:
    from ghost_agent.home import GhostHome

    return GhostHome(settings.home).eval / f"{suite}.json"


def _load_tasks(args: argparse.Namespace) -> list[EvalTask]:
    from ghost_agent.eval.suites import load_suite

    try:
        tasks = list(load_suite(args.suite, limit=args.limit, ids=args.ids, seed=args.seed))
    except (KeyError, ValueError, LookupError) as exc:
        raise EvalUsageError(f"cannot load suite {args.suite!r}: {str(exc).strip(chr(39))}") from exc
    if not tasks:
        raise EvalUsageError(f"no tasks selected from suite {args.suite!r}")
    return tasks


def _sandbox_for(tasks: Sequence[EvalTask], settings: Settings) -> Any:
    """The configured sandbox when some task's verifier runs code (code_tests, delivered), else None (nothing
    probed)."""
    from ghost_agent.eval.verifiers import SANDBOX_VERIFIERS

    if not any(t.verifier in SANDBOX_VERIFIERS for t in tasks):
        return None
    from ghost_agent.sandbox import SandboxError, get_sandbox

    try:
        return get_sandbox(settings)
    except SandboxError as exc:
        raise EvalUsageError(f"no sandbox can run the code tasks: {exc}") from exc


def _run(args: argparse.Namespace, settings: Settings, tasks: list[EvalTask], err: IO[str]) -> SuiteResult:
    from ghost_agent.eval.network_guard import NetworkEgressError
    from ghost_agent.eval.run import run_suite
    from ghost_agent.eval.runners import RunnerError, make_runner
    from ghost_agent.home import GhostHome

    api_key = args.api_key if args.api_key is not None else settings.server.api_key
    workspace_root = args.workspace_root or GhostHome(settings.home).workspace
    try:
        runner = make_runner(args.runner, base_url=args.base_url, api_key=api_key, model=args.model,
                             timeout_s=args.timeout, workspace_root=workspace_root)
    except ValueError as exc:
        raise EvalUsageError(str(exc)) from exc
    sandbox = _sandbox_for(tasks, settings)
    progress = None if args.no_progress else Progress(err, label=f"{args.suite} ")
    metadata: dict[str, Any] = {"suite": args.suite, "limit": args.limit, "ids": args.ids, "seed": args.seed}

    async def go() -> SuiteResult:
        try:
            return await run_suite(tasks, runner, concurrency=args.concurrency, per_task_timeout_s=args.timeout,
                                   progress=progress, metadata=metadata, sandbox=sandbox)
        finally:
            await runner.aclose()

    try:
        return asyncio.run(go())
    except RunnerError as exc:
        raise EvalUsageError(str(exc)) from exc
    except NetworkEgressError as exc:
        raise EvalUsageError(f"egress attempt refused, run aborted: {exc}") from exc
    finally:
        if progress is not None:
            progress.close()


def _summary(result: SuiteResult) -> str:
    from ghost_agent.eval.run import tally

    passed = sum(o.passed for o in result.outcomes)
    lines = [f"suite {result.suite}: {passed}/{len(result.outcomes)} passed ({100.0 * result.pass_rate:.1f}%)"]
    counts = tally(result.outcomes)
    lines.append("  outcomes: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for cluster, rate in result.cluster_pass_rates().items():
        members = [o for o in result.outcomes if o.cluster == cluster]
        lines.append(f"  {cluster or '(none)':<24} {100.0 * rate:5.1f}% ({sum(o.passed for o in members)}/"
                     f"{len(members)})")
    meta = result.metadata
    lines.append(f"  runner {meta.get('runner')}, model {meta.get('model')}, daemon {meta.get('daemon_version')}, "
                 f"settings {str(meta.get('settings_hash'))[:12]}")
    return "\n".join(lines) + "\n"


def _write(result: SuiteResult, path: Path) -> Path:
    from ghost_agent.eval.baseline import freeze

    try:
        return freeze(result, path)
    except OSError as exc:
        raise EvalUsageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _remember(settings: Settings, command: str, result: SuiteResult, err: IO[str], *,
              baseline: SuiteResult | None = None, regressed: bool | None = None) -> None:
    """One line of the eval history (`$GHOST_HOME/system/eval/history.jsonl`): what the status page plots. A
    history that cannot be written costs the line, never the run."""
    from ghost_agent.home import GhostHome
    from ghost_agent.watchdog.run_log import History, iso

    meta = result.metadata
    record = {"ts": iso(time.time()), "command": command,
              **result.summary(), "runner": meta.get("runner"), "model": meta.get("model"),
              "baseline_pass_rate": None if baseline is None else round(baseline.pass_rate, 6),
              "regressed": regressed}
    try:
        History(GhostHome(settings.home).eval_history).add(record)
    except OSError as exc:
        err.write(f"eval {command}: the eval history was not updated: {exc}\n")


def _freeze(args: argparse.Namespace, settings: Settings, out: IO[str], err: IO[str]) -> int:
    path = args.output or _default_path(settings, args.suite)
    tasks = _load_tasks(args)
    result = _run(args, settings, tasks, err)
    written = _write(result, path)
    _remember(settings, "freeze", result, err)
    out.write(_summary(result))
    out.write(f"frozen: {written}\n")
    return EXIT_OK


def _compare(args: argparse.Namespace, settings: Settings, out: IO[str], err: IO[str]) -> int:
    from ghost_agent.eval.baseline import BaselineError, compare, load

    path = args.baseline or _default_path(settings, args.suite)
    try:
        baseline = load(path)  # before the (possibly long) run: a bad baseline fails fast
    except BaselineError as exc:
        raise EvalUsageError(str(exc)) from exc
    if baseline.suite != args.suite:
        raise EvalUsageError(f"baseline {path} is a {baseline.suite!r} result, not {args.suite!r}")
    tasks = _load_tasks(args)
    result = _run(args, settings, tasks, err)
    if args.output is not None:
        _write(result, args.output)
    try:
        comparison = compare(baseline, result)
    except BaselineError as exc:
        raise EvalUsageError(str(exc)) from exc
    _remember(settings, "compare", result, err, baseline=baseline, regressed=comparison.regressed)
    out.write(comparison.render_table())
    return EXIT_REGRESSED if comparison.regressed else EXIT_OK


def cmd_eval(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Run a parsed `freeze` / `compare`; returns the exit code (EvalUsageError → one line on stderr, 2)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        settings = _settings(args)
        with warnings_to(err):
            if args.eval_command == "freeze":
                return _freeze(args, settings, out, err)
            return _compare(args, settings, out, err)
    except EvalUsageError as exc:
        err.write(f"eval {args.eval_command}: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE


def _standalone(root: argparse.ArgumentParser, argv: Sequence[str], out: IO[str] | None, err: IO[str] | None) -> int:
    try:
        with contextlib.redirect_stderr(err) if err is not None else contextlib.nullcontext():
            args = root.parse_args(list(argv))
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    code: int = args.func(args, args.parser, out, err)
    return code


def run_eval_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent eval <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    return _standalone(root, ["eval", *argv], out, err)


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """`python -m scripts.eval_baseline freeze|compare ...` (the seed's command line); returns the exit code."""
    root = argparse.ArgumentParser(
        prog="python -m scripts.eval_baseline",
        description="Run a Ghost Agent eval suite; freeze a baseline or compare against one.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = root.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    add_commands(commands)
    return _standalone(root, sys.argv[1:] if argv is None else argv, out, err)


__all__ = ["EXIT_OK", "EXIT_REGRESSED", "EXIT_USAGE", "Progress", "SUITE_NAMES", "add_commands", "add_subparser",
           "cmd_eval", "main", "run_eval_cli"]
