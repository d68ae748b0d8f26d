"""Limits and execution semantics under bubblewrap: fork bombs, memory hogs, timeouts with escaping grandchildren,
output floods, file/tmp/fd limits, exit codes and output decoding, stdin, large programs, concurrency."""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_agent.sandbox.base import TRUNCATION_MARKER, ExecLimits, SandboxBackend, SandboxError
from ghost_agent.sandbox.bwrap import BwrapSandbox
from ghost_agent.sandbox.process import Rlimit, run_process
from tests.sandbox.conftest import (
    QUICK,
    assert_all_gone,
    leftover_cgroups,
    need_cgroups,
    new_marker,
    run_watching,
)

BOMB_LIMITS = ExecLimits(timeout_s=2.0, memory_mb=256, max_procs=24)
PY_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"


def host_is_fine() -> None:
    assert subprocess.run(["true"], timeout=10).returncode == 0


def python_bomb(marker: str) -> str:
    # exec'd with the marker as an argument, which every forked copy inherits in its command line
    return f"import os, sys\nos.execv(sys.executable, [sys.executable, '-c', {PY_BOMB!r}, {marker!r}])\n"


def test_a_bash_fork_bomb_is_contained_by_the_pids_cgroup(bwrap: SandboxBackend) -> None:
    need_cgroups("pids")
    marker = new_marker()
    source = f"exec -a {marker} bash -c ':(){{ :|:& }};:; sleep 30'"
    result, seen, peak = run_watching(bwrap, "bash", source, marker, limits=BOMB_LIMITS)
    assert result.timed_out and result.duration_ms < 4000, result
    assert seen and peak <= BOMB_LIMITS.max_procs, (len(seen), peak)
    assert any("process limit" in n for n in result.notes), result.notes
    assert_all_gone(seen, marker)
    host_is_fine()


def test_a_python_fork_loop_is_contained_by_the_pids_cgroup(bwrap: SandboxBackend) -> None:
    need_cgroups("pids")
    marker = new_marker()
    result, seen, peak = run_watching(bwrap, "python", python_bomb(marker), marker, limits=BOMB_LIMITS)
    assert result.timed_out and result.duration_ms < 4000, result
    assert seen and peak <= BOMB_LIMITS.max_procs, (len(seen), peak)
    assert_all_gone(seen, marker)
    host_is_fine()


def test_without_cgroups_rlimit_nproc_contains_a_fork_bomb(bwrap_rlimits: SandboxBackend) -> None:
    assert bwrap_rlimits.isolation.process_limit == "rlimit"
    marker = new_marker()
    result, seen, peak = run_watching(bwrap_rlimits, "python", python_bomb(marker), marker, limits=BOMB_LIMITS)
    assert result.timed_out, result
    assert seen and peak <= BOMB_LIMITS.max_procs, (len(seen), peak)
    assert_all_gone(seen, marker)
    host_is_fine()


@pytest.mark.parametrize(
    "hog",
    [
        "b = bytearray(256 * 1024 * 1024)",
        "import numpy as np\na = np.ones(256 * 1024 * 1024 // 8)",
    ],
    ids=["bytearray", "numpy"],
)
def test_a_memory_hog_is_oom_killed_by_the_cgroup(bwrap: SandboxBackend, hog: str) -> None:
    need_cgroups("memory")
    limits = ExecLimits(timeout_s=20.0, memory_mb=128)  # the hog asks for twice that
    result = bwrap.run_sync("python", f"print('start')\n{hog}\nprint('survived')", limits=limits)
    assert result.oom_killed and not result.timed_out, result
    assert result.stdout == "start\n" and result.exit_code == -9
    assert any("cgroup OOM" in n for n in result.notes), result.notes
    host_is_fine()


def test_without_cgroups_a_memory_hog_is_refused_under_rlimit_as(bwrap_rlimits: SandboxBackend) -> None:
    assert bwrap_rlimits.isolation.memory_limit == "rlimit"
    limits = ExecLimits(timeout_s=20.0, memory_mb=300)  # 2x = 600 MB > 300 + AS_OVERHEAD_MB
    result = bwrap_rlimits.run_sync("python", "b = bytearray(600 * 1024 * 1024)\nprint('survived')", limits=limits)
    assert result.oom_killed and "survived" not in result.stdout, result
    assert "MemoryError" in result.stderr
    assert any("RLIMIT_AS" in n for n in result.notes), result.notes


@pytest.mark.parametrize("language", ["python", "bash"])
def test_an_infinite_loop_is_killed_at_the_timeout_with_its_escaped_grandchildren(
    bwrap: SandboxBackend, language: str
) -> None:
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
    limits = ExecLimits(timeout_s=2.0)
    result, seen, _ = run_watching(bwrap, language, source, marker, limits=limits)
    assert result.timed_out and result.exit_code == -9, result
    assert 1900 <= result.duration_ms < 3500, result.duration_ms
    assert result.stdout == "spawned\n"  # printed before the kill: unbuffered
    assert seen, "the grandchild never showed up on the host; the check would prove nothing"
    assert_all_gone(seen, marker)


def test_an_output_flood_is_truncated_and_stays_fast(bwrap: SandboxBackend) -> None:
    limits = ExecLimits(timeout_s=20.0, max_output_bytes=64 * 1024)
    total = 30 * 1024 * 1024
    code = f"""
import sys
chunk = b"x" * 65536
for _ in range({total} // 65536):
    sys.stdout.buffer.write(chunk)
sys.stderr.write("e" * 100)
"""
    result = bwrap.run_sync("python", code, limits=limits)
    assert result.exit_code == 0 and result.truncated, result.notes
    assert result.stdout == "x" * limits.max_output_bytes + TRUNCATION_MARKER.format(
        dropped=total - limits.max_output_bytes
    )
    assert result.stderr == "e" * 100  # the other stream is untouched
    assert result.duration_ms < 5000, result.duration_ms


def test_an_endless_flood_is_cut_at_the_timeout(bwrap: SandboxBackend) -> None:
    result = bwrap.run_sync("bash", "yes", limits=ExecLimits(timeout_s=1.0, max_output_bytes=1000))
    assert result.timed_out and result.truncated
    assert result.stdout.startswith("y\ny\n") and "output truncated" in result.stdout
    assert len(result.stdout) < 1200


def test_stderr_is_separate_and_exit_codes_are_kept(bwrap: SandboxBackend) -> None:
    code = "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\nsys.exit(3)"
    result = bwrap.run_sync("python", code, limits=QUICK)
    assert (result.stdout, result.stderr, result.exit_code) == ("to out\n", "to err\n", 3)
    assert not result.ok
    assert bwrap.run_sync("bash", "echo hi; exit 7", limits=QUICK).exit_code == 7
    killed = bwrap.run_sync("python", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)", limits=QUICK)
    assert killed.exit_code == -15 and not killed.timed_out
    raised = bwrap.run_sync("python", "raise ValueError('boom')", limits=QUICK)
    assert raised.exit_code == 1 and "ValueError: boom" in raised.stderr and not raised.oom_killed


def test_unicode_and_binary_garbage_are_decoded_with_replacement(bwrap: SandboxBackend) -> None:
    code = "import sys\nprint('héllo ✓ 你好 🎉')\nsys.stdout.flush()\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00raw\\n')"
    result = bwrap.run_sync("python", code, limits=QUICK)
    assert result.exit_code == 0
    assert result.stdout.startswith("héllo ✓ 你好 🎉\n")
    assert "\ufffd\ufffd\x00raw\n" in result.stdout


def test_stdin_is_fed_to_the_program(bwrap: SandboxBackend) -> None:
    assert bwrap.run_sync("python", "print(input()[::-1])", limits=QUICK, stdin="olleh\n").stdout == "hello\n"
    big = "z" * (3 * 1024 * 1024)  # far beyond a pipe's buffer: written while output is read
    result = bwrap.run_sync("bash", "wc -c; echo done >&2", limits=QUICK, stdin=big)
    assert result.stdout.strip() == str(len(big)) and result.stderr == "done\n"
    # a program that never reads its stdin is not blocked by it
    assert bwrap.run_sync("python", "print('ignored')", limits=QUICK, stdin=big).stdout == "ignored\n"


def test_a_large_program_runs(bwrap: SandboxBackend) -> None:
    code = "x = '" + "a" * 3_000_000 + "'\nprint(len(x))\n"
    assert bwrap.run_sync("python", code, limits=QUICK).stdout == "3000000\n"


def test_file_size_open_files_and_tmp_are_capped(bwrap: SandboxBackend, tmp_path: Path) -> None:
    limits = ExecLimits(timeout_s=20.0, memory_mb=128, max_file_mb=1, max_open_files=64)
    code = """
import errno, json, os
out = {}
try:
    with open("/workspace/big", "wb") as f:
        f.write(b"x" * (2 * 1024 * 1024))
    out["fsize"] = "wrote"
except OSError as e:
    out["fsize"] = errno.errorcode[e.errno]
files = []
try:
    for i in range(200):
        files.append(open("/dev/null"))
    out["nofile"] = "opened"
except OSError as e:
    out["nofile"] = errno.errorcode[e.errno]
for f in files:
    f.close()
n = 0
try:
    for i in range(100):  # the /tmp cap is half of memory_mb: 64 MB
        with open(f"/tmp/f{i}", "wb") as f:
            f.write(b"y" * (1024 * 1024))
        n += 1
    out["tmp"] = "wrote"
except OSError as e:
    out["tmp"] = errno.errorcode[e.errno]
out["tmp_mb"] = n
print(json.dumps(out))
"""
    ws = tmp_path / "ws"
    ws.mkdir()
    result = bwrap.run_sync("python", code, limits=limits, workspace=ws)
    out = json.loads(result.stdout)
    assert out["fsize"] == "EFBIG" and (ws / "big").stat().st_size <= 1024 * 1024
    assert out["nofile"] == "EMFILE"
    assert out["tmp"] == "ENOSPC" and out["tmp_mb"] <= 64, out
    assert not result.oom_killed


def test_a_cpu_time_limit_kill_is_explained() -> None:
    # process.py on its own: a CPU rlimit far below the wall-clock timeout
    limits = ExecLimits(timeout_s=20.0)
    cpu = [Rlimit(resource.RLIMIT_CPU, 1, 2)]
    result = run_process(
        [sys.executable, "-c", "while True: pass"], env={}, cwd="/", limits=limits, rlimits=cpu, backend="test"
    )
    assert result.exit_code == -24 and not result.timed_out, result
    assert any("CPU-time limit" in n for n in result.notes), result.notes


async def test_concurrency_is_bounded(tmp_path: Path) -> None:
    sandbox = BwrapSandbox(concurrency=2)
    ws = tmp_path / "ws"
    ws.mkdir()

    def code(i: int) -> str:
        return f"import time\nt0 = time.time()\ntime.sleep(0.5)\nopen('span-{i}', 'w').write(f'{{t0}} {{time.time()}}')"

    results = await asyncio.gather(*(sandbox.run("python", code(i), limits=QUICK, workspace=ws) for i in range(6)))
    assert all(r.ok for r in results), results
    spans = [tuple(map(float, (ws / f"span-{i}").read_text().split())) for i in range(6)]
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    assert peak == 2, spans  # never more than 2, and 2 really ran at once


def test_no_cgroup_is_left_behind(bwrap: SandboxBackend) -> None:
    need_cgroups("memory")
    bwrap.run_sync("python", "print(1)", limits=QUICK)
    bwrap.run_sync("python", "while True: pass", limits=ExecLimits(timeout_s=0.5))
    assert leftover_cgroups() == []


def test_a_failing_bwrap_is_a_sandbox_error_not_a_program_failure(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxError, match="Creating new namespace failed"):
        BwrapSandbox(bwrap_path=str(fake), cgroups=False).run_sync("python", "print(1)", limits=QUICK)


def test_many_concurrent_executions_never_trip_over_each_others_cgroups(bwrap: SandboxBackend) -> None:
    """Executions starting while others finish share the cgroup parent: none may fail to set up (a race
    between one execution's cleanup and another's setup once failed the HumanEval suite under load)."""
    from concurrent.futures import ThreadPoolExecutor

    limits = ExecLimits(timeout_s=20)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: bwrap.run_sync("python", f"print({i})", limits=limits), range(48)))
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(48)]
    assert leftover_cgroups() == []
