"""The workspace quota during a run (issue 20, item 4): how much one call can leave behind, how far past the quota a
fast writer gets before it is stopped, and what watching costs a normal call.

    python bench/bench_workspace_quota.py [--quotas 64 256] [--sandbox auto] [--runs 30] [--dir DIR]

For each quota and writer (each would write 1 GB if nothing stopped it): the largest file and the bytes the call
leaves in the workspace, the peak the workspace reached during the call (the overshoot), and how long the call
ran - with the guard (sandbox/quota.py), and as before it (RLIMIT_FSIZE lowered to the quota, nothing else).
Then the cost on a normal short call (`print(1)`) in a small and a larger workspace: the guard's own work timed
directly (the count before, the polls such a call makes, the last check: a full count unless nothing at all was
written on the filesystem meanwhile, so measured both ways), and the whole call unwatched, counted
first (what the tool layer did before) and guarded, interleaved in the same run (differences of a few ms are
within this noise); and the daemon CPU the guard spends per second of a call that only sleeps.
Writes up to 1 GB at a time under --dir (default: the system temp dir; it must be a disk, not a tmpfs).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import structlog

from ghost_agent.sandbox import ExecLimits, SandboxBackend, get_sandbox
from ghost_agent.sandbox.quota import WorkspaceGuard
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox
from ghost_agent.sandbox.usage import measure
from ghost_agent.settings import Settings

MB = 1024 * 1024
TOTAL_MB = 1024  # what every writer writes when nothing stops it

WRITERS: dict[str, tuple[str, str]] = {
    "one big file": ("python", f"b = b'x' * (1 << 20)\nwith open('big.bin', 'wb') as f:\n"
                               f"    for _ in range({TOTAL_MB}):\n        f.write(b)\n"),
    "many 1 MB files": ("python", f"b = b'x' * (1 << 20)\nfor i in range({TOTAL_MB}):\n"
                                  "    with open(f'f{i:05}.bin', 'wb') as f:\n        f.write(b)\n"),
    "many 16 KB files": ("python", f"b = b'x' * (16 << 10)\nfor i in range({TOTAL_MB * 64}):\n"
                                   "    with open(f's{i:06}.bin', 'wb') as f:\n        f.write(b)\n"),
    "dd, 16 x 64 MB": ("bash", "for i in $(seq 16); do dd if=/dev/zero of=dd$i.bin bs=4M count=16 status=none; done"),
    "4 writers at once": ("bash", "for j in 1 2 3 4; do python3 -c \"\nb = b'x' * (1 << 20)\n"
                                  f"for i in range({TOTAL_MB // 4}):\n"
                                  "    open(f'p$j-{i:04}.bin', 'wb').write(b)\n\" & done; wait"),
}


@dataclass
class Left:
    largest: int
    total: int
    peak: int
    ms: float
    stopped: str


def fresh(base: Path, name: str) -> Path:
    path = base / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.sync()  # the last run's writes and deletions flushed, not slowing this one
    return path


def largest_file(path: Path) -> int:
    return max((p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()), default=0)


def write_run(backend: SandboxBackend, base: Path, writer: str, quota_mb: int, guarded: bool) -> Left:
    language, code = WRITERS[writer]
    ws = fresh(base, "writer")
    # Before: the tool layer lowered RLIMIT_FSIZE (64 MB by default) to the quota left, and that was all.
    limits = ExecLimits(timeout_s=60, memory_mb=512, max_file_mb=min(64, quota_mb))
    if guarded:
        entries = max(1024, quota_mb * MB // 4096)  # what Workspaces gives a quota by default
        limits = ExecLimits(timeout_s=60, memory_mb=512, workspace_bytes=quota_mb * MB, workspace_entries=entries)
    t0 = time.perf_counter()
    result = backend.run_sync(language, code, limits=limits, workspace=ws)
    ms = (time.perf_counter() - t0) * 1000
    tally = measure(ws, bound=None)
    report = result.workspace
    left = Left(largest_file(ws), tally.bytes, report.peak_bytes if report else tally.bytes, ms,
                (report.exceeded + (" (stopped)" if report.stopped else " (after)")) if report and report.exceeded
                else ("FSIZE" if result.exit_code not in (0, None) else "-"))
    shutil.rmtree(ws, ignore_errors=True)
    return left


def call_ms(backend: SandboxBackend, ws: Path, limits: ExecLimits) -> float:
    t0 = time.perf_counter()
    result = backend.run_sync("python", "print(1)", limits=limits, workspace=ws)
    if result.stdout != "1\n":
        raise SystemExit(f"normal call failed: {result.to_dict()}")
    return (time.perf_counter() - t0) * 1000


def populate(ws: Path, files: int) -> None:
    for i in range(files):
        sub = ws / f"d{i // 100}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i}.txt").write_bytes(b"x" * 1000)


def counted_call_ms(backend: SandboxBackend, ws: Path, limits: ExecLimits) -> float:
    """What a call cost before: the tool layer counted the workspace, then the program ran."""
    t0 = time.perf_counter()
    measure(ws)
    counted = (time.perf_counter() - t0) * 1000
    return counted + call_ms(backend, ws, limits)


def guard_ms(ws: Path, limits: ExecLimits, polls: int, runs: int, elsewhere: Path | None) -> float:
    """The guard's own work on a short call that writes nothing, timed directly (median): the count before,
    `polls` polls, the last check. With `elsewhere`, a block is written there (the same filesystem) during the
    call, as a busy daemon would: the last check is then a full count."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        guard = WorkspaceGuard(ws, limits)
        for _ in range(polls):
            guard.poll(time.monotonic())
        if elsewhere is not None:
            t1 = time.perf_counter()
            with open(elsewhere, "ab") as f:
                f.write(b"x" * 4096)
            t0 += time.perf_counter() - t1
        guard.finish()
        guard.close()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def overhead(
    backend: SandboxBackend, base: Path, files: int, runs: int
) -> tuple[float, float, float, float, float, int]:
    """Medians (ms) of a normal call: nothing watched, the count before the call (as before), the guard; and
    the guard's own work timed directly (quiet filesystem, busy filesystem), with the polls one such call made."""
    ws = fresh(base, f"normal-{files}")
    populate(ws, files)
    plain = ExecLimits(timeout_s=20)
    guarded = ExecLimits(timeout_s=20, workspace_bytes=256 * MB, workspace_entries=65536)
    call_ms(backend, ws, plain)
    report = backend.run_sync("python", "print(1)", limits=guarded, workspace=ws).workspace
    polls = report.polls if report else 0
    quiet, busy = guard_ms(ws, guarded, polls, runs, None), guard_ms(ws, guarded, polls, runs, base / "elsewhere")
    bare: list[float] = []
    counted: list[float] = []
    watched: list[float] = []
    for _ in range(runs):  # interleaved: machine noise hits all alike
        bare.append(call_ms(backend, ws, plain))
        counted.append(counted_call_ms(backend, ws, plain))
        watched.append(call_ms(backend, ws, guarded))
    shutil.rmtree(ws, ignore_errors=True)
    return statistics.median(bare), statistics.median(counted), statistics.median(watched), quiet, busy, polls


def cpu_per_second(backend: SandboxBackend, base: Path, guarded: bool, seconds: float = 2.0) -> float:
    """Daemon-side CPU (this process) per second of a call that only sleeps."""
    ws = fresh(base, "sleeper")
    limits = ExecLimits(timeout_s=20)
    if guarded:
        limits = ExecLimits(timeout_s=20, workspace_bytes=256 * MB, workspace_entries=65536)
    c0 = time.process_time()
    backend.run_sync("python", f"import time\ntime.sleep({seconds})", limits=limits, workspace=ws)
    return (time.process_time() - c0) / seconds * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quotas", type=int, nargs="*", default=[64, 256], help="none: only the cost figures")
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "subprocess"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))  # figures only

    backend = get_sandbox(Settings.from_keys(sandbox=args.sandbox))
    backends = [backend] + ([RestrictedSubprocessSandbox()] if backend.name != "subprocess" else [])
    base = Path(tempfile.mkdtemp(prefix="ghost-bench-quota-", dir=args.dir))
    os.chmod(base, 0o755)  # the fallback runs as uid 65534 on host paths
    try:
        st = os.statvfs(base)
        print(f"# workspace quota during a run; under {base} ({st.f_bavail * st.f_frsize / 2**30:.0f} GB free); "
              f"each writer writes {TOTAL_MB} MB unless stopped")
        for b in backends:
            print(f"\n## {b.name}: what one call leaves (largest file / total) and the peak during it")
            print(f"{'quota':>6}  {'writer':<18} {'before (FSIZE only)':>32}   {'with the guard':>44}")
            for quota in args.quotas:
                for writer in WRITERS:
                    old = write_run(b, base, writer, quota, guarded=False)
                    new = write_run(b, base, writer, quota, guarded=True)
                    print(f"{quota:>4} MB  {writer:<18} {old.largest / MB:7.0f} / {old.total / MB:6.0f} MB "
                          f"{old.ms:6.0f} ms   {new.largest / MB:6.1f} / {new.total / MB:6.1f} MB, peak "
                          f"{new.peak / MB:6.1f} MB (+{max(0, new.peak - quota * MB) / MB:4.1f}) {new.ms:5.0f} ms "
                          f"[{new.stopped}]")
        print(f"\n## cost on a normal call (`print(1)`), medians of {args.runs} interleaved runs")
        for b in backends:
            for files in (20, 2000):
                bare, counted, watched, quiet, busy, polls = overhead(b, base, files, args.runs)
                print(f"{b.name:<11} {files:>5} files: the guard's own work {quiet:5.2f} ms on a quiet filesystem, "
                      f"{busy:5.2f} ms on a busy one (count before, {polls} polls, last check); whole call: "
                      f"unwatched {bare:6.1f} ms, counted first (before) {counted:6.1f} ms, guarded {watched:6.1f} ms")
        for b in backends:
            without, with_guard = cpu_per_second(b, base, False), cpu_per_second(b, base, True)
            print(f"{b.name:<11} daemon CPU per second of a sleeping call: without {without:4.1f} ms, "
                  f"with the guard {with_guard:4.1f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
