"""`ghost-agent sandbox run | info | setup`: run code through the detected sandbox, show what it isolates,
install bubblewrap.

Exit codes: 0 = done (for `run`: the program ran, whatever its own exit code, which the JSON reports);
1 = the sandbox machinery failed (no backend, could not start); 2 = bad input. `add_subparser(sub)` registers
the command on the main parser (`cli/main.py`'s `func`/`parser` convention); `run_sandbox_cli(argv, out, err)` runs it
standalone (tests, scripts).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ghost_agent.cli.args import home_config_parent, positive_float, positive_int
from ghost_agent.logging import warnings_to
from ghost_agent.sandbox.base import LANGUAGES, ExecLimits, SandboxError
from ghost_agent.sandbox.detect import Detection, get_detection, reset_cache
from ghost_agent.sandbox.setup import ensure_installed
from ghost_agent.settings import Settings, SettingsError, arg_type, load_settings

EXIT_OK, EXIT_SANDBOX, EXIT_USAGE = 0, 1, 2


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `sandbox` and its subcommands on the main parser's subparsers action."""
    common = home_config_parent("GHOST_HOME")
    common.add_argument("--sandbox", dest="sandbox", type=arg_type("sandbox"), default=None,
                        metavar="{auto,bwrap,unisolated,subprocess}",
                        help="backend (default: settings.sandbox, auto)")

    parser: argparse.ArgumentParser = sub.add_parser("sandbox", help="run code in the sandbox, show or set it up")
    ssub = parser.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND")
    ssub.required = True

    run = ssub.add_parser("run", parents=[common], help="run code through the sandbox; prints the ExecResult JSON")
    run.add_argument("--language", required=True, choices=LANGUAGES)
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--code", help="the program text")
    source.add_argument("--file", type=Path, help="read the program from this file")
    run.add_argument("--timeout", type=positive_float, help="seconds (default: settings.sandbox_timeout_s)")
    run.add_argument("--memory-mb", type=positive_int, help="MB (default: settings.sandbox_memory_mb)")
    run.add_argument("--workspace", type=Path,
                     help="existing directory the code runs in, at /workspace (default: a temp dir); run as root, "
                          "its contents are handed to the sandbox user (chown 65534)")
    run.add_argument("--stdin", help="text fed to the program's standard input")
    run.set_defaults(func=cmd_sandbox, parser=run)

    info = ssub.add_parser("info", parents=[common], help="backend, what it isolates, probe results")
    info.add_argument("--json", action="store_true", help="print the detection as JSON")
    info.set_defaults(func=cmd_sandbox, parser=info)

    setup = ssub.add_parser("setup", parents=[common], help="install bubblewrap (apt) when missing, then show info")
    setup.add_argument("--json", action="store_true", help="print the final detection as JSON")
    setup.set_defaults(func=cmd_sandbox, parser=setup)
    return parser


def cmd_sandbox(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `sandbox` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    given = {k: getattr(args, k) for k in ("home", "config", "sandbox") if getattr(args, k, None) is not None}
    try:
        settings = load_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))
    with warnings_to(err):
        if args.sandbox_command == "run":
            return _run(args, settings, out, err)
        if args.sandbox_command == "setup":
            for line in ensure_installed().messages:
                err.write(f"sandbox: {line}\n")
            reset_cache()  # bubblewrap may have just appeared
        try:
            detection = get_detection(settings)
        except SandboxError as exc:
            err.write(f"sandbox: {exc}\n")
            return EXIT_SANDBOX
        if args.json:
            out.write(orjson.dumps(detection.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            out.write(format_info(detection))
        if args.sandbox_command == "setup" and not detection.isolation.isolated:
            return EXIT_SANDBOX  # setup's job was an isolating sandbox; say it did not get one
        return EXIT_OK


def _run(args: argparse.Namespace, settings: Settings, out: IO[str], err: IO[str]) -> int:
    if args.file is not None:
        try:
            source = args.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            err.write(f"sandbox run: cannot read --file {args.file}: {exc}\n")
            return EXIT_USAGE
    else:
        source = args.code
    if args.workspace is not None and not args.workspace.is_dir():
        err.write(f"sandbox run: --workspace {args.workspace} is not an existing directory\n")
        return EXIT_USAGE
    limits = ExecLimits.from_settings(settings.sandbox, timeout_s=args.timeout, memory_mb=args.memory_mb)
    try:
        backend = get_detection(settings).backend
        result = backend.run_sync(args.language, source, limits=limits, workspace=args.workspace, stdin=args.stdin)
    except SandboxError as exc:
        err.write(f"sandbox run: {exc}\n")
        return EXIT_SANDBOX
    out.write(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    return EXIT_OK


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def format_info(detection: Detection) -> str:
    """`sandbox info` as text: backend, each isolation fact, the probes, and why nothing stronger was used."""
    iso = detection.isolation
    lines = [
        f"backend:        {iso.backend} (candidate {detection.candidate}, mode {detection.mode})",
        f"isolated:       {_yes(iso.isolated)}" + ("" if iso.isolated else "  <- model code runs UNISOLATED"),
        f"network:        {_yes(iso.network)}",
        f"filesystem:     {_yes(iso.filesystem)}",
        f"pid namespace:  {_yes(iso.pid_namespace)}",
        f"memory limit:   {iso.memory_limit}",
        f"process limit:  {iso.process_limit}",
        f"concurrency:    {detection.backend.concurrency}",
    ]
    for key, value in iso.details.items():
        if key != "checks":
            lines.append(f"{key + ':':<15} {value}")
    lines.append("probes:")
    for name, result in detection.probes:
        checks = " ".join(f"{k}={'yes' if v else 'no'}" for k, v in result.checks.items())
        verdict = "ok" if result.ok else "failed"
        lines.append(f"  {name:<13} {verdict:<7} {result.duration_ms:7.1f} ms  {checks or result.reason}")
        if result.checks and result.reason:
            lines.append(f"  {'':<13} {result.reason}")
    lines.append(f"why this one:   {detection.reason_for_choice}")
    lines.append(f"backend notes:  {detection.backend.isolation.reason or '-'}")
    lines += [f"WARNING:        {w}" for w in detection.warnings()]
    return "\n".join(lines) + "\n"


def run_sandbox_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent sandbox <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        with contextlib.redirect_stderr(err) if err is not None else contextlib.nullcontext():
            args = root.parse_args(["sandbox", *argv])
        return cmd_sandbox(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
