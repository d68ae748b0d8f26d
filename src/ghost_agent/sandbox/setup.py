"""`ghost-agent sandbox setup`: install what the bubblewrap sandbox needs (the Python twin of sandbox/setup.sh,
which exists for checkouts without the package; this one works from a pip install).

bubblewrap provides `bwrap`, util-linux provides `setpriv` (used to drop to uid 65534 inside bwrap). Installs
with apt-get as root or through passwordless sudo; otherwise says what to run. Never fails the caller: the
daemon then falls back loudly to the unisolated restricted subprocess.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# command on PATH -> the Debian package that provides it
REQUIRED = {"bwrap": "bubblewrap", "setpriv": "util-linux"}

Runner = Callable[[Sequence[str]], int]


@dataclass
class SetupPlan:
    """What to do: the missing packages, and the argv prefix to install them with (None: cannot, see `why`)."""

    missing: list[str]
    prefix: list[str] | None
    why: str = ""

    @property
    def command(self) -> str:
        """The install command a person would type (shown when we cannot run it ourselves)."""
        return "apt-get install -y " + " ".join(self.missing)


@dataclass
class SetupResult:
    """The outcome: packages installed, still missing, and the lines to show the user."""

    installed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def missing_packages(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """Debian packages to install for the commands in REQUIRED that `which` cannot find."""
    return [pkg for cmd, pkg in REQUIRED.items() if which(cmd) is None]


def _passwordless_sudo() -> bool:
    if shutil.which("sudo") is None:
        return False
    try:
        return subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def plan(
    missing: list[str], *, is_root: bool | None = None, sudo: bool | None = None, has_apt: bool | None = None
) -> SetupPlan:
    """Decide how to install `missing` (facts default to this machine's: root, passwordless sudo, apt-get)."""
    if not missing:
        return SetupPlan([], [])
    has_apt = shutil.which("apt-get") is not None if has_apt is None else has_apt
    if not has_apt:
        return SetupPlan(missing, None, f"no apt-get here; install {' '.join(missing)} with your package manager")
    is_root = os.geteuid() == 0 if is_root is None else is_root
    if is_root:
        return SetupPlan(missing, [])
    if sudo if sudo is not None else _passwordless_sudo():
        return SetupPlan(missing, ["sudo", "-n"])
    return SetupPlan(missing, None, f"missing {' '.join(missing)}; run as root: apt-get install -y {' '.join(missing)}")


def _run(argv: Sequence[str]) -> int:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:  # apt's progress goes to stderr: stdout may be `sandbox setup --json`
        out: int = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        out = subprocess.DEVNULL
    return subprocess.run(list(argv), env=env, stdout=out, check=False).returncode


def ensure_installed(
    *, which: Callable[[str], str | None] = shutil.which, runner: Runner = _run, setup_plan: SetupPlan | None = None
) -> SetupResult:
    """Install the missing packages when possible (apt-get install; on failure apt-get update and retry).

    `runner` runs one argv and returns its exit status (the real one streams apt's output to the terminal).
    """
    result = SetupResult()
    todo = setup_plan or plan(missing_packages(which))
    if not todo.missing:
        result.messages.append("bubblewrap and setpriv present")
        return result
    if todo.prefix is None:
        result.missing = list(todo.missing)
        result.messages += [todo.why, "until then code runs in the UNISOLATED restricted-subprocess fallback"]
        return result
    install = [*todo.prefix, "apt-get", "install", "-y", "-q", "--no-install-recommends", *todo.missing]
    result.messages.append(f"installing {' '.join(todo.missing)} (apt)")
    if runner(install) != 0:
        # a fresh machine may have no package lists yet
        runner([*todo.prefix, "apt-get", "update", "-q"])
        runner(install)
    result.missing = missing_packages(which)
    result.installed = [p for p in todo.missing if p not in result.missing]
    if result.missing:
        result.messages.append(f"could not install {' '.join(result.missing)}; try: {todo.command}")
    else:
        result.messages.append(f"installed {' '.join(result.installed)}")
    return result
