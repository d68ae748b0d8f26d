"""Sandbox test helpers: real backends (skipped, with the reason, where they cannot run), a real loopback
server, a realistic secret home, and a host-side scan for marked processes."""

from __future__ import annotations

import os
import shutil
import socketserver
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.sandbox.base import ExecLimits, ExecResult, SandboxBackend
from ghost_agent.sandbox.bwrap import BwrapSandbox, has_cap_sys_admin
from ghost_agent.sandbox.cgroups import CgroupSupport
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox

QUICK = ExecLimits(timeout_s=10.0, memory_mb=256, max_procs=32)


def _usable(backend: SandboxBackend) -> SandboxBackend:
    """The backend if a trivial program runs through it, else skip with what went wrong."""
    result = backend.run_sync("python", "print('ok')", limits=QUICK)
    if result.stdout.strip() != "ok":
        pytest.skip(f"{backend.name} cannot run here: exit {result.exit_code}: {result.stderr.strip()[:300]}")
    return backend


def _need_bwrap() -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: run `make sandbox`")


@pytest.fixture(scope="session")
def bwrap() -> SandboxBackend:
    """bubblewrap as this machine runs it by default (root: setpriv to nobody, no user namespace)."""
    _need_bwrap()
    if has_cap_sys_admin() and shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed: run `make sandbox`")
    return _usable(BwrapSandbox())


@pytest.fixture(scope="session")
def bwrap_userns() -> SandboxBackend:
    """bubblewrap in its user-namespace variant (what runs without CAP_SYS_ADMIN)."""
    _need_bwrap()
    return _usable(BwrapSandbox(userns=True))


@pytest.fixture(scope="session")
def bwrap_rlimits() -> SandboxBackend:
    """bubblewrap without cgroups: limits by rlimits alone (what runs where cgroups are not writable)."""
    _need_bwrap()
    if shutil.which("setpriv") is None or not has_cap_sys_admin():
        pytest.skip("the rlimit-only checks need root with setpriv (RLIMIT_NPROC applies to uid 65534)")
    return _usable(BwrapSandbox(cgroups=False))


@pytest.fixture(scope="session")
def fallback() -> SandboxBackend:
    """The restricted-subprocess fallback."""
    return _usable(RestrictedSubprocessSandbox())


def hide_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Make bubblewrap missing for the rest of the test, as on a machine without it: PATH becomes a directory
    holding only `setpriv` (what the restricted subprocess uses). Detections are cached per GHOST_HOME, so a test
    on its own tmp home never sees one made with bwrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        (bin_dir / "setpriv").symlink_to(setpriv)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert shutil.which("bwrap") is None


def need_cgroups(controller: str) -> None:
    """Skip unless per-execution cgroups of this controller can be created here."""
    support = CgroupSupport.probe()
    if controller not in support.parents:
        pytest.skip(f"cgroup v1 {controller} not writable here: {support.reason}")


class LoopbackServer:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.accepted = 0
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer.accepted += 1
                self.request.sendall(b"hello from the host\n")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def loopback_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def secret_home() -> Iterator[Path]:
    """A GHOST_HOME with a secret in it, where a real one lives (under the daemon user's home, not /tmp -
    the sandbox replaces /tmp, which would make the check pass for the wrong reason)."""
    base = Path(tempfile.mkdtemp(prefix="ghost-test-home-", dir=Path.home()))
    home = base / ".ghost"
    (home / "system").mkdir(parents=True)
    (home / "system" / "secret.txt").write_text("the daemon's secret\n")
    try:
        yield home
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A host directory outside /tmp and outside the workspace (writes there must never land)."""
    path = Path(tempfile.mkdtemp(prefix="ghost-test-host-", dir=Path.home()))
    os.chmod(path, 0o777)  # writable even to nobody on the host: only the sandbox's view can stop a write
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def new_marker() -> str:
    """A unique string to plant in sandboxed processes' command lines."""
    return f"ghost-marker-{uuid.uuid4().hex}"


def marked_pids(marker: str) -> list[int]:
    """Host pids of processes whose command line carries `marker`."""
    needle, out = marker.encode(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if needle in f.read():
                        out.append(int(name))
            except OSError:
                continue
    return out


def run_watching(
    backend: SandboxBackend, language: str, source: str, marker: str, *, limits: ExecLimits, **kw: Any
) -> tuple[ExecResult, set[int], int]:
    """Run in a thread while polling the host for processes carrying `marker`.

    Returns (result, every host pid seen with the marker, the most seen at once)."""
    box: dict[str, ExecResult] = {}
    thread = threading.Thread(target=lambda: box.update(r=backend.run_sync(language, source, limits=limits, **kw)))
    thread.start()
    seen: set[int] = set()
    peak = 0
    while thread.is_alive():
        pids = marked_pids(marker)
        seen.update(pids)
        peak = max(peak, len(pids))
        time.sleep(0.02)
    thread.join()
    return box["r"], seen, peak


def assert_all_gone(pids: set[int], marker: str, wait_s: float = 2.0) -> None:
    """Every pid is gone (reaped or being reaped) and no process carries the marker any more."""
    deadline = time.monotonic() + wait_s
    while marked_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.02)  # a SIGKILLed process still shows until its reaper collects it
    assert marked_pids(marker) == []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        try:  # still there: a zombie awaiting its reaper, or the pid reused by an unrelated process
            assert marker.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            continue


def leftover_cgroups() -> list[str]:
    """This process's execution cgroups still on disk (should always be empty after a run)."""
    support = CgroupSupport.probe()
    left: list[str] = []
    for parent in support.parents.values():
        if parent.is_dir():
            left += [str(p) for p in parent.iterdir() if p.name.startswith(f"exec-{os.getpid()}-")]
    return left

