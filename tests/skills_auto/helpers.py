"""Trajectories with tool steps, written to a real home's store (and its corrections sidecar)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ghost_agent.home import GhostHome
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory

Call = tuple[str, dict[str, Any]]

LIST: Call = ("file_system", {"action": "list", "path": "."})
READ: Call = ("file_system", {"action": "read", "path": "access.log"})
GREP: Call = ("bash", {"command": "grep -c ERROR access.log | tail -1"})
PANDAS: Call = ("python", {"code": "import pandas as pd\nprint(pd.read_csv('x.csv').shape)"})
LOG_TASK = ("file_system(action=list, path)", "file_system(action=read, path)", "bash(command=grep|tail)")


def turn(calls: Sequence[Call], outcome: Outcome, request: str = "count the error lines in access.log", *,
         source: str = "chat", session: str = "s1", ts: str | None = None, kind: str | None = None,
         route: str = "agent") -> Trajectory:
    """A recorded turn that ran `calls` (all successful) and ended with `outcome`."""
    steps = [Step(i=i, description=name, tool_name=name, tool_args=dict(args), ok=True, result_preview="ok")
             for i, (name, args) in enumerate(calls)]
    extra: dict[str, Any] = {"agent": {"kind": kind}} if kind else {}
    traj = Trajectory(session_id=session, source=source, user_request=request, steps=steps, outcome=outcome,
                      router={"decision": route, "p": None, "model": None}, extra=extra)
    if ts is not None:
        traj.ts = ts
    return traj


def write(home: Path, trajectories: Iterable[Trajectory],
          corrections: Iterable[tuple[str, Outcome, str]] = ()) -> list[str]:
    """Append to the home's trajectory store, then the corrections (id, outcome, source); returns the ids."""
    ids = []
    with TrajectoryCollector(GhostHome(home).trajectories) as collector:
        for traj in trajectories:
            collector.append(traj)
            ids.append(traj.id)
        for trajectory_id, outcome, source in corrections:
            collector.update_outcome(trajectory_id, outcome, "test", source=source)
    return ids
