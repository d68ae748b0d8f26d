"""`ghost-agent selfplay run|stats|bank`: practise now (to bootstrap a fresh home), and what practice has done.

`run` builds the daemon in-process from the same settings `serve` takes (so `--upstream-url` or the embedded
model, the home, the sandbox) and runs what phase 3 runs, `--n` tasks at once, with a progress line (pass
rate, ETA) per attempt. Stop the daemon first when it uses the embedded model: two processes would each load
it. `stats` reads the home: per cluster the attempts, pass rate (all time and recent), the difficulty it
practises at, saturation, and the frontier weight the next pass would give it. `bank` lists the experience
bank's worked examples (value, times shown, passes and failures after showing, times the task was solved again).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from typing import IO, Any

from ghost_agent.cli.args import cli_settings, home_config_parent, settings_from_flags
from ghost_agent.home import GhostHome
from ghost_agent.selfplay.practice import Attempt, PassReport
from ghost_agent.selfplay.task import CLUSTERS
from ghost_agent.settings import Settings


def add_subparser(sub: Any, add_settings_flags: Any) -> argparse.ArgumentParser:
    """Register `selfplay run|stats|bank` on the main parser's subparsers action."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "selfplay", help="practise now (bootstrap a home), or show what self-play has done", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="selfplay_command", metavar="SUBCOMMAND")
    commands.required = True
    run = commands.add_parser("run", help="set and solve self-play tasks now, as phase 3 does")
    add_settings_flags(run)
    run.add_argument("--cluster", choices=CLUSTERS, help="only this cluster")
    run.add_argument("--n", type=int, default=8, help="tasks to set (default 8)")
    run.add_argument("--attempts", type=int, default=None, help="attempts per task (default: selfplay_attempts)")
    run.add_argument("--seed", type=int, default=None, help="seed the picker (a repeatable run)")
    run.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    run.set_defaults(func=cmd_selfplay, parser=run, handler=_run)
    stats = commands.add_parser("stats", parents=[home_config_parent()], help="per cluster: attempts, pass rate, "
                                "difficulty, saturation and frontier weight")
    stats.add_argument("--json", action="store_true", help="machine-readable output")
    stats.set_defaults(func=cmd_selfplay, parser=stats, handler=_stats)
    bank = commands.add_parser("bank", parents=[home_config_parent()], help="the experience bank: worked examples "
                               "kept from passing practice, with how they fared when shown")
    bank.add_argument("--json", action="store_true", help="machine-readable output (answers included)")
    bank.set_defaults(func=cmd_selfplay, parser=bank, handler=_bank)
    return parser


def cmd_selfplay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Dispatch a parsed `selfplay` command."""
    handler: Any = args.handler
    result: int = handler(args, parser, sys.stdout, sys.stderr)
    return result


class AttemptProgress:
    """One line per attempt: a carriage-return bar on a terminal, plain lines otherwise; pass rate and ETA."""

    def __init__(self, stream: IO[str], total: int) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.passed = 0
        self.t0 = time.perf_counter()
        self.tty = stream.isatty()

    def __call__(self, attempt: Attempt) -> None:
        self.done += 1
        self.passed += attempt.passed
        elapsed = time.perf_counter() - self.t0
        eta = elapsed / self.done * max(self.total - self.done, 0)
        line = (f"[{self.done}/{self.total}] {'PASS' if attempt.passed else attempt.failure_class.upper():<14} "
                f"{attempt.task_id}  {attempt.seconds:.1f}s  pass rate {self.passed}/{self.done}  ETA {eta:.0f}s")
        self.stream.write(("\r" + line[:118].ljust(118)) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.done:
            self.stream.write("\n")


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str], err: IO[str]) -> int:
    # A practice run is one pass in the foreground: the watchdog's idle phases (reflection, retrain, its own
    # self-play pass) would compete with it for the model, since practice turns never move the activity clock.
    args.watchdog = False
    settings = settings_from_flags(args, parser)
    if args.n < 1:
        parser.error("--n must be at least 1")
    attempts = args.attempts or settings.learning.selfplay_attempts
    progress = None if args.no_progress else AttemptProgress(err, args.n * attempts)
    try:
        report = asyncio.run(_practise(settings, args, attempts, progress))
    except RuntimeError as exc:
        err.write(f"ghost-agent selfplay: {exc}\n")
        return 1
    finally:
        if progress is not None:
            progress.close()
    out.write(_summary(report))
    return 0


async def _practise(settings: Settings, args: argparse.Namespace, attempts: int, progress: Any) -> PassReport:
    from ghost_agent.selfplay.frontier import FrontierTracker
    from ghost_agent.selfplay.practice import practise
    from ghost_agent.server import build_app

    app = build_app(settings)
    ctx = app.state.ctx
    async with app.router.lifespan_context(app):
        sandbox = await ctx.ready_to_practise(backend_timeout_s=600)
        tracker = FrontierTracker(ctx.home.frontier)
        rng = random.Random(args.seed)
        return await practise(
            ctx, tracker, sandbox, rng, tasks=args.n, attempts=attempts, cluster=args.cluster,
            scorer=ctx.prm_scorer, collector=ctx.collector, frontier=settings.learning.frontier_selfplay,
            uniform_prob=settings.learning.frontier_uniform_sample_prob, on_attempt=progress, bank=ctx.experience,
        )


def _summary(report: PassReport) -> str:
    lines = [f"self-play: {report.passed}/{len(report.attempts)} attempts passed over {len(report.picks)} tasks"]
    for cluster, (passed, total) in report.to_dict()["by_cluster"].items():
        seconds = [a.seconds for a in report.attempts if a.cluster == cluster]
        lines.append(f"  {cluster:<16} {passed}/{total} passed   {sum(seconds) / max(len(seconds), 1):.1f} s/attempt")
    return "\n".join(lines) + "\n"


def _stats(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str], err: IO[str]) -> int:
    import orjson

    settings = cli_settings(args, parser)
    from ghost_agent.selfplay.stats import cluster_stats

    rows = cluster_stats(GhostHome(settings.home), settings)
    if args.json:
        out.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    out.write(f"{'cluster':<16} {'tasks':>5} {'tried':>6} {'passed':>7} {'rate':>6} {'recent':>7} {'level':>5} "
              f"{'weight':>7}\n")
    for r in rows:
        rate = "-" if r["pass_rate"] is None else f"{100 * r['pass_rate']:.0f}%"
        recent = "-" if r["recent_pass_rate"] is None else f"{100 * r['recent_pass_rate']:.0f}%"
        weight = "-" if r["weight"] is None else f"{r['weight']:.3f}"
        level = "sat" if r["saturated"] else str(r["difficulty"])
        out.write(f"{r['cluster']:<16} {r['templates']:>5} {r['attempts']:>6} {r['passes']:>7} {rate:>6} "
                  f"{recent:>7} {level:>5} {weight:>7}\n")
    if all(r["weight"] is None for r in rows):
        out.write("weights: - (the frontier engages once a trained PRM checkpoint exists; until then picks are "
                  "the brittle pool's)\n")
    return 0


def _bank(args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str], err: IO[str]) -> int:
    import orjson

    from ghost_agent.selfplay.experience import ExperienceBank, ExperienceBankError

    settings = cli_settings(args, parser)
    path = GhostHome(settings.home).experience_db
    if not path.exists():
        items, stats = [], {"examples": 0}
    else:
        try:
            with ExperienceBank(path, max_examples=settings.learning.experience_max_examples) as bank:
                items, stats = bank.examples(), bank.stats()
        except ExperienceBankError as exc:
            err.write(f"ghost-agent selfplay bank: {exc}\n")
            return 1
    if args.json:
        out.write(orjson.dumps({"stats": stats, "examples": [e.to_dict() for e in items]},
                               option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    if stats.get("recovered_from"):
        out.write(f"the bank was corrupt and started afresh; the old file is {stats['recovered_from']}\n")
    out.write(f"{len(items)} worked examples in {path}\n")
    if items:
        out.write(f"{'id':<16} {'cluster':<15} {'value':>5} {'shown':>5} {'pass':>4} {'fail':>4} {'seen':>4}  "
                  "request\n")
    for e in items:
        request = " ".join(e.request.split())
        out.write(f"{e.id:<16} {e.cluster[:15]:<15} {e.value:>5.2f} {e.shown:>5} {e.passes:>4} {e.fails:>4} "
                  f"{e.support:>4}  {request[:60] + ('…' if len(request) > 60 else '')}\n")
    return 0


__all__ = ["add_subparser", "cmd_selfplay"]
