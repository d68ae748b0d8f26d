"""Synthetic trajectories whose success depends on known step features (the PRM's learning check).

Each trajectory is a task of one kind (code, files, facts) with 1–5 tool calls. Every step has a hidden
quality that depends only on what the PRM can see at decision time:

- the right tool family for the task kind (heavyweight tools for code, file tools for files, memory/web for
  facts) is good; the wrong family is bad (with `task_specific_tools=False` the same tools are good for
  every task, which removes the one effect a linear model cannot represent exactly);
- re-firing a tool that already failed this turn is very bad;
- a step that names a file path in its arguments is good on file tasks;
- a long plan (many steps so far) is a little worse each step.

A step fails (ok=False) with probability 1 − quality, and the trajectory passes with probability equal to the
product of its step qualities, so the terminal outcome is a noisy function of features the PRM extracts.
Each step keeps its hidden quality in `extra["synth_quality"]` (features never read it), so a benchmark can
ask the real question: does a PRM trained only on noisy terminal outcomes rank truly good steps above bad
ones? Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ghost_agent.trajectories.record import Outcome, Source, Step, Trajectory

KINDS = {
    "code": (
        "Write a python function that parses the log and counts errors",
        "Compute the sha256 of the string hello and print it",
        "Run the unit tests and fix the failing one",
    ),
    "files": (
        "List the files in the workspace and show the largest",
        "Read config.yaml and tell me the port",
        "Find every csv file under data/ and count the rows",
    ),
    "facts": (
        "What did we decide about the retry policy last week?",
        "Who maintains the billing service?",
        "When is the next release planned?",
    ),
}
GOOD_TOOLS = {"code": ("python", "bash"), "files": ("file_system", "bash"), "facts": ("memory_search", "web_search")}
ALL_TOOLS = ("python", "bash", "file_system", "memory_search", "web_search", "custom_tool")


@dataclass(frozen=True)
class SynthConfig:
    """Knobs of the generator (defaults are what the benchmark reports)."""

    good_quality: float = 0.93
    bad_quality: float = 0.45
    refire_failed_quality: float = 0.15
    path_bonus: float = 0.05
    per_step_decay: float = 0.03
    p_good_tool: float = 0.6
    # True: the right tool family depends on the task kind (an interaction a linear PRM can only partly
    # represent); False: the same tools are good for every task (what a linear model can learn exactly).
    task_specific_tools: bool = True


UNIVERSAL_GOOD_TOOLS = ("python", "bash", "file_system")


def _good_tools(kind: str, cfg: SynthConfig) -> tuple[str, ...]:
    return GOOD_TOOLS[kind] if cfg.task_specific_tools else UNIVERSAL_GOOD_TOOLS


def _quality(kind: str, tool: str, steps_so_far: int, failed: set[str], has_path: bool, cfg: SynthConfig) -> float:
    if tool in failed:
        q = cfg.refire_failed_quality
    elif tool in _good_tools(kind, cfg):
        q = cfg.good_quality
    else:
        q = cfg.bad_quality
    if has_path and kind == "files":
        q += cfg.path_bonus
    q -= cfg.per_step_decay * steps_so_far
    return min(0.99, max(0.01, q))


def make_trajectory(rng: random.Random, cfg: SynthConfig = SynthConfig()) -> Trajectory:
    """One synthetic trajectory with a PASSED/FAILED outcome drawn from its steps' hidden qualities."""
    kind = rng.choice(sorted(KINDS))
    request = rng.choice(KINDS[kind])
    n = rng.randint(1, 5)
    steps: list[Step] = []
    failed: set[str] = set()
    p_success = 1.0
    for i in range(n):
        if failed and rng.random() < 0.35:
            tool = rng.choice(sorted(failed))  # the classic mistake: try the failing tool again
        elif rng.random() < cfg.p_good_tool:
            tool = rng.choice(_good_tools(kind, cfg))
        else:
            tool = rng.choice(ALL_TOOLS)
        has_path = rng.random() < 0.5
        args = {"path": f"data/file_{i}.csv"} if has_path else {"query": f"attempt {i}"}
        q = _quality(kind, tool, i, failed, has_path, cfg)
        ok = rng.random() < q
        p_success *= q
        steps.append(
            Step(
                i=i,
                description=f"use {tool} for step {i}",
                tool_name=tool,
                tool_args=args,
                ok=ok,
                error=None if ok else f"{tool} failed",
                # the hidden quality is for scoring the benchmark only: the PRM never reads it
                extra={"prm_state": {"pending_count": 0, "plan_depth": 1}, "synth_quality": q},
            )
        )
        if not ok:
            failed.add(tool)
    outcome = Outcome.PASSED if rng.random() < p_success else Outcome.FAILED
    return Trajectory(
        source=Source.SELF_PLAY.value,
        user_request=request,
        steps=steps,
        final_response="done",
        outcome=outcome,
        cluster=kind,
    )


def make_corpus(n: int, seed: int, cfg: SynthConfig = SynthConfig()) -> list[Trajectory]:
    """`n` synthetic trajectories from one seeded generator."""
    rng = random.Random(seed)
    return [make_trajectory(rng, cfg) for _ in range(n)]
