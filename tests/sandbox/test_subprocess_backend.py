"""The restricted-subprocess fallback: what it enforces (tree kill, output cap, rlimits, nobody, cleared env, temp
cwd), that it reports itself as unisolated, and that it reports packages uid 65534 cannot reach (a checkout under a
private 0700 directory) instead of hiding it. No network tests here: it does not isolate the network."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from pathlib import Path

import pytest

from ghost_agent.sandbox.base import TRUNCATION_MARKER, ExecLimits, ExecResult, SandboxBackend
from ghost_agent.sandbox.detect import Detection, detection_verdict
from ghost_agent.sandbox.process import rlimits_for, run_process
from ghost_agent.sandbox.runtime import PythonRuntime
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox
from ghost_agent.tools.base import ToolContext
from ghost_agent.tools.registry import default_registry
from tests.sandbox.conftest import (
    QUICK,
    assert_all_gone,
    leftover_cgroups,
    marked_pids,
    need_cgroups,
    new_marker,
    run_watching,
)

ROOT = os.geteuid() == 0


def test_it_reports_itself_unisolated() -> None:
    iso = RestrictedSubprocessSandbox().isolation
    assert iso.backend == "subprocess"
    assert (iso.isolated, iso.network, iso.filesystem, iso.pid_namespace) == (False, False, False, False)
    assert "NO network or filesystem isolation" in iso.reason
    assert iso.memory_limit in ("cgroup", "rlimit")


@pytest.mark.skipif(not ROOT, reason="dropping to uid 65534 needs a root daemon")
def test_it_runs_as_nobody_when_root(fallback: SandboxBackend) -> None:
    code = "import json, os; print(json.dumps([os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]))"
    assert json.loads(fallback.run_sync("python", code, limits=QUICK).stdout) == [65534, 65534, 65534, []]
    # ordinary permissions now apply: root's files are out of reach
    shadow = fallback.run_sync("bash", "cat /etc/shadow", limits=QUICK)
    assert shadow.exit_code != 0 and "Permission denied" in shadow.stderr


def test_the_environment_is_cleared(fallback: SandboxBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHOST_API_KEY", "sk-daemon-secret")
    env = json.loads(fallback.run_sync("python", "import json, os; print(json.dumps(dict(os.environ)))",
                                       limits=QUICK).stdout)
    assert not [k for k in env if k.startswith("GHOST_")] and "sk-" not in json.dumps(env)
    assert env["LANG"] == "C.UTF-8" and env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_a_temp_cwd_is_used_and_removed(fallback: SandboxBackend) -> None:
    result = fallback.run_sync("python", "import os; open('f', 'w').write('x'); print(os.getcwd())", limits=QUICK)
    cwd = Path(result.stdout.strip())
    assert result.ok and cwd.name.startswith("ghost-sbx-ws-")
    assert not cwd.exists()


def test_the_workspace_is_the_cwd_and_keeps_what_was_written(fallback: SandboxBackend, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "given.txt").write_text("host\n")
    result = fallback.run_sync("bash", "echo inside >> given.txt; echo new > new.txt", limits=QUICK, workspace=ws)
    assert result.ok, result
    assert (ws / "given.txt").read_text() == "host\ninside\n" and (ws / "new.txt").read_text() == "new\n"


def test_numpy_and_pandas_are_importable_or_reported_unreachable(fallback: SandboxBackend) -> None:
    """Wherever the checkout lives: the daemon's packages import, or (a checkout under a private 0700 directory,
    daemon root, code run as uid 65534) the fallback says they are out of reach, everywhere it reports."""
    assert isinstance(fallback, RestrictedSubprocessSandbox)
    code = "import numpy, pandas, sqlite3; print(int(pandas.Series(numpy.arange(4)).sum()))"
    result = fallback.run_sync("python", code, limits=QUICK)
    packages = fallback.isolation.details["packages"]
    if not fallback.unreachable_sites:
        assert result.stdout == "6\n", result
        assert packages == {"reachable": True, "unreachable": []} and fallback.isolation.warnings == ()
        return
    assert ROOT, "only a root daemon drops to a uid that can lack access"
    assert result.exit_code != 0 and "No module named 'numpy'" in result.stderr, result
    assert "cannot read the daemon's Python packages" in result.stderr and result.notes
    assert packages["reachable"] is False and packages["unreachable"]
    assert "NOT reachable by uid 65534" in fallback.isolation.warnings[0]


@pytest.fixture
def private_site(tmp_path: Path) -> Path:
    """A site-packages dir holding one module, under a 0700 directory (as a venv in a checkout in a private home)."""
    private = tmp_path / "private-home"
    site = private / "checkout" / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "ghost_private_pkg.py").write_text("VALUE = 6\n")
    private.chmod(0o700)
    return site


@pytest.mark.skipif(not ROOT, reason="a non-root daemon runs code as itself: its own venv is always reachable")
async def test_packages_out_of_reach_are_reported_not_hidden(private_site: Path) -> None:
    base = PythonRuntime.discover(hidden=[])
    runtime = dataclasses.replace(base, site_dirs=(*base.site_dirs, str(private_site)))
    backend = RestrictedSubprocessSandbox(runtime=runtime)

    # what the operator sees: /health detail and `sandbox info` (isolation), doctor (WARN with the fix)
    packages = backend.isolation.details["packages"]
    assert packages["reachable"] is False
    [blocked] = [u for u in packages["unreachable"] if u["path"] == str(private_site)]
    blocker = blocked["blocked_at"].split(" (")[0]
    assert str(private_site).startswith(blocker + "/") and "mode 07" in blocked["blocked_at"]
    warning = backend.isolation.warnings[0]
    assert "NOT reachable by uid 65534" in warning and "make sandbox" in warning
    det = Detection("subprocess", "subprocess", backend, backend.isolation, [], "test")
    assert warning in det.to_dict()["warnings"] and det.to_dict()["degraded"] is True
    status, detail, fix = detection_verdict(det)
    assert status == "WARN" and warning in detail and "make sandbox" in fix

    # what the model sees: the failed import, and why, in the tool result
    result = backend.run_sync("python", "import ghost_private_pkg", limits=QUICK)
    assert result.exit_code == 1 and "No module named 'ghost_private_pkg'" in result.stderr
    assert result.stderr.rstrip().endswith("(make sandbox / ghost-agent sandbox setup).") and result.notes
    tool = await default_registry().call(
        "python", {"code": "import ghost_private_pkg"}, ToolContext(workspace=private_site.parent / "ws",
                                                                     sandbox=backend, limits=QUICK))
    assert not tool.ok and "cannot read the daemon's Python packages" in tool.to_message()
    # code that needs no package is not cluttered with the note
    plain = backend.run_sync("python", "import json; print(json.dumps(6))", limits=QUICK)
    assert plain.ok and plain.stdout == "6\n" and plain.stderr == "" and plain.notes == []


@pytest.mark.parametrize("language", ["python", "bash"])
def test_the_timeout_kills_setsid_and_double_forked_grandchildren(fallback: SandboxBackend, language: str) -> None:
    need_cgroups("pids")  # a grandchild that left the process group is only reachable through the cgroup
    marker = new_marker()
    if language == "python":
        source = f"""
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time\\nwhile True: time.sleep(0.05)", {marker!r}])
    os._exit(0)
print("spawned")
while True:
    pass
"""
    else:
        source = f"( setsid bash -c 'exec -a {marker} sleep 300' & )\necho spawned\nwhile :; do :; done\n"
    result, seen, _ = run_watching(fallback, language, source, marker, limits=ExecLimits(timeout_s=1.5))
    assert result.timed_out and result.exit_code == -9 and result.stdout == "spawned\n", result
    assert 1400 <= result.duration_ms < 3000, result.duration_ms
    assert seen, "the grandchild never showed up; the check would prove nothing"
    assert_all_gone(seen, marker)
    assert leftover_cgroups() == []


def test_background_children_die_with_the_program(fallback: SandboxBackend) -> None:
    marker = new_marker()
    source = f"bash -c 'exec -a {marker} sleep 300' &\nsleep 0.3\necho done\n"
    result, seen, _ = run_watching(fallback, "bash", source, marker, limits=ExecLimits(timeout_s=10.0))
    assert result.ok and result.stdout == "done\n" and result.duration_ms < 3000, result
    assert seen
    assert_all_gone(seen, marker)


def test_without_a_cgroup_the_process_group_is_still_killed() -> None:
    # process.py alone, no cgroup: killpg reaches every descendant that stayed in the program's session
    marker = new_marker()
    limits = ExecLimits(timeout_s=1.0)
    box: dict[str, ExecResult] = {}

    def run() -> None:
        box["r"] = run_process(
            ["bash", "-c", f"bash -c 'exec -a {marker} sleep 300' & wait"],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            limits=limits,
            rlimits=rlimits_for(limits, nproc=False),
            backend="test",
        )

    thread = threading.Thread(target=run)
    thread.start()
    seen: set[int] = set()
    while thread.is_alive():
        seen.update(marked_pids(marker))
        time.sleep(0.02)
    thread.join()
    assert box["r"].timed_out and seen
    assert_all_gone(seen, marker)


def test_output_is_capped(fallback: SandboxBackend) -> None:
    limits = ExecLimits(timeout_s=20.0, max_output_bytes=1000)
    result = fallback.run_sync("python", "print('a' * 5000, end='')", limits=limits)
    assert result.truncated and result.stdout == "a" * 1000 + TRUNCATION_MARKER.format(dropped=4000)


def test_memory_is_limited(fallback: SandboxBackend) -> None:
    limits = ExecLimits(timeout_s=20.0, memory_mb=300)  # 600 MB: over the cgroup limit and over RLIMIT_AS
    result = fallback.run_sync("python", "b = bytearray(600 * 1024 * 1024)\nprint('survived')", limits=limits)
    assert result.oom_killed and "survived" not in result.stdout, result
    assert result.notes


def test_a_fork_bomb_is_contained(fallback: SandboxBackend) -> None:
    if fallback.isolation.process_limit == "none":
        pytest.skip("no process limit here (no pids cgroup, not root)")
    marker = new_marker()
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    source = f"import os, sys\nos.execv(sys.executable, [sys.executable, '-c', {bomb!r}, {marker!r}])\n"
    limits = ExecLimits(timeout_s=1.5, max_procs=16)
    result, seen, peak = run_watching(fallback, "python", source, marker, limits=limits)
    assert result.timed_out and seen and peak <= limits.max_procs, (len(seen), peak)
    assert_all_gone(seen, marker)


def test_file_size_is_limited(fallback: SandboxBackend, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    code = "import errno\ntry:\n    open('big', 'wb').write(b'x' * 3_000_000)\nexcept OSError as e:\n" \
           "    print(errno.errorcode[e.errno])\n"
    result = fallback.run_sync("python", code, limits=ExecLimits(max_file_mb=1), workspace=ws)
    assert result.stdout == "EFBIG\n" and (ws / "big").stat().st_size <= 1024 * 1024


def test_exit_codes_stderr_and_stdin(fallback: SandboxBackend) -> None:
    result = fallback.run_sync("python", "import sys\nprint(input().upper())\nprint('e', file=sys.stderr)\nsys.exit(3)",
                               limits=QUICK, stdin="abc\n")
    assert (result.stdout, result.stderr, result.exit_code) == ("ABC\n", "e\n", 3)
    assert result.backend == "subprocess"
