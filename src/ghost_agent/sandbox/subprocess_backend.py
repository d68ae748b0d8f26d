"""The last-resort backend: a restricted subprocess, used only when bubblewrap cannot run (DESIGN §1c).

What it enforces: its own session (setsid) and, where writable, a per-execution cgroup, so the timeout kills
the whole tree including setsid/double-forked grandchildren (without cgroups only the process group is
killed: a grandchild that left it survives); rlimits (address space, CPU, file size, open files, and
processes when no pids cgroup and we run as nobody); uid/gid 65534 with no supplementary groups when the
daemon is root; the workspace or a fresh temp dir as cwd; an environment built from scratch.
What it does NOT: network or filesystem isolation. The code sees the daemon's network and every file
readable by its uid. `isolation` says so (isolated=False) and the daemon announces it loudly.

Run as root, the code runs as uid 65534 on the host's paths, so the daemon's venv must be readable by that uid.
A checkout under a private (0700) directory, such as a home, puts the venv out of its reach: the code then
runs with the standard library only. That is reported, never hidden: `isolation.warnings` (shown by /health
detail, `sandbox info` and `doctor`) and, when a program fails to import a module, a line appended to its
stderr, which the python/bash tools show the model.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ghost_agent.sandbox.base import ExecLimits, ExecResult, Isolation, SandboxBackend, check_language
from ghost_agent.sandbox.cgroups import CgroupSupport
from ghost_agent.sandbox.process import NOBODY, prepare_workspace, rlimits_for, run_process, workspace_dir
from ghost_agent.sandbox.quota import guard_workspace, settle
from ghost_agent.sandbox.runtime import PROGRAM_FILES, PythonRuntime, base_env, program_argv

IMPORT_FAILED = ("ModuleNotFoundError", "ImportError: ", "No module named")


class RestrictedSubprocessSandbox(SandboxBackend):
    """Runs code as a plain, limited process. Unisolated: see the module docstring."""

    name = "subprocess"

    def __init__(self, *, concurrency: int | None = None, runtime: PythonRuntime | None = None) -> None:
        """`runtime` (default: the running interpreter's) is what code runs with when dropped to uid 65534."""
        super().__init__(concurrency=concurrency)
        self.as_root = os.geteuid() == 0
        self.setpriv_path = shutil.which("setpriv")
        # Nothing is mounted here, so there is nothing to hide. Not root: the daemon's own interpreter (its venv
        # included) as is. Root: after dropping to nobody the interpreter must be reachable by permissions.
        self.python, self.pythonpath, self.runtime_note = sys.executable, "", ""
        # (site dir, what blocks uid 65534 from it): packages the code cannot import (see the module docstring).
        self.unreachable_sites: list[tuple[str, str]] = []
        if self.as_root:
            runtime = runtime or PythonRuntime.discover(hidden=[])
            self.python, self.pythonpath, self.runtime_note = runtime.for_uid(NOBODY, NOBODY)
            self.unreachable_sites = runtime.unreachable_sites(NOBODY, NOBODY)
        self.cgroups = CgroupSupport.probe()

    @property
    def packages_warning(self) -> str:
        """What the operator should know when uid 65534 cannot read the venv ("" when it can)."""
        if not self.unreachable_sites:
            return ""
        site, why = self.unreachable_sites[0]
        more = f" (and {len(self.unreachable_sites) - 1} more)" if len(self.unreachable_sites) > 1 else ""
        return (
            f"the daemon's Python packages are NOT reachable by uid {NOBODY}: {site}{more} is blocked at {why}, so "
            "code run by this fallback imports only the standard library (no numpy, pandas, ...). Fix: install "
            "bubblewrap (make sandbox), or keep the checkout and its .venv where uid 65534 can read them "
            "(no private 0700 parent directory)"
        )

    def _import_note(self) -> str:
        """The line added to a program's stderr when an import failed because of the unreachable packages."""
        _, why = self.unreachable_sites[0]
        return (
            f"[ghost-agent sandbox] the unisolated fallback runs as uid {NOBODY}, which cannot read the daemon's "
            f"Python packages (blocked at {why}): only the standard library imports here. The operator can fix "
            "it by installing bubblewrap (make sandbox / ghost-agent sandbox setup)."
        )

    @property
    def _nproc_rlimit(self) -> bool:
        # RLIMIT_NPROC counts every process of the uid: meaningful only when the code runs as nobody.
        return not self.cgroups.pids and self.as_root

    @property
    def isolation(self) -> Isolation:
        """Reports isolated=False: no network, filesystem or pid isolation, only limits."""
        details: dict[str, Any] = {
            "uid": NOBODY if self.as_root else os.geteuid(),
            "python": self.python,
            "cgroup_parents": {k: str(v) for k, v in self.cgroups.parents.items()},
            "tree_kill": "process group + cgroup" if self.cgroups.parents else "process group only",
        }
        if self.runtime_note:
            details["python_note"] = self.runtime_note
        details["packages"] = {
            "reachable": not self.unreachable_sites,
            "unreachable": [{"path": site, "blocked_at": why} for site, why in self.unreachable_sites],
        }
        if not self.cgroups.parents:
            details["cgroups"] = self.cgroups.reason
        process_limit = "cgroup" if self.cgroups.pids else ("rlimit" if self._nproc_rlimit else "none")
        return Isolation(
            backend=self.name,
            isolated=False,
            network=False,
            filesystem=False,
            pid_namespace=False,
            memory_limit="cgroup" if self.cgroups.memory else "rlimit",
            process_limit=process_limit,
            reason=(
                "restricted subprocess: NO network or filesystem isolation - code runs with the daemon's network "
                "and sees every file its uid can read; only limits, a temp cwd"
                + (" and uid 65534" if self.as_root else "")
                + " apply (install bubblewrap: make sandbox)"
            ),
            details=details,
            warnings=(self.packages_warning,) if self.unreachable_sites else (),
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
        """Run `source` as a limited child process; blocking."""
        check_language(language)
        drop = (NOBODY, NOBODY) if self.as_root else None
        with workspace_dir(workspace) as ws, guard_workspace(ws, limits) as guard:
            limits = guard.limits if guard is not None else limits  # RLIMIT_FSIZE within the room left
            with (
                tempfile.TemporaryDirectory(prefix="ghost-sbx-", ignore_cleanup_errors=True) as private,
                self.cgroups.execution(limits) as cg,
            ):
                program, tmp = Path(private) / PROGRAM_FILES[language], Path(private) / "tmp"
                program.write_text(source, encoding="utf-8")
                program.chmod(0o444)
                tmp.mkdir(mode=0o700)
                if drop is not None:
                    os.chmod(private, 0o755)  # nobody reads the program through it
                    os.chown(tmp, *drop)
                    prepare_workspace(ws, *drop)
                env = base_env(bin_dir=os.path.dirname(self.python), home=str(ws), pythonpath=self.pythonpath)
                env["TMPDIR"] = str(tmp)
                if drop is not None and self.setpriv_path:  # drop in argv: Popen's own drop forces the slow fork
                    argv = [self.setpriv_path, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
                    argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
                else:
                    argv = []
                argv += program_argv(language, self.python, str(program))
                result = run_process(
                    argv,
                    env=env,
                    cwd=str(ws),
                    limits=limits,
                    rlimits=rlimits_for(limits, nproc=self._nproc_rlimit),
                    backend=self.name,
                    stdin=stdin,
                    cgroup=cg,
                    drop_to=drop if not self.setpriv_path else None,
                    guard=guard,
                )
            settle(guard, result)  # after the cgroup's last process is gone
        if self.unreachable_sites and not result.ok and any(m in result.stderr for m in IMPORT_FAILED):
            # Say why the import failed, where the model (and whoever reads the trajectory) will see it.
            note = self._import_note()
            result.notes.append(note)
            result.stderr = result.stderr.rstrip("\n") + "\n" + note + "\n"
        return result
