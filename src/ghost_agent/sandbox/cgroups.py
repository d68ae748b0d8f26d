"""Per-execution cgroup v1 memory and pids limits for the sandbox (DESIGN §1c).

Each execution gets `<controller mount>/<the daemon's own cgroup>/ghost-agent/exec-<pid>-<n>-<token>` in the
memory and pids hierarchies: `memory.limit_in_bytes` (+ `memory.memsw.limit_in_bytes` when swap accounting
exists) and `pids.max`. Nesting under the daemon's own cgroup (not the hierarchy root) keeps sandboxed code
inside whatever limits the daemon itself runs under (a systemd unit, a container). The child process joins
before exec (see process.py), so everything it starts is inside from its first instruction; afterwards the
cgroup's remaining tasks are SIGKILLed, its OOM/pids counters read, and the directory removed (the shared
parent too once empty), leaving no trace. cgroup v2-only hosts are not handled: limits fall back to rlimits.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ghost_agent.logging import get_logger
from ghost_agent.sandbox.base import ExecLimits, SandboxError

log = get_logger("sandbox")

PARENT_NAME = "ghost-agent"
CONTROLLERS = ("memory", "pids")
_counter = itertools.count()


@dataclass(frozen=True)
class CgroupStats:
    """Counters of one finished execution. `oom_kills` is None on kernels without the oom_kill counter."""

    oom_kills: int | None
    mem_failcnt: int
    pids_refused: int


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _v1_mounts() -> dict[str, tuple[Path, str]]:
    """controller -> (mount point, mount root) for the cgroup v1 hierarchies we use."""
    found: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3 or rfields[0] != "cgroup":
            continue
        for controller in set(rfields[2].split(",")) & set(CONTROLLERS):
            found.setdefault(controller, (Path(_unescape(fields[4])), _unescape(fields[3])))
    return found


def _own_cgroups() -> dict[str, str]:
    """controller -> the daemon's cgroup path in that v1 hierarchy."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                out[controller] = parts[2]
    return out


def _read_int(path: Path, default: int = 0) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def _keyed(path: Path) -> dict[str, int]:
    """A `key value` per line file (memory.oom_control, pids.events)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ExecCgroup:
    """One execution's cgroups (memory and/or pids). Use as a context manager: leaving kills and removes."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self._fds: list[int] = []
        try:
            for d in dirs.values():
                self._fds.append(os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            self.close()
            raise

    def add(self, pid: int) -> None:
        """Move process `pid` (not yet started anything) into every controller's cgroup."""
        for fd in self._fds:
            os.write(fd, str(pid).encode())

    def pids(self) -> set[int]:
        """Processes (host pids) currently in any of the cgroups."""
        out: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError):
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return out

    def kill_all(self, timeout_s: float = 2.0) -> bool:
        """SIGKILL everything in the cgroups until they are empty (a forking process may add more while we
        kill). True when empty."""
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)

    def stats(self) -> CgroupStats:
        """The execution's counters; read them after it ended, before `close`."""
        mem = self.dirs.get("memory")
        oom: int | None = None
        failcnt = 0
        if mem is not None:
            oom = _keyed(mem / "memory.oom_control").get("oom_kill")
            failcnt = _read_int(mem / "memory.failcnt")
        pids = self.dirs.get("pids")
        refused = _keyed(pids / "pids.events").get("max", 0) if pids is not None else 0
        return CgroupStats(oom_kills=oom, mem_failcnt=failcnt, pids_refused=refused)

    def close(self) -> None:
        """Kill what is left, remove the directories (the shared parent too when empty). Idempotent."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []
        for d in list(self.dirs.values()):
            # The shared parent stays: removing it when it looked empty raced with concurrent executions
            # creating their child in it (seen as FileExistsError/ENOENT under load). An empty cgroup directory
            # costs nothing; crashed daemons' children are swept at the next start.
            if not _remove(d, self):
                log.warning("sandbox_cgroup_leftover", path=str(d), pids=sorted(self.pids()))
        self.dirs = {}

    def __enter__(self) -> ExecCgroup:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _remove(d: Path, cg: ExecCgroup | None, timeout_s: float = 3.0) -> bool:
    """rmdir a cgroup, killing its tasks first; exiting tasks keep it busy for a moment."""
    deadline = time.monotonic() + timeout_s
    while True:
        if cg is not None:
            cg.kill_all(timeout_s=0.5)
        try:
            d.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                return False
        time.sleep(0.01)


@dataclass(frozen=True)
class CgroupSupport:
    """Which v1 controllers we can use here: the parent directory per controller, and why not otherwise."""

    parents: dict[str, Path]
    memsw: bool
    reason: str = ""

    @property
    def memory(self) -> bool:
        """Per-execution memory limits (and OOM counters) are available."""
        return "memory" in self.parents

    @property
    def pids(self) -> bool:
        """Per-execution process limits are available."""
        return "pids" in self.parents

    @classmethod
    def none(cls, reason: str) -> CgroupSupport:
        """No cgroups (disabled, or not available): limits fall back to rlimits."""
        return cls(parents={}, memsw=False, reason=reason)

    @classmethod
    def probe(cls) -> CgroupSupport:
        """Find the v1 memory and pids hierarchies and check that we can create child cgroups there (by creating
        and removing one). Also removes executions' cgroups left by a crashed daemon (its pid is gone)."""
        mounts, own = _v1_mounts(), _own_cgroups()
        parents: dict[str, Path] = {}
        problems: list[str] = []
        memsw = False
        for controller in CONTROLLERS:
            if controller not in mounts:
                problems.append(f"no cgroup v1 {controller} hierarchy mounted")
                continue
            mount, root = mounts[controller]
            rel = own.get(controller, "/")
            if root != "/" and rel.startswith(root):
                rel = rel[len(root) :]
            parent = mount / rel.lstrip("/") / PARENT_NAME
            try:
                _sweep(parent)
                probe = _make_child(parent, f"probe-{os.getpid()}-{secrets.token_hex(4)}")
                ok = (probe / "cgroup.procs").exists()
                if controller == "memory":
                    memsw = (probe / "memory.memsw.limit_in_bytes").exists()
                _remove(probe, None)
                with contextlib.suppress(OSError):
                    parent.rmdir()
            except OSError as e:
                problems.append(f"cannot create {controller} cgroups under {parent.parent}: {e.strerror or e}")
                continue
            if ok:
                parents[controller] = parent
        return cls(parents=parents, memsw=memsw, reason="; ".join(problems))

    @contextlib.contextmanager
    def execution(self, limits: ExecLimits, *, extra_procs: int = 0) -> Iterator[ExecCgroup | None]:
        """`create` as a context manager that always kills and removes; SandboxError if setup fails."""
        try:
            cg = self.create(limits, extra_procs=extra_procs)
        except OSError as e:
            raise SandboxError(f"could not set up the execution's cgroup: {e}") from e
        if cg is None:
            yield None
            return
        with cg:
            yield cg

    def create(self, limits: ExecLimits, *, extra_procs: int = 0) -> ExecCgroup | None:
        """This execution's cgroups with its limits set, or None when no controller is usable.

        `extra_procs`: tasks of the sandbox machinery itself that count against pids.max (bwrap's two).
        """
        if not self.parents:
            return None
        name = f"exec-{os.getpid()}-{next(_counter)}-{secrets.token_hex(3)}"
        dirs: dict[str, Path] = {}
        try:
            for controller, parent in self.parents.items():
                d = dirs[controller] = _make_child(parent, name)
                if controller == "memory":
                    limit = str(limits.memory_mb * 1024 * 1024)
                    (d / "memory.limit_in_bytes").write_text(limit)
                    if self.memsw:  # after limit_in_bytes: memsw may never be below it
                        (d / "memory.memsw.limit_in_bytes").write_text(limit)
                else:
                    (d / "pids.max").write_text(str(limits.max_procs + extra_procs))
            return ExecCgroup(dirs)
        except OSError:
            for d in dirs.values():
                _remove(d, None)
            raise


def _make_child(parent: Path, name: str) -> Path:
    """mkdir parent/name, recreating the shared parent if a finishing execution just removed it."""
    for _ in range(5):
        try:
            # not Path.mkdir(exist_ok=True): it re-raises FileExistsError when the directory vanishes between
            # its mkdir and its is_dir check, which is exactly the race with a finishing execution's rmdir
            os.mkdir(parent)
        except FileExistsError:
            pass
        try:
            (parent / name).mkdir()
            return parent / name
        except FileNotFoundError:
            continue
    raise OSError(errno.ENOENT, f"{parent} keeps disappearing")  # pragma: no cover - needs 5 lost races


def _sweep(parent: Path) -> None:
    """Remove exec-/probe- cgroups whose creating daemon is gone (it crashed before cleaning up)."""
    if not parent.is_dir():
        return
    for child in parent.iterdir():
        parts = child.name.split("-")
        if len(parts) >= 2 and parts[0] in ("exec", "probe") and parts[1].isdigit() and child.is_dir():
            if not _pid_alive(int(parts[1])):
                cg_pids = {int(x) for x in (child / "cgroup.procs").read_text().split()}
                for pid in cg_pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                _remove(child, None)
