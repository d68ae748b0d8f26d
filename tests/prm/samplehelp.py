"""Builders shared by the PRM label / trainer / CLI tests: real Trajectory and Step dataclasses only."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ghost_agent.prm.model import StepValueModel
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory

TS = "2026-04-26T10:00:00+00:00"
Call = str | tuple[str, bool]  # a tool name (ok) or (tool name, ok)


def step(
    i: int,
    tool: str | None = "bash",
    *,
    ok: bool = True,
    args: Any = None,
    description: str | None = None,
    prm_state: Any = None,
) -> Step:
    """One recorded step; `prm_state` is what the tool loop recorded at decision time (None = nothing)."""
    extra = {} if prm_state is None else {"prm_state": prm_state}
    return Step(
        i=i,
        description=f"call {tool} ({i})" if description is None else description,
        tool_name=tool,
        tool_args={"cmd": f"echo {i}"} if args is None else args,
        ok=ok,
        error=None if ok else f"{tool} failed",
        extra=extra,
    )


def traj(
    outcome: Outcome = Outcome.PASSED,
    calls: Sequence[Call] = ("bash", "bash"),
    *,
    request: str = "list the files in the workspace",
    ts: str = TS,
    source: str = "chat",
    **kwargs: Any,
) -> Trajectory:
    """A trajectory whose steps call `calls` in order."""
    steps = []
    for i, call in enumerate(calls):
        name, ok = (call, True) if isinstance(call, str) else call
        steps.append(step(i, name, ok=ok))
    return Trajectory(ts=ts, source=source, user_request=request, steps=steps, final_response="done",
                      outcome=outcome, **kwargs)


def balanced(n_pass: int = 6, n_fail: int = 6, *, ts: str = TS) -> list[Trajectory]:
    """A corpus the floors accept: passes use python cleanly, failures re-fire a failing bash."""
    good = [traj(Outcome.PASSED, ("python", "file_system"), request=f"compute thing {k}", ts=ts)
            for k in range(n_pass)]
    bad = [traj(Outcome.FAILED, (("bash", False), ("bash", False)), request=f"fetch page {k}", ts=ts)
           for k in range(n_fail)]
    return [t for pair in zip(good, bad, strict=False) for t in pair] + good[n_fail:] + bad[n_pass:]


def store(collector: TrajectoryCollector, trajectories: Sequence[Trajectory]) -> list[Trajectory]:
    """Append every trajectory to the real store and flush; returns them."""
    for t in trajectories:
        collector.append(t)
    collector.flush()
    return list(trajectories)


def fitted(model: StepValueModel | None) -> tuple[StepValueModel, np.ndarray]:
    """The model (asserted present and fitted) and its weights."""
    assert model is not None and model.weights is not None
    return model, model.weights


TOOLS = ("python", "bash", "file_system", "web_search", "memory_search")


def refire_world(rng: random.Random) -> tuple[Trajectory, list[bool]]:
    """A synthetic trajectory where success depends on a known feature, with each step's ground truth.

    Steps fail at random; a step that re-fires a tool which already failed this turn is a bad step
    (ground truth False) and dooms the trajectory (FAILED); otherwise the trajectory passes with p = 0.9.
    """
    n = rng.randint(2, 5)
    failed: set[str] = set()
    steps: list[Step] = []
    truth: list[bool] = []
    doomed = False
    for i in range(n):
        if failed and rng.random() < 0.5:
            tool = rng.choice(sorted(failed))
        else:
            tool = rng.choice([t for t in TOOLS if t not in failed] or list(TOOLS))
        refire = tool in failed
        doomed = doomed or refire
        ok = rng.random() < (0.2 if refire else 0.75)
        recorded = {"pending_count": 0, "plan_depth": 1}
        steps.append(step(i, tool, ok=ok, args={"query": f"attempt {i}"}, prm_state=recorded))
        truth.append(not refire)
        if not ok:
            failed.add(tool)
    passed = not doomed and rng.random() < 0.9
    t = Trajectory(ts=TS, source="self_play", user_request=rng.choice(["sum the csv", "find the bug", "who owns x"]),
                   steps=steps, outcome=Outcome.PASSED if passed else Outcome.FAILED)
    return t, truth
