"""Crash safety: a child process appends in a loop and is SIGKILLed mid-stream. Every record whose append
returned is read back, at most one torn line is skipped, and nothing raises -- for every durability policy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.trajectories.trajhelp import all_files, make_traj, raw_lines

CHILD = r"""
import sys
from pathlib import Path
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Step, Trajectory

root, durability, big = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "big"
collector = TrajectoryCollector(root, durability=durability)
i = 0
while True:
    size = (i % 7) * (150_000 if big else 1_500)
    traj = Trajectory(
        id=f"{i:032x}", session_id="crash", ts="2026-04-26T10:00:00+00:00", user_request=f"request {i}",
        steps=[Step(i=0, tool_name="python", tool_args={"code": "print(1)"}, result_preview="x" * size)],
    )
    collector.append(traj)
    sys.stdout.write(f"{i}\n")  # acknowledged: append returned
    sys.stdout.flush()
    i += 1
"""


def run_and_kill(root: Path, durability: str, *, big: bool, acks_before_kill: int) -> int:
    """Start the child, SIGKILL it after `acks_before_kill` acknowledged appends; the last acknowledged index."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), durability, "big" if big else "small"], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    last = -1
    deadline = time.monotonic() + 60
    try:
        while last + 1 < acks_before_kill:
            line = proc.stdout.readline()
            assert line, f"child died early (rc={proc.poll()})"
            last = int(line)
            assert time.monotonic() < deadline, "child too slow"
        os.kill(proc.pid, signal.SIGKILL)
        for line in proc.stdout:  # acknowledgements already in the pipe
            last = int(line)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return last


@pytest.mark.parametrize(("durability", "big", "acks"), [
    ("batch", False, 400),
    ("none", False, 400),
    ("fsync", False, 60),
    ("batch", True, 40),  # ~0.5 MB records: a kill inside one write is likely to tear it
])
def test_sigkill_loses_no_acknowledged_record(tmp_path: Path, durability: str, big: bool, acks: int) -> None:
    root = tmp_path / "trajectories"
    last_ack = run_and_kill(root, durability, big=big, acks_before_kill=acks)

    reader = TrajectoryCollector(root)
    with capture_logs():
        indices = [int(t.id, 16) for t in reader.iter_trajectories()]  # never raises
    assert indices == list(range(len(indices)))  # in order, no gaps, no duplicates
    assert last_ack < len(indices) <= last_ack + 2  # every acknowledged record; at most the one in flight
    assert reader.corrupt_lines <= 1
    (path,) = all_files(root)
    assert len(raw_lines(path)) - len(indices) == reader.corrupt_lines

    # The store stays appendable: a torn tail is closed off, the next record is whole.
    after = make_traj("2026-04-26T11:00:00+00:00", session="crash")
    reader.append(after)
    reader.close()
    got = list(TrajectoryCollector(root).iter_trajectories())
    assert len(got) == len(indices) + 1 and got[-1].id == after.id


WRITER = r"""
import sys
from pathlib import Path
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Step, Trajectory

root, tag = Path(sys.argv[1]), sys.argv[2]
collector = TrajectoryCollector(root)
for i in range(300):
    collector.append(Trajectory(
        id=f"{tag}{i:031x}", session_id="shared", ts="2026-04-26T10:00:00+00:00",
        steps=[Step(i=0, result_preview=tag * ((i % 5) * 20_000))],  # up to 80 KB: many pages per write
    ))
collector.close()
"""


def test_two_processes_share_a_file_without_interleaving(tmp_path: Path) -> None:
    root = tmp_path / "trajectories"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), tag]) for tag in ("a", "b")]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    reader = TrajectoryCollector(root)
    ids = [t.id for t in reader.iter_trajectories()]
    assert reader.corrupt_lines == 0 and len(ids) == 600
    assert sorted(ids) == sorted(f"{tag}{i:031x}" for tag in ("a", "b") for i in range(300))
    (path,) = all_files(root)
    assert len(raw_lines(path)) == 600
