"""Builders shared by the trajectory-store tests (real files only, no mocks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ghost_agent.trajectories.collector import TrajectoryCollector, session_file_name
from ghost_agent.trajectories.record import Outcome, Step, Trajectory


def make_traj(
    ts: str = "2026-04-26T10:00:00+00:00",
    *,
    session: str = "s1",
    source: str = "chat",
    request: str = "list the files in the workspace",
    outcome: Outcome = Outcome.UNKNOWN,
    steps: int = 2,
    payload: str = "",
    response: str = "Here are the files.",
    **kwargs: Any,
) -> Trajectory:
    """A realistic small trajectory; `payload` pads a step result (to make big records)."""
    return Trajectory(
        session_id=session,
        ts=ts,
        source=source,
        user_request=request,
        steps=[
            Step(i=i, description=f"step {i}", tool_name="bash", tool_args={"cmd": f"ls -la {i}"},
                 result_preview=("ok " + payload) if i == 0 else "ok", duration_ms=12.5)
            for i in range(steps)
        ],
        final_response=response,
        outcome=outcome,
        **kwargs,
    )


def file_of(collector: TrajectoryCollector, traj: Trajectory) -> Path:
    """Where `traj` is filed (its session id contains no secret in these tests)."""
    return collector.root / traj.day / session_file_name(traj.session_id)


def raw_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def raw_records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in raw_lines(path)]


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []
