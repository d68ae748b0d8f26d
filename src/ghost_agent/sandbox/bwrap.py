"""The bubblewrap backend (DESIGN §1c): own network, pid, ipc and uts namespaces; a root built from read-only
binds of /usr and the Python runtime; a private /tmp; the workspace read-write at /workspace; uid 65534.

Two ways to become nobody:
- root with CAP_SYS_ADMIN (our machines): no user namespace; bwrap builds the sandbox as root and `setpriv`
  drops to 65534 with no capabilities, an empty bounding set and no_new_privs. Files are then protected by
  ordinary permissions too (the workspace is chowned to 65534, everything else is read-only or root's).
- otherwise: `--unshare-user --uid 65534 --cap-drop ALL`. The inside uid maps to the daemon's own uid, so
  /proc/sys, writable to that uid, is covered with a tmpfs.
The bwrap process (and so everything inside) joins a per-execution cgroup before exec; timeout = SIGKILL
bwrap, whose `--die-with-parent` and pid namespace take every descendant with it (plus killpg and the cgroup).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from ghost_agent.sandbox.base import ExecLimits, ExecResult, Isolation, SandboxBackend, SandboxError, check_language
from ghost_agent.sandbox.cgroups import CgroupSupport
from ghost_agent.sandbox.process import (
    NOBODY,
    memory_file,
    prepare_workspace,
    rlimits_for,
    run_process,
    workspace_dir,
)
from ghost_agent.sandbox.quota import guard_workspace, settle
from ghost_agent.sandbox.runtime import (
    PROGRAM_DIR,
    PROGRAM_FILES,
    VENV_MOUNT,
    PythonRuntime,
    base_env,
    program_argv,
)

_CAP_SYS_ADMIN = 21
BWRAP_OWN_PROCS = 2  # the outer bwrap and the pid-namespace init; pids.max = max_procs + these
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_ALTERNATIVES = "/etc/alternatives"


def has_cap_sys_admin() -> bool:
    """Root with CAP_SYS_ADMIN in its effective set (can build namespaces without a user namespace)."""
    if os.geteuid() != 0:
        return False
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> _CAP_SYS_ADMIN & 1)
    except (OSError, ValueError):
        pass
    return False


@functools.cache
def _bwrap_version(path: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else ()


class BwrapSandbox(SandboxBackend):
    """Runs code under bubblewrap. `userns=None` picks the mode: no user namespace + setpriv when root with
    CAP_SYS_ADMIN (and setpriv exists), else a user namespace. `cgroups=False` skips cgroups (rlimits only)."""

    name = "bwrap"

    def __init__(
        self,
        *,
        concurrency: int | None = None,
        userns: bool | None = None,
        bwrap_path: str = "bwrap",
        cgroups: bool = True,
    ) -> None:
        super().__init__(concurrency=concurrency)
        self.bwrap_path = shutil.which(bwrap_path) or bwrap_path
        self.setpriv_path = shutil.which("setpriv")
        self.userns = not (has_cap_sys_admin() and self.setpriv_path) if userns is None else userns
        self._runtime_error = ""
        self.runtime: PythonRuntime | None = None
        try:
            self.runtime = PythonRuntime.discover()
        except SandboxError as e:
            self._runtime_error = str(e)
        self.cgroups = CgroupSupport.probe() if cgroups else CgroupSupport.none("cgroups disabled")
        # Where the sandboxed uid lives on the host: nobody itself, or (user namespace) the daemon's uid.
        self.host_uid, self.host_gid = (os.geteuid(), os.getegid()) if self.userns else (NOBODY, NOBODY)

    @property
    def _nproc_rlimit(self) -> bool:
        # RLIMIT_NPROC only means something when the code runs as its own host uid (65534 via setpriv). In a user
        # namespace it is either root's (never enforced) or the daemon user's count, which it would break.
        return not self.cgroups.pids and not self.userns

    @property
    def isolation(self) -> Isolation:
        """Network, filesystem and pid isolation; memory/process limits by cgroup where writable."""
        process_limit = "cgroup" if self.cgroups.pids else ("rlimit" if self._nproc_rlimit else "none")
        reasons = []
        if not (self.cgroups.memory and self.cgroups.pids):
            reasons.append(f"cgroup limits unavailable ({self.cgroups.reason}); using rlimits")
        if self._runtime_error:
            reasons.append(self._runtime_error)
        details: dict[str, Any] = {
            "mode": "userns" if self.userns else "setpriv",
            "bwrap": self.bwrap_path,
            "uid": NOBODY,
            "python": self.runtime.executable if self.runtime else None,
            "mounts_ro": ["/usr"] + ([b.source + " -> " + b.dest for b in self.runtime.binds] if self.runtime else []),
            "cgroup_parents": {k: str(v) for k, v in self.cgroups.parents.items()},
        }
        if process_limit == "rlimit":
            details["process_limit_note"] = "RLIMIT_NPROC is per uid: shared by all concurrent executions"
        return Isolation(
            backend=self.name,
            isolated=True,
            network=True,
            filesystem=True,
            pid_namespace=True,
            memory_limit="cgroup" if self.cgroups.memory else "rlimit",
            process_limit=process_limit,
            reason="; ".join(reasons),
            details=details,
        )

    def run_sync(
        self,
        language: str,
        source: str,
        *,
        limits: ExecLimits,
        workspace: Path | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run `source` in a fresh sandbox (see the module docstring); blocking."""
        check_language(language)
        if self.runtime is None:
            raise SandboxError(self._runtime_error)
        if not self.userns and not self.setpriv_path:
            raise SandboxError("setpriv not found (util-linux); needed to drop to uid 65534 without a user namespace")
        rt = self.runtime
        with workspace_dir(workspace) as ws, guard_workspace(ws, limits) as guard:
            limits = guard.limits if guard is not None else limits  # RLIMIT_FSIZE within the room left
            with (
                memory_file(source) as fd,
                memory_file(rt.pyvenv_cfg()) as cfg_fd,
                self.cgroups.execution(limits, extra_procs=BWRAP_OWN_PROCS) as cg,
            ):
                prepare_workspace(ws, self.host_uid, self.host_gid)
                argv = self._argv(language, limits, str(ws), fd, cfg_fd)
                # The options (host paths of the workspace, the venv, GHOST_HOME) go through `--args FD`, not the
                # command line: bwrap is the sandbox's pid 1, and /proc/1/cmdline is readable from inside.
                split = argv.index("--")
                with memory_file("\0".join(argv[1:split]) + "\0") as args_fd:
                    result = run_process(
                        [argv[0], "--args", str(args_fd), *argv[split:]],
                        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                        cwd="/",
                        limits=limits,
                        rlimits=rlimits_for(limits, nproc=self._nproc_rlimit),
                        backend=self.name,
                        stdin=stdin,
                        cgroup=cg,
                        pass_fds=(fd, cfg_fd, args_fd),
                        signal_exit_base=True,
                        guard=guard,
                    )
            settle(guard, result)  # the cgroup is gone: so is every process that could still write
        # bwrap and setpriv report their own failures as "<tool>: message" and exit 1 before the program runs
        first = result.stderr.split("\n", 1)[0]
        if result.exit_code == 1 and not result.stdout and first.startswith(("bwrap: ", "setpriv: ")):
            raise SandboxError(first)  # e.g. "bwrap: Creating new namespace failed: Operation not permitted"
        return result

    def _argv(self, language: str, limits: ExecLimits, workspace: str, fd: int, cfg_fd: int) -> list[str]:
        """The bwrap command line: namespaces, the read-only root, private /tmp, the workspace, the program."""
        assert self.runtime is not None
        rt = self.runtime
        a = [self.bwrap_path, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        a += ["--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if self.userns:
            a += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL"]
            if _bwrap_version(self.bwrap_path) >= (0, 8, 0):
                a += ["--disable-userns"]  # no nested user namespaces (and their kernel attack surface)
        a += ["--ro-bind", "/usr", "/usr"]
        for name in _SYSTEM_LINKS:
            path = "/" + name
            if os.path.islink(path):
                a += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                a += ["--ro-bind", path, path]
        made: set[str] = {"/", "/usr"}
        if os.path.isdir(ETC_ALTERNATIVES):
            # Debian's /usr/bin/awk, editor, pager ... are links through /etc/alternatives: without it `awk`
            # dangles. Only links to programs under /usr live there; the rest of /etc stays unmounted.
            a += _parent_dirs(ETC_ALTERNATIVES, made) + ["--ro-bind", ETC_ALTERNATIVES, ETC_ALTERNATIVES]
        program = f"{PROGRAM_DIR}/{PROGRAM_FILES[language]}"
        a += _parent_dirs(program, made) + ["--perms", "0444", "--ro-bind-data", str(fd), program]
        for b in rt.binds:
            a += _parent_dirs(b.dest, made) + ["--ro-bind", b.source, b.dest]
        if rt.venv:  # the stand-in venv around the bound site-packages (see runtime.py)
            for target, link in rt.venv_links():
                a += _parent_dirs(link, made) + ["--symlink", target, link]
            a += ["--perms", "0444", "--ro-bind-data", str(cfg_fd), f"{VENV_MOUNT}/pyvenv.cfg"]
        a += ["--proc", "/proc"]
        if self.userns:
            # owned by the uid we map to: writable from inside otherwise
            a += ["--tmpfs", "/proc/sys", "--remount-ro", "/proc/sys"]
        # tmpfs pages are memory charged to the execution: cap each at half the limit, so filling /tmp gives the
        # program a plain ENOSPC before the memory limit kills it.
        size = str(max(1, limits.memory_mb // 2) * 1024 * 1024)
        a += ["--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        a += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
        a += ["--bind", workspace, "/workspace", "--chdir", "/workspace"]
        # The root itself (a tmpfs bwrap builds) read-only: in the user-namespace variant it belongs to the
        # sandboxed uid and would be writable. /workspace, /tmp and /dev/shm are mounts of their own.
        a += ["--remount-ro", "/"]
        a += ["--clearenv"]
        env = base_env(bin_dir=rt.sandbox_bin_dir, home="/workspace", pythonpath=rt.sandbox_pythonpath())
        env["TMPDIR"] = "/tmp"
        for key, value in env.items():
            a += ["--setenv", key, value]
        a += ["--"]
        if not self.userns:
            assert self.setpriv_path is not None
            a += [self.setpriv_path, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
            a += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        return a + program_argv(language, rt.sandbox_executable, program)


def _parent_dirs(path: str, made: set[str]) -> list[str]:
    """`--perms 0755 --dir` for each missing ancestor: bwrap would create them 0700 root, closed to nobody."""
    out: list[str] = []
    for parent in reversed(PurePosixPath(path).parents):
        p = str(parent)
        if p not in made:
            made.add(p)
            out += ["--perms", "0755", "--dir", p]
    return out
