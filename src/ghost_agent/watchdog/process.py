"""Run one job in a child process: CPU-bound work off the event loop AND out of its GIL.

A worker thread (`PhaseContext.offload`) keeps blocking I/O off the loop, but pure-Python CPU work in a thread
still holds the GIL in 5 ms slices, so the loop — every request the daemon serves — waits behind it. A fit
over thousands of trajectories (feature extraction is Python) belongs in its own process.

`run_in_process(fn, arg, nice=N)` starts `python -m ghost_agent.watchdog.job_worker` (a fresh interpreter: never a
fork of the daemon, whose threads may hold locks a forked copy would inherit held), which lowers its own CPU
priority by N first thing, then imports `fn`'s module and returns `fn(arg)`. `fn` is passed by name
(`module:qualname`, so a module-level function), `arg` and the result by pickle over the child's stdin and
stdout. Not `multiprocessing`: its spawn re-imports the daemon's `__main__` (the whole CLI and server) in the
child before the job can lower its priority.

Starting a process and waiting for it happen in a worker thread (a start costs 1–80 ms on a busy machine:
too long to hold the loop). Cancelling the caller (shutdown mid-phase) terminates the child and waits for
it, so nothing a phase started outlives the lifespan. A child that raises, dies or is killed is
`ProcessJobError` with what is known (the exception, or the exit code and its stderr's last line).
"""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

A = TypeVar("A")
R = TypeVar("R")

WAIT_TIMEOUT_S = 5.0


class ProcessJobError(RuntimeError):
    """The child raised (the message names the exception) or exited without an answer (its exit code)."""


class _Launch:
    """One child's life, driven from worker threads: start and wait for the answer, or abort.

    `abort` and the start hold one lock, so an abort that comes before the start means the child never runs,
    and one that comes after stops it.
    """

    def __init__(self, command: list[str], payload: bytes) -> None:
        self.command = command
        self.payload = payload
        self.process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._aborted = False

    def run(self) -> tuple[bool, Any, str]:
        """Start the child, feed it the job, block until it answers or dies: (ok, result or message, stderr)."""
        with self._lock:
            if self._aborted:
                return False, None, ""
            self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                close_fds=True,
            )
        out, err = self.process.communicate(self.payload)
        tail = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
        if self.process.returncode != 0 or not out:
            return False, None, tail[0] if tail else ""
        ok, result = pickle.loads(out)
        return bool(ok), result, ""

    def abort(self) -> None:
        """Never start the child, or terminate (then kill) it and reap it."""
        with self._lock:
            self._aborted = True
            process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(WAIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(WAIT_TIMEOUT_S)


async def run_in_process(fn: Callable[[A], R], arg: A, *, name: str = "ghost-job", nice: int = 0) -> R:
    """`fn(arg)` in a child process at `nice` lower priority; its result, or `ProcessJobError`.

    Cancellation kills the child (and waits for it) before re-raising.
    """
    ref = f"{fn.__module__}:{fn.__qualname__}"
    payload = pickle.dumps((list(sys.path), pickle.dumps(arg)))
    command = [sys.executable, "-m", "ghost_agent.watchdog.job_worker", ref, str(int(nice))]
    launch = _Launch(command, payload)
    waiting = asyncio.ensure_future(asyncio.to_thread(launch.run))
    try:
        ok, result, stderr = await asyncio.shield(waiting)
    except asyncio.CancelledError:
        await asyncio.to_thread(launch.abort)
        await asyncio.wait({waiting})  # the child is gone (or never started): communicate() returned
        raise
    if ok:
        answer: R = result
        return answer
    if result is None:
        code = None if launch.process is None else launch.process.returncode
        raise ProcessJobError(f"{name} exited with code {code} without answering" + (f": {stderr}" if stderr else ""))
    raise ProcessJobError(f"{name} failed: {result}")


__all__ = ["ProcessJobError", "run_in_process"]
