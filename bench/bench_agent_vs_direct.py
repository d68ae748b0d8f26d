"""The agent turn against the bare model on the eval suites, in one run: does the agent earn its keep?

    python bench/bench_agent_vs_direct.py --suite humaneval --limit 40 --interleave
    python bench/bench_agent_vs_direct.py --suite wordproblems everyday workspace_data
    python bench/bench_agent_vs_direct.py --suite everyday --agent-args check_model_tests=0 --only agent
    python bench/bench_agent_vs_direct.py --suite everyday --only agent --interleave --bank BANK.sqlite3

Both sides go through the daemon app in-process on the real embedded Qwen2.5-Coder-1.5B (greedy unless a
task says otherwise): "direct" forces the fast path (one model call, the client's messages as they are),
"agent" forces the agent turn with the shipped defaults unless `--agent-args` overrides them. Every reply is
graded by the suite's deterministic verifier (code runs in our sandbox). `--bank PATH` adds a side,
"agent+bank": the agent turn with a copy of that experience bank (a self-play run's) in its home, so the worked
examples it shows can be judged by what they do to ordinary requests. Printed per suite: pass rates and wall
times both ways, the ratio, internal-text leaks, `Answer:`-line compliance where the suite asks for one, and a
per-problem table (pass each way, what the agent did: its sandbox runs, model calls and tokens, from the
trajectory) so wins and losses are explained, not only counted. `--json PATH` saves everything. Slow: minutes
per suite on 2 cores; the machine is noisy, so compare the two sides of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog

from ghost_agent.eval import verifiers
from ghost_agent.eval.run import run_suite
from ghost_agent.eval.runners import HttpRunner
from ghost_agent.eval.suites import SUITES, load_suite
from ghost_agent.eval.task import EvalTask, SuiteResult
from ghost_agent.home import GhostHome
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.selfplay.experience import ExperienceBank
from ghost_agent.server import build_app
from ghost_agent.settings import Settings, coerce
from ghost_agent.trajectories.collector import TrajectoryCollector


@dataclass
class Side:
    label: str
    settings: Settings
    results: dict[str, SuiteResult] = field(default_factory=dict)
    walls: dict[str, float] = field(default_factory=dict)


async def run_side(side: Side, suites: list[tuple[str, list[EvalTask]]], timeout: float) -> None:
    """Run every suite on one daemon (the model loads once per side)."""
    app = build_app(side.settings, configure_logs=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        workspace_root = GhostHome(side.settings.home).workspace
        runner = HttpRunner("http://127.0.0.1:8000", timeout_s=timeout, transport=transport,
                            **_runner_kwargs(workspace_root))
        sandbox = get_sandbox(side.settings)
        for name, tasks in suites:
            t0 = time.perf_counter()

            def progress(outcome: Any, done: int, total: int, name: str = name) -> None:
                mark = "pass" if outcome.passed else "FAIL"
                print(f"  [{side.label} {name}] {done}/{total} {outcome.task_id} {mark} "
                      f"({outcome.duration_ms / 1000:.1f} s)", flush=True)

            side.results[name] = await run_suite(tasks, runner, per_task_timeout_s=timeout, progress=progress,
                                                 sandbox=sandbox)
            side.walls[name] = time.perf_counter() - t0
        await runner.aclose()


async def run_interleaved(sides: list[Side], suites: list[tuple[str, list[EvalTask]]], timeout: float) -> None:
    """Every side's daemon up at once (a model instance each, used one at a time): each task runs on every side
    in turn, so a slow stretch of a shared machine hits the sides alike and the wall ratios stay meaningful."""
    async with contextlib.AsyncExitStack() as stack:
        runners = []
        for side in sides:
            app = build_app(side.settings, configure_logs=False)
            await stack.enter_async_context(app.router.lifespan_context(app))
            runner = HttpRunner("http://127.0.0.1:8000", timeout_s=timeout, transport=httpx.ASGITransport(app=app),
                                **_runner_kwargs(GhostHome(side.settings.home).workspace))
            stack.push_async_callback(runner.aclose)
            runners.append((side, runner, get_sandbox(side.settings)))
        for name, tasks in suites:
            for side in sides:
                side.results[name] = SuiteResult(name, [])
                side.walls[name] = 0.0
            for index, task in enumerate(tasks, 1):
                for side, runner, sandbox in runners:
                    t0 = time.perf_counter()
                    result = await run_suite([task], runner, per_task_timeout_s=timeout, sandbox=sandbox)
                    side.walls[name] += time.perf_counter() - t0
                    outcome = result.outcomes[0]
                    side.results[name].outcomes.append(outcome)
                    print(f"  [{side.label} {name}] {index}/{len(tasks)} {outcome.task_id} "
                          f"{'pass' if outcome.passed else 'FAIL'} ({outcome.duration_ms / 1000:.1f} s)", flush=True)


def _runner_kwargs(workspace_root: Path) -> dict[str, Any]:
    """`workspace_root` for runners that place task files (the workspace_data suite); older runners lack it."""
    import inspect

    return {"workspace_root": workspace_root} if "workspace_root" in inspect.signature(HttpRunner).parameters else {}


def trajectory_facts(settings: Settings, trajectory_id: str | None) -> dict[str, Any]:
    """What the turn did, from its trajectory: sandbox runs (ok/failed), model calls, tokens, strategy."""
    if not trajectory_id:
        return {}
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        traj = collector.get(trajectory_id)
    if traj is None:
        return {}
    agent = traj.extra.get("agent") if isinstance(traj.extra, dict) else None
    agent = agent if isinstance(agent, dict) else {}
    cost = agent["cost"] if isinstance(agent.get("cost"), dict) else {}
    usage = traj.usage if isinstance(traj.usage, dict) else {}
    return {
        "steps": [f"{s.tool_name}{'' if s.ok else '(failed)'}" for s in traj.steps],
        "llm_calls": cost.get("llm_calls", 1 if not agent else None),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "strategy": agent.get("strategy", "direct"),
        "kind": agent.get("kind") or traj.extra.get("request_kind"),
        "chosen": agent.get("chosen"),
        "verdict": (traj.verifier or {}).get("verdict"),
    }


def leaks(reply: str) -> list[str]:
    finder = getattr(verifiers, "internal_text_leaks", None)
    return list(finder(reply)) if finder is not None else []


def answer_line_ok(reply: str) -> bool | None:
    checker = getattr(verifiers, "has_answer_line", None)
    return bool(checker(reply)) if checker is not None else None


def report(name: str, tasks: list[EvalTask], sides: list[Side]) -> dict[str, Any]:
    by_side = {s.label: {o.task_id: o for o in s.results[name].outcomes} for s in sides}
    wants_line = any(t.verifier == "answer_line" for t in tasks)
    summary: dict[str, Any] = {"suite": name, "tasks": len(tasks), "sides": {}}
    print(f"\n## {name}: {len(tasks)} tasks, embedded qwen2.5-coder-1.5b (noisy shared 2-core machine)")
    for side in sides:
        outcomes = side.results[name].outcomes
        leaked = sum(1 for o in outcomes if leaks(o.reply))
        line = [answer_line_ok(o.reply) for o in outcomes] if wants_line else []
        entry = {"pass_rate": side.results[name].pass_rate, "passed": sum(o.passed for o in outcomes),
                 "wall_s": round(side.walls[name], 1), "leaks": leaked}
        text = (f"{side.label:>7}: pass {entry['passed']}/{len(outcomes)} = {entry['pass_rate']:.3f}, "
                f"wall {entry['wall_s']:.0f} s, internal-text leaks {leaked}")
        if line and all(v is not None for v in line):
            entry["answer_line"] = sum(bool(v) for v in line) / len(line)
            text += f", `Answer:` line {entry['answer_line']:.2f}"
        print(text)
        summary["sides"][side.label] = entry
    for side in sides[1:]:
        if sides[0].walls[name] > 0:
            ratio = side.walls[name] / sides[0].walls[name]
            summary.setdefault("wall_ratio", {})[f"{side.label}/{sides[0].label}"] = round(ratio, 2)
            print(f"  wall ratio {side.label}/{sides[0].label}: {ratio:.2f}x")
    print("| task | " + " | ".join(s.label for s in sides) + " | what the agent did | s each way |")
    print("|---|" + "---|" * len(sides) + "---|---|")
    rows = []
    for task in tasks:
        marks = []
        for side in sides:
            o = by_side[side.label].get(task.id)
            mark = "?" if o is None else ("pass" if o.passed else "FAIL")
            marks.append(mark + (" LEAK" if o is not None and leaks(o.reply) else ""))
        agent_side = next((s for s in sides if s.label == "agent"), None)
        facts: dict[str, Any] = {}
        if agent_side is not None:
            o = by_side["agent"].get(task.id)
            facts = trajectory_facts(agent_side.settings, o.trajectory_id if o else None)
        did = (f"{facts.get('kind') or '-'}; runs: {', '.join(facts.get('steps') or []) or 'none'}; "
               f"calls {facts.get('llm_calls')}; tokens {facts.get('prompt_tokens')}+{facts.get('completion_tokens')}"
               + (f"; chose {facts['chosen']}" if facts.get("chosen") else "")) if facts else "-"
        secs = " / ".join(f"{by_side[s.label][task.id].duration_ms / 1000:.1f}" for s in sides
                          if task.id in by_side[s.label])
        print(f"| {task.id} | " + " | ".join(marks) + f" | {did} | {secs} |")
        rows.append({"id": task.id, "marks": marks, "agent": facts,
                     "replies": {s.label: by_side[s.label][task.id].reply[:1500] for s in sides
                                 if task.id in by_side[s.label]}})
    summary["rows"] = rows
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", nargs="+", default=["humaneval"], choices=SUITES)
    parser.add_argument("--limit", type=int, default=None, help="first N tasks of each suite")
    parser.add_argument("--ids", nargs="+", default=None, help="only these task ids (one suite)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--agent-args", nargs="*", default=[], help="setting=value overrides for the agent side")
    parser.add_argument("--only", choices=("direct", "agent"), default=None, help="run one side only")
    parser.add_argument("--json", type=Path, default=None, help="write the figures and replies here")
    parser.add_argument("--bank", type=Path, default=None,
                        help="add an agent side with a copy of this experience bank (worked examples)")
    parser.add_argument("--interleave", action="store_true",
                        help="load both sides at once and alternate per task (wall ratio robust to machine load)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    overrides = {key: coerce(key, raw) for key, _, raw in (item.partition("=") for item in args.agent_args)}
    suites = [(name, load_suite(name, limit=args.limit, ids=args.ids)) for name in args.suite]
    with tempfile.TemporaryDirectory() as tmp:
        common: dict[str, Any] = {"n_ctx": 8192, "log_level": "warning", "trajectory_durability": "none"}
        sides = []
        if args.only in (None, "direct"):
            direct = Settings.from_keys(home=Path(tmp) / "direct", router="always-fast", **common).validate()
            sides.append(Side("direct", direct))
        if args.only in (None, "agent"):
            agent = Settings.from_keys(
                home=Path(tmp) / "agent", router="always-agent", **{**common, **overrides}
            ).validate()
            sides.append(Side("agent", agent))
            if args.bank is not None:
                banked = Settings.from_keys(
                    home=Path(tmp) / "agent-bank", router="always-agent", **{**common, **overrides}
                ).validate()
                with ExperienceBank(args.bank) as source:
                    copied = source.copy_to(GhostHome(banked.home).experience_db)
                print(f"# agent+bank: {copied} worked examples from {args.bank}")
                sides.append(Side("agent+bank", banked))
        if args.interleave and len(sides) >= 2:
            asyncio.run(run_interleaved(sides, suites, args.timeout))
        else:
            for side in sides:
                asyncio.run(run_side(side, suites, args.timeout))
        print(f"\n# direct vs agent ({overrides or 'agent defaults'})")
        summaries = [report(name, tasks, sides) for name, tasks in suites]
    if args.json is not None:
        args.json.write_text(json.dumps({"agent_args": args.agent_args, "suites": summaries}, indent=1, default=str))


if __name__ == "__main__":
    main()
