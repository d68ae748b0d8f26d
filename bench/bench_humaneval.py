"""HumanEval pass@1 on the embedded model: the model called directly vs through the agent turn.

    python bench/bench_humaneval.py [--limit 40] [--timeout 600] [--agent-args mcts=False ...]

Both runs go through the daemon app in-process (the real embedded Qwen2.5-Coder-1.5B, greedy decoding):
"direct" forces the fast path (one model call, no agent: the model's own pass@1), "agent" forces the agent
turn (tool loop in the sandbox, verifier) with the shipped defaults unless overridden. Completions are graded
by the suite's code_tests verifier in our sandbox. Prints pass@1 both ways, wall times, and for every problem
where they disagree what the agent did (its tool calls, from the trajectory). Slow: tens of minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import structlog

from ghost_agent.distill.collector import TrajectoryCollector
from ghost_agent.eval.run import run_suite
from ghost_agent.eval.runners import HttpRunner
from ghost_agent.eval.suites import load_suite
from ghost_agent.eval.task import SuiteResult
from ghost_agent.home import GhostHome
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.server import build_app
from ghost_agent.settings import Settings, coerce


async def run_one(
    label: str, settings: Settings, limit: int | None, timeout: float, ids: list[str] | None = None
) -> tuple[SuiteResult, float]:
    app = build_app(settings, configure_logs=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        runner = HttpRunner("http://127.0.0.1:8000", timeout_s=timeout, transport=transport)
        tasks = load_suite("humaneval", limit=limit, ids=ids)
        t0 = time.perf_counter()

        def progress(outcome: Any, done: int, total: int) -> None:
            mark = "pass" if outcome.passed else "FAIL"
            print(f"  [{label}] {done}/{total} {outcome.task_id} {mark} ({outcome.duration_ms / 1000:.1f} s)",
                  flush=True)

        result = await run_suite(tasks, runner, per_task_timeout_s=timeout, progress=progress,
                                 sandbox=get_sandbox(settings))
        wall = time.perf_counter() - t0
        await runner.aclose()
    return result, wall


def tools_used(settings: Settings, trajectory_id: str | None) -> str:
    if not trajectory_id:
        return "?"
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        traj = collector.get(trajectory_id)
    if traj is None:
        return "?"
    steps = ", ".join(f"{s.tool_name}{'' if s.ok else '(failed)'}" for s in traj.steps) or "no tools"
    verdict = (traj.verifier or {}).get("verdict", "-")
    return f"{steps}; verifier {verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--agent-args", nargs="*", default=[], help="setting=value overrides for the agent run")
    parser.add_argument("--ids", nargs="+", default=None, help="only these problems (instead of --limit)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    overrides = {}
    for item in args.agent_args:
        key, _, raw = item.partition("=")
        overrides[key] = coerce(key, raw)
    with tempfile.TemporaryDirectory() as tmp:
        common: dict[str, Any] = {"n_ctx": 8192, "log_level": "warning", "trajectory_durability": "none"}
        direct_settings = Settings(home=Path(tmp) / "direct", router="always-fast", **common).validate()
        agent_settings = Settings(home=Path(tmp) / "agent", router="always-agent", **{**common, **overrides})
        agent_settings.validate()
        limit = None if args.ids else args.limit
        direct, direct_wall = asyncio.run(run_one("direct", direct_settings, limit, args.timeout, args.ids))
        agent, agent_wall = asyncio.run(run_one("agent", agent_settings, limit, args.timeout, args.ids))
        scope = f"problems {' '.join(args.ids)}" if args.ids else f"first {args.limit} problems"
        print(f"# HumanEval, {scope}, embedded qwen2.5-coder-1.5b, greedy (noisy shared machine)")
        print(f"direct (fast path, one call): pass@1 {direct.pass_rate:.3f} ({sum(o.passed for o in direct.outcomes)}"
              f"/{len(direct.outcomes)}), wall {direct_wall:.0f} s")
        print(f"agent turn ({overrides or 'defaults'}): pass@1 {agent.pass_rate:.3f} "
              f"({sum(o.passed for o in agent.outcomes)}/{len(agent.outcomes)}), wall {agent_wall:.0f} s")
        by_id = {o.task_id: o for o in direct.outcomes}
        for o in agent.outcomes:
            d = by_id[o.task_id]
            if o.passed != d.passed:
                who = "agent only" if o.passed else "direct only"
                print(f"  {o.task_id}: passes {who}; agent did: {tools_used(agent_settings, o.trajectory_id)}")


if __name__ == "__main__":
    main()
