"""The Python (and bash) that sandboxed code runs with, and exactly what of the host it needs to see.

Inside bubblewrap the program runs on the daemon's own interpreter, so numpy and pandas match what the daemon
has. Only what that interpreter needs is mounted, read-only:
- the interpreter prefix (`sys.base_prefix`: stdlib, lib-dynload with sqlite3, libpython) at its own path,
  because the binary finds libpython and its stdlib by absolute path (rpath, compiled-in prefix); nothing is
  needed when it lives under /usr, which is mounted anyway;
- the venv's site-packages inside a stand-in venv at a neutral path, /opt/ghost/venv: a generated pyvenv.cfg
  (`include-system-site-packages = false`), bin/python3 -> the interpreter, and the site-packages bound at
  lib/pythonX.Y/site-packages. Python then sets up sys.path exactly as for the daemon's venv, and - like the
  daemon - skips the base interpreter's own site-packages and its .pth hooks (measured: those cost ~30 ms
  per start here). The venv sits inside the project checkout, so neither the checkout nor the venv root is
  ever bound: code inside sees packages, not the project, its config or the daemon's store. (An editable
  install's path hook into the checkout finds nothing: the checkout is not mounted.)
Nothing from /etc is needed (measured: numpy, pandas, sqlite3, ssl import without it); USER/LOGNAME in the
environment let `getpass.getuser()` work without a passwd file.
"""

from __future__ import annotations

import os
import platform
import shutil
import stat
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from ghost_agent.sandbox.base import SandboxError

VENV_MOUNT = "/opt/ghost/venv"
EXTRA_SITE_MOUNT = "/opt/ghost/site-packages"
PROGRAM_DIR = "/opt/ghost/program"  # alone in its directory: it is sys.path[0]
PROGRAM_FILES = {"python": "main.py", "bash": "main.sh"}
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
PY_VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class Bind:
    """A read-only bind mount: host `source` appears at `dest` inside."""

    source: str
    dest: str


@dataclass(frozen=True)
class PythonRuntime:
    """The interpreter and package paths, as seen inside the sandbox and on the host."""

    executable: str  # the real interpreter binary (same path inside: its prefix is bound as is)
    prefix: str  # sys.base_prefix, resolved
    site_dirs: tuple[str, ...]  # host site-packages outside the prefix (the venv's)
    binds: tuple[Bind, ...] = field(default=())

    @property
    def venv(self) -> bool:
        """Whether the sandbox gets the stand-in venv (the daemon runs from one)."""
        return bool(self.site_dirs)

    @property
    def sandbox_executable(self) -> str:
        """What to run inside bubblewrap: the stand-in venv's python, else the interpreter itself."""
        return f"{VENV_MOUNT}/bin/python3" if self.venv else self.executable

    @property
    def sandbox_bin_dir(self) -> str:
        """First on PATH inside, so `python3` in a bash script is this runtime."""
        return str(Path(self.sandbox_executable).parent)

    def sandbox_pythonpath(self) -> str:
        """PYTHONPATH inside bubblewrap: only site dirs beyond the first (rare: a separate platlib)."""
        return ":".join(b.dest for b in self.binds if b.dest.startswith(EXTRA_SITE_MOUNT))

    def pyvenv_cfg(self) -> str:
        """The stand-in venv's pyvenv.cfg."""
        return (
            f"home = {Path(self.executable).parent}\ninclude-system-site-packages = false\n"
            f"version = {platform.python_version()}\n"
        )

    def venv_links(self) -> list[tuple[str, str]]:
        """(target, link) symlinks making up the stand-in venv's bin/."""
        names = ("python", "python3", PY_VERSION) if self.venv else ()
        return [(self.executable, f"{VENV_MOUNT}/bin/{n}") for n in names]

    @classmethod
    def discover(cls, hidden: list[Path] | None = None) -> PythonRuntime:
        """The running interpreter's runtime. Raises SandboxError if a bind would expose a `hidden` path
        (default: `default_hidden_paths()`), e.g. an interpreter installed inside GHOST_HOME."""
        prefix = os.path.realpath(sys.base_prefix)
        executable = _interpreter(prefix)
        binds: list[Bind] = []
        if not _under(prefix, "/usr"):
            binds.append(Bind(prefix, prefix))
        site_dirs: list[str] = []
        for key in ("purelib", "platlib"):
            path = os.path.realpath(sysconfig.get_paths()[key])
            if os.path.isdir(path) and path not in site_dirs and not _under(path, prefix) and not _under(path, "/usr"):
                site_dirs.append(path)
        for i, path in enumerate(site_dirs):
            dest = f"{VENV_MOUNT}/lib/{PY_VERSION}/site-packages" if i == 0 else f"{EXTRA_SITE_MOUNT}-{i}"
            binds.append(Bind(path, dest))
        hidden = default_hidden_paths() if hidden is None else hidden
        for b in binds:
            for h in hidden:
                if _under(os.path.realpath(h), b.source):
                    raise SandboxError(f"mounting {b.source} in the sandbox would expose {h}; refusing")
        return cls(executable=executable, prefix=prefix, site_dirs=tuple(site_dirs), binds=tuple(binds))

    def for_uid(self, uid: int, gid: int) -> tuple[str, str, str]:
        """How the unisolated fallback runs Python after dropping to uid:gid, with host paths (no mounts):
        (interpreter, PYTHONPATH, note). Site dirs it cannot read are left out (`unreachable_sites` says which
        and why; the fallback reports it); when the interpreter is out of reach (a pyenv build under a 0700 /root)
        the system interpreter of the same version is used with the same packages (same ABI tag). The note is ""
        when nothing changed. SandboxError if none is reachable."""
        sites = [d for d in self.site_dirs if _reachable(d, uid, gid, os.R_OK | os.X_OK)]
        note = "" if len(sites) == len(self.site_dirs) else f"site-packages not readable by uid {uid} left out"
        stdlib = os.path.join(self.prefix, "lib", PY_VERSION, "os.py")
        if _reachable(self.executable, uid, gid, os.X_OK) and _reachable(stdlib, uid, gid, os.R_OK):
            return self.executable, ":".join(sites), note
        system = os.path.join("/usr/bin", PY_VERSION)
        if _reachable(system, uid, gid, os.X_OK):
            moved = f"{self.executable} is not reachable by uid {uid}; using {system} with the same packages"
            return system, ":".join(sites), "; ".join(n for n in (moved, note) if n)
        raise SandboxError(f"no Python interpreter reachable by uid {uid} ({self.executable}, {system})")

    def unreachable_sites(self, uid: int, gid: int) -> list[tuple[str, str]]:
        """(site dir, what blocks it) for each of the venv's site dirs uid:gid cannot read: code run as that uid
        on the host (the unisolated fallback) cannot import what is installed there (numpy, pandas, ...).
        The usual cause is a checkout (and its .venv) under a private 0700 directory such as a home."""
        out = []
        for d in self.site_dirs:
            why = blocker(d, uid, gid, os.R_OK | os.X_OK)
            if why is not None:
                out.append((d, why))
        return out


def _interpreter(prefix: str) -> str:
    """The real interpreter binary: the base one, not a venv's symlink or copy (which may sit in the checkout)."""
    candidates = [
        os.path.join(prefix, "bin", PY_VERSION),
        os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
        os.path.realpath(sys.executable),
    ]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK) and (_under(c, prefix) or _under(c, "/usr")):
            return os.path.realpath(c)
    raise SandboxError(f"cannot find the interpreter binary under {prefix}")


def _reachable(path: str, uid: int, gid: int, want: int) -> bool:
    """Whether uid:gid (no capabilities, no supplementary groups) can search every ancestor of `path` and has
    `want` access to it. Mode bits only (ACLs are not consulted)."""
    return blocker(path, uid, gid, want) is None


def blocker(path: str, uid: int, gid: int, want: int) -> str | None:
    """What stops uid:gid from reaching `path` with `want` access: "<dir> (mode 0700, owner 0)" for the first
    ancestor it cannot search (or `path` itself), "<path> (missing)" when it does not exist, None when nothing
    does. Mode bits only, as `_reachable`."""
    target = Path(os.path.realpath(path))
    for node, bits in [*((p, os.X_OK) for p in reversed(target.parents)), (target, want)]:
        try:
            st = node.stat()
        except OSError:
            return f"{node} (missing)"
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
        if (st.st_mode >> shift) & bits != bits:
            return f"{node} (mode {stat.S_IMODE(st.st_mode):04o}, owner {st.st_uid})"
    return None


def bash_path() -> str:
    """bash, resolved (under /usr on merged-/usr systems, visible inside through the /bin symlink otherwise)."""
    return shutil.which("bash", path=SANDBOX_PATH) or "/bin/bash"


def default_hidden_paths() -> list[Path]:
    """What must never be mounted into the sandbox: GHOST_HOME, the project checkout, /home."""
    home = Path(os.environ.get("GHOST_HOME") or Path.home() / ".ghost").expanduser()
    checkout = Path(__file__).resolve().parents[3]  # src/ghost_agent/sandbox/runtime.py -> the checkout
    out = [home, Path("/home")]
    if (checkout / "pyproject.toml").exists():
        out.append(checkout)
    return out


def _under(path: str, root: str) -> bool:
    """`path` is `root` or inside it (string paths, already resolved)."""
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)


def program_argv(language: str, python: str, program: str) -> list[str]:
    """The command running `program` (a file path): unbuffered Python (`python` is the interpreter to use),
    so a kill keeps what was printed; bash reading the script file."""
    if language == "python":
        return [python, "-u", program]
    return [bash_path(), program]


def base_env(*, bin_dir: str, home: str, pythonpath: str) -> dict[str, str]:
    """The whole environment of sandboxed code: nothing is inherited from the daemon (no GHOST_*, no keys).

    `home` (the workspace) is also first on PYTHONPATH, so code imports modules it wrote there, as with
    `python -c` in that directory.

    BLAS/OpenMP pools are pinned to one thread: their threads count against the process limit and their
    per-thread reservations against the address-space limit; MALLOC_ARENA_MAX keeps glibc from reserving
    64 MB of address space per thread.
    """
    env = {
        "PATH": SANDBOX_PATH if bin_dir in SANDBOX_PATH.split(":") else f"{bin_dir}:{SANDBOX_PATH}",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "USER": "nobody",
        "LOGNAME": "nobody",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }
    env["PYTHONPATH"] = f"{home}:{pythonpath}" if pythonpath else home
    return env
