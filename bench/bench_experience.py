"""The payoff of self-play: does a filled experience bank make the agent better on tasks it never practised?

    python bench/bench_experience.py --practice 8 --tasks 6
    python bench/bench_experience.py --upstream-url http://127.0.0.1:8080 --practice 16 --tasks 10 --json out.json
    python bench/bench_experience.py --holdout csv_file_average   # evaluate only on a template never practised
    ghost-agent selfplay run --home H --n 80    # then the bank that run filled:
    python bench/bench_experience.py --bank H/system/selfplay/experience.sqlite3 --tasks 40

1. Practice (seeds A): self-play turns on tasks drawn from the templates (minus `--holdout`), graded by the
   validators; every passing reply goes into a bank (`selfplay.practice.keep`, what phase 3 does). With
   `--bank` there is no practice here: the bank a real self-play run left (`ghost-agent selfplay run`, phase 3)
   is the filled one (a copy: the run's bank is left as it was).
2. Evaluation (seeds B, never practised; `--holdout` templates too): each task is answered three ways, in one
   run and interleaved (the order rotates per task, so a slow stretch of a shared machine hits every arm alike):
   `bare` — the backend directly, one call, the request as a person typed it (no agent turn at all);
   `empty` — the agent turn (the same in-process turn self-play runs) with an empty bank;
   `filled` — the same turn with the bank practice filled.
   Each reply is graded by the task's own check (code runs in our sandbox). The filled bank is restored from
   its bytes after practice before each task, so the credit and blame one evaluation turn leaves in it (the
   outcome finisher) never carry to the next: every task sees the bank practice left. The agent arms run as
   practice turns do, so an example with the very same request text is not shown (a template whose data sits
   in a workspace file can repeat its text across seeds: those evaluation tasks see only other examples).

Printed: practice pass rate and bank size; per arm the pass rate, seconds per task and, for `filled`, how many
turns were shown an example; per task the three verdicts. Default backend: the embedded model (as `serve`);
`--upstream-url` takes any OpenAI-compatible server. Slow on the embedded model (tens of seconds per turn on
2 cores): start small.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from ghost_agent.sandbox.base import SandboxBackend
from ghost_agent.selfplay.checks import CheckEnv, validate
from ghost_agent.selfplay.experience import ExperienceBank
from ghost_agent.selfplay.practice import grader, keep, session_for
from ghost_agent.selfplay.task import DIFFICULTIES, Task, generate
from ghost_agent.selfplay.templates import TEMPLATES
from ghost_agent.server import build_app
from ghost_agent.server.state import AppContext
from ghost_agent.settings import Settings

ARMS = ("bare", "empty", "filled")
EVAL_SEED_BASE = 1_000_000  # evaluation seeds: far from any practice seed


@dataclass
class Arm:
    name: str
    passed: int = 0
    total: int = 0
    seconds: float = 0.0
    shown: int = 0
    verdicts: dict[str, bool] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"passed": self.passed, "total": self.total,
                "pass_rate": round(self.passed / self.total, 3) if self.total else None,
                "s_per_task": round(self.seconds / self.total, 2) if self.total else None, "shown": self.shown}


def pick_tasks(rng: random.Random, n: int, names: list[str], seed_base: int, difficulty: int | None) -> list[Task]:
    """`n` tasks over the templates named, each with a seed of its own: the clusters in turn, and within a
    cluster its templates in turn, so 40 tasks over 8 clusters are 5 of each whatever the template counts."""
    clusters: dict[str, list[Any]] = {}
    for template in TEMPLATES:
        if template.name in names:
            clusters.setdefault(template.cluster, []).append(template)
    order = list(clusters.values())
    tasks = []
    for i in range(n):
        group = order[i % len(order)]
        template = group[(i // len(order)) % len(group)]
        level = difficulty if difficulty is not None else rng.choice(DIFFICULTIES)
        tasks.append(generate(template, seed_base + i, level))
    return tasks


def fake_pick(task: Task, reason: str) -> Any:
    return {"cluster": task.cluster, "template": task.template, "seed": task.seed, "difficulty": task.difficulty,
            "reason": reason}


async def practise_into(ctx: AppContext, sandbox: SandboxBackend, tasks: list[Task], bank: ExperienceBank) -> int:
    """The practice pass: one self-play turn per task, passing replies kept in `bank`. Returns the passes."""
    passed = 0
    for i, task in enumerate(tasks):
        t0 = time.perf_counter()
        turn = await ctx.practice_turn(task.prompt, session_id=session_for(task, 0), files=task.files,
                                       grade=grader(task, fake_pick(task, "bench"), 0, sandbox))
        ok = turn.grade is not None and turn.grade.outcome == "passed"
        if ok:
            passed += 1
            await keep(bank, task, turn)
        print(f"  practice {i + 1}/{len(tasks)} {task.id} {'PASS' if ok else 'fail'} "
              f"({time.perf_counter() - t0:.1f} s, bank {len(bank)})", flush=True)
    return passed


async def bare(ctx: AppContext, sandbox: SandboxBackend, task: Task, max_tokens: int) -> bool:
    """The backend directly: the request as typed, one call, graded by the task's check."""
    body: dict[str, Any] = {"max_tokens": max_tokens, "messages": [{"role": "user", "content": task.prompt}]}
    ctx.models.apply(body)  # the model name the agent turn's calls carry
    reply = await ctx.backend.complete(body)
    choice = (reply.get("choices") or [{}])[0]
    text = (choice.get("message") or {}).get("content") or ""
    env = CheckEnv(sandbox=sandbox, files=task.files, workspace=None)
    reward = await asyncio.to_thread(validate, task.check, text, env, finish_reason=choice.get("finish_reason"))
    return bool(reward.success)


async def agent(ctx: AppContext, sandbox: SandboxBackend, task: Task, arm: str) -> bool:
    turn = await ctx.practice_turn(task.prompt, session_id=f"bench-{arm}-{task.seed}-{task.difficulty}",
                                   files=task.files, grade=grader(task, fake_pick(task, f"bench-{arm}"), 0, sandbox))
    return turn.grade is not None and turn.grade.outcome == "passed"


async def run(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    values: dict[str, Any] = {"home": home, "watchdog": False, "log_level": "warning",
                              "trajectory_durability": "none", "experience_top_k": args.top_k}
    if args.upstream_url:
        values["upstream_url"] = args.upstream_url
    if args.router:
        values["router"] = args.router
    if args.local_model:
        values["local_model"] = args.local_model
    settings = Settings.from_keys(**values).validate()
    app = build_app(settings, configure_logs=False)
    ctx: AppContext = app.state.ctx
    rng = random.Random(args.seed)
    names = sorted({t.name for t in TEMPLATES if args.cluster is None or t.cluster == args.cluster})
    practised = [n for n in names if n not in args.holdout] or names
    evaluated = [n for n in names if n in args.holdout] if args.holdout_only else names
    async with app.router.lifespan_context(app):
        try:
            sandbox = await ctx.ready_to_practise(backend_timeout_s=900)
        except RuntimeError as exc:
            raise SystemExit(str(exc)) from None
        filled_path = home / "bench" / "filled.sqlite3"
        filled = ExperienceBank(filled_path)
        empty = ExperienceBank(home / "bench" / "empty.sqlite3")
        services = ctx.agent_services
        services.experience = filled
        t0 = time.perf_counter()
        if args.bank is not None:
            filled.close()
            with ExperienceBank(args.bank) as source:
                practice_passed = practice_tasks = source.copy_to(filled_path)
            print(f"# bank: {practice_passed} examples from {args.bank}", flush=True)
        else:
            practice_tasks = args.practice
            print(f"# practice: {args.practice} tasks over {', '.join(practised)}", flush=True)
            practice_passed = await practise_into(ctx, sandbox, pick_tasks(rng, args.practice, practised,
                                                                           args.seed * 1000, args.difficulty), filled)
            filled.close()
        practice_s = time.perf_counter() - t0
        frozen = filled_path.read_bytes()  # WAL checkpointed on close: the bank as practice left it
        arms = {name: Arm(name) for name in ARMS}
        tasks = pick_tasks(rng, args.tasks, evaluated, EVAL_SEED_BASE + args.seed * 1000, args.difficulty)
        print(f"# evaluation: {len(tasks)} fresh tasks over {', '.join(evaluated)}"
              + (f", from task {args.from_task + 1}" if args.from_task else ""), flush=True)
        tasks = tasks[args.from_task:]  # the same list (seeded): a run cut short goes on where it stopped
        for i, task in enumerate(tasks, args.from_task):
            order = ARMS[i % 3:] + ARMS[: i % 3]
            for name in order:
                arm = arms[name]
                t1 = time.perf_counter()
                if name == "bare":
                    ok = await bare(ctx, sandbox, task, settings.agent.max_tokens)
                else:
                    bank = empty
                    if name == "filled":
                        filled_path.write_bytes(frozen)  # the outcome finisher's credit and blame do not carry over
                        bank = ExperienceBank(filled_path)
                    services.experience = bank
                    before = bank.stats()["shown"]
                    ok = await agent(ctx, sandbox, task, name)
                    arm.shown += int(bank.stats()["shown"] > before)
                    if name == "filled":
                        bank.close()
                arm.seconds += time.perf_counter() - t1
                arm.total += 1
                arm.passed += ok
                arm.verdicts[task.id] = ok
            print(f"  {i + 1}/{args.tasks} {task.id}: " + "  ".join(
                f"{n} {'PASS' if arms[n].verdicts[task.id] else 'fail'}" for n in ARMS), flush=True)
        services.experience = None
        empty.close()
    return {
        "backend": settings.backend.upstream_url or "embedded", "practice": {
            "tasks": practice_tasks, "passed": practice_passed, "from": str(args.bank or "practice"),
            "seconds": round(practice_s, 1),
            "bank": len(ExperienceBank(filled_path))},
        "arms": {name: arm.summary() for name, arm in arms.items()},
        "tasks": {t.id: {name: arms[name].verdicts[t.id] for name in ARMS} for t in tasks},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream-url", default=None, help="an OpenAI-compatible server (default: embedded)")
    parser.add_argument("--local-model", default=None, help="the embedded model (default: the daemon's)")
    parser.add_argument("--practice", type=int, default=8, help="practice tasks (seeds A)")
    parser.add_argument("--tasks", type=int, default=6, help="evaluation tasks (fresh seeds B)")
    parser.add_argument("--cluster", default=None, help="only this cluster's templates")
    parser.add_argument("--holdout", nargs="*", default=[], help="templates never practised")
    parser.add_argument("--holdout-only", action="store_true", help="evaluate on the --holdout templates only")
    parser.add_argument("--difficulty", type=int, choices=DIFFICULTIES, default=None, help="default: drawn")
    parser.add_argument("--top-k", type=int, default=2, help="experience_top_k of the agent turn")
    parser.add_argument("--router", default=None, help="router setting for the agent turns (default: the daemon's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--from-task", type=int, default=0,
                        help="skip the first N evaluation tasks (go on with a run that was cut short)")
    parser.add_argument("--bank", type=Path, default=None,
                        help="the filled bank: this experience bank (a self-play run's), not a practice pass here")
    parser.add_argument("--keep-home", type=Path, default=None, help="use (and keep) this home instead of a temp one")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    tmp = Path(tempfile.mkdtemp(prefix="bench-experience-"))
    home = args.keep_home or tmp / "home"
    try:
        result = asyncio.run(run(args, home))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    practice = result["practice"]
    if args.bank is not None:
        print(f"\n# filled bank: {practice['bank']} examples from {args.bank} ({result['backend']})")
    else:
        print(f"\n# practice: {practice['passed']}/{practice['tasks']} passed in {practice['seconds']} s; "
              f"bank {practice['bank']} examples ({result['backend']})")
    print(f"{'arm':<8} {'pass':>9} {'rate':>6} {'s/task':>7} {'shown':>6}")
    for name, s in result["arms"].items():
        rate = "-" if s["pass_rate"] is None else f"{100 * s['pass_rate']:.0f}%"
        print(f"{name:<8} {s['passed']:>4}/{s['total']:<4} {rate:>6} {s['s_per_task'] or 0:>7.1f} {s['shown']:>6}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
