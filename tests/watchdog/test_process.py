"""`run_in_process`: a job in a spawned child — its result, its failure, and cancellation that kills it."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

import pytest

from ghost_agent.watchdog.process import ProcessJobError, run_in_process


def pid_and_square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def explode(message: str) -> None:
    raise ValueError(message)


def write_pid_then_sleep(path: str) -> None:
    Path(path).write_text(str(os.getpid()))
    time.sleep(60)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_job_runs_in_another_process_and_returns_its_result() -> None:
    pid, square = await run_in_process(pid_and_square, 12)
    assert square == 144 and pid != os.getpid()


async def test_a_failing_job_is_an_error_naming_the_exception() -> None:
    with pytest.raises(ProcessJobError, match="ValueError: no luck"):
        await run_in_process(explode, "no luck")


async def test_a_child_that_dies_without_answering_is_an_error() -> None:
    with pytest.raises(ProcessJobError, match="exited with code 3"):
        await run_in_process(os._exit, 3)


async def test_cancelling_kills_the_child_promptly(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    task = asyncio.ensure_future(run_in_process(write_pid_then_sleep, str(marker)))
    deadline = time.monotonic() + 30
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "the child never started"
        await asyncio.sleep(0.01)
    pid = int(marker.read_text())
    t0 = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.perf_counter() - t0 < 5.0 and not alive(pid)


async def test_the_loop_stays_free_while_the_child_starts_and_works() -> None:
    lags: list[float] = []
    job = asyncio.ensure_future(run_in_process(pid_and_square, 3))
    while not job.done():
        t0 = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - t0 - 0.001)
    await job
    # The loop kept ticking all along (the machine is shared: judge the median, not one descheduled tick).
    assert len(lags) > 10 and statistics.median(lags) < 0.005
