"""Process machinery shared by the sandbox backends: spawn with limits, capture capped output, kill the tree.

`run_process` starts one program in its own session, enters it into a per-execution cgroup (v1 memory and
pids, when writable) and applies rlimits before it execs (it waits behind a shim, see SHIM), feeds stdin,
reads stdout and stderr concurrently with a selector (keeping at most `max_output_bytes` per stream, draining
the rest unstored), and ends the execution as a whole: at the deadline, when a workspace guard finds the
workspace over its budget (`quota.py`), or as soon as the main process exits, everything left in its process
group and its cgroup is SIGKILLed, so no background or double-forked grandchild outlives it.
OOM is read from the cgroup's `memory.oom_control` counter, or recognised as an allocation refused under
RLIMIT_AS (a MemoryError / ENOMEM message on stderr).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ghost_agent.logging import get_logger
from ghost_agent.sandbox.base import TRUNCATION_MARKER, ExecLimits, ExecResult, SandboxError
from ghost_agent.sandbox.cgroups import ExecCgroup
from ghost_agent.sandbox.quota import WorkspaceGuard

log = get_logger("sandbox")

NOBODY = 65534  # the uid/gid sandboxed code runs as when we can pick one (root daemon)

# RLIMIT_AS counts address space, not memory in use: the interpreter with numpy and pandas maps ~160 MB before
# the program allocates anything (measured: VmSize 157 MB with one BLAS thread, RSS 69 MB). The address-space
# limit is therefore memory_mb + this overhead. With a memory cgroup the cgroup is the real (resident) limit
# and RLIMIT_AS only a backstop against runaway reservations; without one this is the limit, and it says so.
AS_OVERHEAD_MB = 256

# After the main process exits (or is killed), how long to keep draining pipes that something still holds.
DRAIN_GRACE_S = 1.0
_READ_CHUNK = 64 * 1024
_STDIN_CHUNK = 64 * 1024

# An allocation refused under RLIMIT_AS shows up as one of these on stderr (Python, numpy, C++, bash, libc).
_OOM_TEXT = re.compile(
    r"\bMemoryError\b|Unable to allocate|Cannot allocate memory|std::bad_alloc|xmalloc: cannot allocate"
)
_SIGNAL_NOTES = {
    signal.SIGXCPU: "killed at the CPU-time limit (RLIMIT_CPU, SIGXCPU)",
    signal.SIGXFSZ: "killed for writing past the file-size limit (RLIMIT_FSIZE, SIGXFSZ)",
}


@dataclass(frozen=True)
class Rlimit:
    """One resource limit (soft, hard), applied to the child before it execs the program."""

    resource: int
    soft: int
    hard: int


def rlimits_for(limits: ExecLimits, *, nproc: bool) -> list[Rlimit]:
    """The rlimits one execution gets.

    AS = memory_mb + AS_OVERHEAD_MB; CPU = the timeout rounded up plus one second (SIGXCPU), hard one later
    (SIGKILL) - a backstop, the wall-clock deadline kills first; FSIZE, NOFILE from `limits`; no core dumps.
    RLIMIT_NPROC is per *uid*, not per execution: every sandbox runs as 65534 at once, so it is only set
    (`nproc=True`) when no pids cgroup gives a per-execution limit, and then caps all concurrent executions
    together at `max_procs` - tighter than asked, never looser.
    """
    mib = 1024 * 1024
    cpu = math.ceil(limits.timeout_s) + 1
    address_space = (limits.memory_mb + AS_OVERHEAD_MB) * mib
    out = [
        Rlimit(resource.RLIMIT_AS, address_space, address_space),
        Rlimit(resource.RLIMIT_CPU, cpu, cpu + 1),
        Rlimit(resource.RLIMIT_FSIZE, limits.max_file_mb * mib, limits.max_file_mb * mib),
        Rlimit(resource.RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files),
        Rlimit(resource.RLIMIT_CORE, 0, 0),
    ]
    if nproc:
        out.append(Rlimit(resource.RLIMIT_NPROC, limits.max_procs, limits.max_procs))
    return out


# The program starts behind this shim, blocked on the first line of its stdin. Meanwhile the parent applies
# the rlimits (prlimit) and moves it into the cgroup, by pid; only then does it send the newline that lets it
# exec. This keeps subprocess on its vfork path: a preexec_fn would force a real fork(), whose page-table copy
# grows with the daemon's resident memory (measured: 51 ms at +1 GB, 170 ms at +3 GB; a loaded model is GBs)
# against ~1 ms for the shim. POSIX `read` consumes stdin byte by byte up to the newline, so the program's own
# stdin starts right after it.
SHIM = ("/bin/sh", "-c", 'read -r _ || exit 125; exec "$@"', "ghost-sandbox")


def _confine(pid: int, rlimits: Sequence[Rlimit], cgroup: ExecCgroup | None) -> None:
    """Apply rlimits to the (blocked) shim and move it into the cgroup; its exec and all it starts inherit
    both. A limit is never raised above what the daemon itself may use (the hard limit we inherited)."""
    if cgroup is not None:
        cgroup.add(pid)
    for lim in rlimits:
        _, current_hard = resource.getrlimit(lim.resource)
        hard = lim.hard if current_hard == resource.RLIM_INFINITY else min(lim.hard, current_hard)
        resource.prlimit(pid, lim.resource, (min(lim.soft, hard), hard))


class _Capped:
    """One output stream: keeps the first `limit` bytes, counts (and discards) the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.dropped += max(0, len(data) - max(room, 0))

    def text(self) -> str:
        out = self.kept.decode("utf-8", errors="replace")
        return out + TRUNCATION_MARKER.format(dropped=self.dropped) if self.dropped else out


def _kill_tree(proc: subprocess.Popen[bytes], cgroup: ExecCgroup | None) -> None:
    """SIGKILL the main process, its process group (= its session: started with setsid) and the cgroup.

    Called before the main process is reaped, so its pid - the group id - cannot have been reused.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    if cgroup is not None:
        cgroup.kill_all()


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # kernel < 5.3: fall back to polling
        return None


def _pump(
    proc: subprocess.Popen[bytes],
    stdin: bytes,
    limits: ExecLimits,
    cgroup: ExecCgroup | None,
    guard: WorkspaceGuard | None = None,
) -> tuple[_Capped, _Capped, bool]:
    """Feed stdin and read both outputs until EOF, the main process's exit, or the deadline.

    Returns (stdout, stderr, timed_out). When the main process exits, at the deadline, or as soon as the
    `guard` finds the workspace over its budget, the whole tree is killed and the pipes are drained for at most
    DRAIN_GRACE_S more.
    """
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capped(limits.max_output_bytes), _Capped(limits.max_output_bytes)
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    sel = selectors.DefaultSelector()
    for fd in sinks:
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(stdin)
    stdin_fd = -1
    if proc.stdin is not None:
        if pending:
            stdin_fd = proc.stdin.fileno()
            os.set_blocking(stdin_fd, False)
            sel.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    pidfd = _pidfd(proc.pid)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    deadline = time.monotonic() + limits.timeout_s
    ended = timed_out = exited = False  # ended: the tree was killed, only draining remains
    try:
        while sinks:
            now = time.monotonic()
            if now >= deadline:
                if ended:
                    break  # something outside our reach still holds a pipe open; stop waiting for it
                _kill_tree(proc, cgroup)
                ended, timed_out, deadline = True, True, now + DRAIN_GRACE_S
                continue
            wait = deadline - now if pidfd is not None or ended else min(deadline - now, 0.05)
            if guard is not None and not ended:
                wait = max(0.0, min(wait, guard.next_poll - now))
            for key, _ in sel.select(wait):
                fd = int(key.fd)
                if fd == pidfd:
                    sel.unregister(fd)
                    exited = True
                elif fd == stdin_fd:
                    pending = _feed_stdin(stdin_fd, pending)
                    if not pending:
                        sel.unregister(fd)
                        stdin_fd = -1
                        _close_quietly(proc.stdin)
                else:
                    data = os.read(fd, _READ_CHUNK)
                    if data:
                        sinks[fd].feed(data)
                    else:
                        sel.unregister(fd)
                        del sinks[fd]
            if not ended and (exited or (pidfd is None and _exited(proc))):
                # The program is over; like a pid namespace ending, nothing it left running survives it.
                _kill_tree(proc, cgroup)
                ended, deadline = True, min(deadline, time.monotonic() + DRAIN_GRACE_S)
            elif not ended and guard is not None and (now := time.monotonic()) >= guard.next_poll and guard.poll(now):
                _kill_tree(proc, cgroup)  # outgrew its workspace: stopped like at the deadline
                guard.stop()
                ended, deadline = True, min(deadline, time.monotonic() + DRAIN_GRACE_S)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        if not ended:
            _kill_tree(proc, cgroup)
        _close_quietly(proc.stdin)
    return out, err, timed_out


def _feed_stdin(fd: int, pending: memoryview) -> memoryview:
    """Write what the pipe takes now; a program that closed its stdin simply gets no more."""
    try:
        return pending[os.write(fd, pending[:_STDIN_CHUNK]) :]
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        return pending[:0]


def _close_quietly(stream: IO[bytes] | None) -> None:
    if stream is not None and not stream.closed:
        with contextlib.suppress(OSError):
            stream.close()


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the main process has exited, without reaping it (its pid must stay reserved for killpg)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    limits: ExecLimits,
    rlimits: Sequence[Rlimit],
    backend: str,
    stdin: str | None = None,
    cgroup: ExecCgroup | None = None,
    drop_to: tuple[int, int] | None = None,
    pass_fds: Sequence[int] = (),
    signal_exit_base: bool = False,
    guard: WorkspaceGuard | None = None,
) -> ExecResult:
    """Run `argv` to completion or the limits and describe what happened.

    The child gets a new session, `rlimits` and `cgroup` (if any) before it execs `argv` (see SHIM), runs as
    `drop_to` (uid, gid) if given; `env` is its whole environment, `stdin` its whole input.
    `signal_exit_base`: the launcher reports a child killed by signal N as exit status 128+N (bwrap does) -
    report it as -N like a direct child. The caller owns `cgroup` (creates it, removes it afterwards); this
    only reads its counters. `guard` watches the workspace while it runs (see sandbox/quota.py); the caller
    settles it once every process is gone. Raises SandboxError if the process cannot be started or confined.
    """
    if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
        raise SandboxError(f"could not start {argv[0]}: not found or not executable")
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [*SHIM, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            close_fds=True,
            # Dropping the uid here forces the slow fork path: backends prefer setpriv in argv (bwrap always).
            user=drop_to[0] if drop_to else None,
            group=drop_to[1] if drop_to else None,
            extra_groups=[] if drop_to else None,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise SandboxError(f"could not start {argv[0]}: {e}") from e
    with proc:
        try:
            _confine(proc.pid, rlimits, cgroup)
        except OSError as e:
            _kill_tree(proc, cgroup)
            raise SandboxError(f"could not apply the limits to {argv[0]}: {e}") from e
        go = b"\n" + (stdin.encode("utf-8") if stdin is not None else b"")
        out, err, timed_out = _pump(proc, go, limits, cgroup, guard)
        code = proc.wait()
    duration_ms = (time.monotonic() - started) * 1000.0
    if signal_exit_base and 128 < code <= 128 + 64 and not timed_out:
        code = -(code - 128)
    result = ExecResult(
        stdout=out.text(),
        stderr=err.text(),
        exit_code=code,
        timed_out=timed_out,
        truncated=bool(out.dropped or err.dropped),
        duration_ms=round(duration_ms, 1),
        backend=backend,
    )
    if timed_out:
        result.exit_code = -signal.SIGKILL
        result.notes.append(f"killed at the {limits.timeout_s:g} s timeout (whole process tree)")
    _explain(result, err, cgroup, guard_killed=guard is not None and guard.report.stopped)
    log.debug(
        "sandbox_exec",
        backend=backend,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        oom_killed=result.oom_killed,
        truncated=result.truncated,
        duration_ms=result.duration_ms,
    )
    return result


def _explain(result: ExecResult, err: _Capped, cgroup: ExecCgroup | None, *, guard_killed: bool = False) -> None:
    """Set oom_killed and add notes from the cgroup counters, the exit signal and the stderr tail. A SIGKILL
    from the workspace guard is not read as an OOM kill (a fast writer fills the page cache up to the limit)."""
    stats = cgroup.stats() if cgroup is not None else None
    if stats is not None and stats.oom_kills:
        result.oom_killed = True
        result.notes.append(
            f"memory limit: killed by the cgroup OOM killer (memory.oom_control oom_kill={stats.oom_kills})"
        )
    elif (stats is not None and stats.oom_kills is None and stats.mem_failcnt and result.exit_code == -signal.SIGKILL
          and not guard_killed):
        result.oom_killed = True  # old kernel without the oom_kill counter: hit the limit, then SIGKILLed
        result.notes.append(f"memory limit: hit the cgroup limit {stats.mem_failcnt} times and was SIGKILLed")
    elif result.exit_code not in (0, None) and _OOM_TEXT.search(bytes(err.kept[-4096:]).decode("utf-8", "replace")):
        result.oom_killed = True
        result.notes.append("memory limit: allocation refused under the address-space limit (RLIMIT_AS)")
    if stats is not None and stats.pids_refused:
        result.notes.append(f"process limit: {stats.pids_refused} fork/clone calls refused (cgroup pids.max)")
    code = result.exit_code
    if code is not None and code < 0 and not result.timed_out and -code in _SIGNAL_NOTES:
        result.notes.append(_SIGNAL_NOTES[signal.Signals(-code)])
    if result.truncated:
        result.notes.append("output truncated to the per-stream cap")


def prepare_workspace(path: Path, uid: int, gid: int) -> None:
    """Give `path` and everything under it to uid:gid so the sandboxed program can write there.

    Symlink-safe: walks with directory fds (`os.fwalk`) and never follows links, so a link planted by earlier
    sandboxed code cannot redirect the chown outside the workspace; files with several hard links are left
    alone (one could be a link to a file elsewhere). Best effort per entry: the tree may change under us.
    """
    if os.geteuid() != 0 and uid != os.geteuid():
        return  # only root can give files away; the caller's uid is what the sandbox maps to then
    st = os.stat(path, follow_symlinks=False)
    if (st.st_uid, st.st_gid) != (uid, gid):
        os.chown(path, uid, gid, follow_symlinks=False)
    for _root, dirs, files, dirfd in os.fwalk(path, follow_symlinks=False):
        for name in (*dirs, *files):
            with contextlib.suppress(OSError):
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if (st.st_uid, st.st_gid) == (uid, gid) or stat.S_ISLNK(st.st_mode):
                    continue
                if stat.S_ISDIR(st.st_mode) or st.st_nlink == 1:
                    os.chown(name, uid, gid, dir_fd=dirfd, follow_symlinks=False)


@contextlib.contextmanager
def memory_file(text: str) -> Iterator[int]:
    """`text` in an anonymous memory file, positioned at its start, for bwrap's `--ro-bind-data FD`: no size
    limit like argv's, no writer thread like a pipe's, nothing on disk."""
    fd = os.memfd_create("ghost-sandbox", os.MFD_CLOEXEC)
    try:
        data = text.encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def workspace_dir(workspace: Path | None) -> Iterator[Path]:
    """The execution's working directory: the given workspace (must exist), or a fresh private temp dir that
    is deleted afterwards."""
    if workspace is not None:
        path = Path(workspace).resolve()
        if not path.is_dir():
            raise SandboxError(f"workspace {workspace} does not exist or is not a directory")
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ghost-sbx-ws-", ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)
