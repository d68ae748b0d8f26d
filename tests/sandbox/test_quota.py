"""The workspace quota held during a run (sandbox/quota.py): real programs in the real backends, real files.

Each program would write far past its budget if nothing stopped it; the checks are that it was stopped during the
run, that the workspace ends within the budget, that what existed before is kept, and that what was taken back is
reported. No sleeps: the runs end on their own (or are killed), and the figures are read afterwards.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ghost_agent.sandbox.base import ExecLimits, SandboxBackend
from ghost_agent.sandbox.quota import WorkspaceGuard, guard_workspace
from ghost_agent.sandbox.usage import MAX_DEPTH, measure

MB = 1024 * 1024
BACKENDS = ["bwrap", "fallback"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> SandboxBackend:
    """Each backend that can write to a workspace (skipped, with the reason, where it cannot run)."""
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def budget(mb: float, entries: int = 10_000, timeout_s: float = 30.0) -> ExecLimits:
    return ExecLimits(timeout_s=timeout_s, memory_mb=256, max_procs=32, workspace_bytes=int(mb * MB),
                      workspace_entries=entries)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_many_files_written_fast_are_stopped_during_the_run(backend: SandboxBackend, workspace: Path) -> None:
    keep = workspace / "keep.bin"
    keep.write_bytes(os.urandom(MB))
    before = digest(keep)
    code = (
        "block = b'x' * (1 << 20)\n"
        "for i in range(2000):\n"  # 2 GB if nothing stops it
        "    with open(f'out/f{i:04}.bin', 'wb') as f:\n"
        "        f.write(block)\n"
        "print('all written')\n"
    )
    (workspace / "out").mkdir()
    result = backend.run_sync("python", code, limits=budget(16), workspace=workspace)
    report = result.workspace
    assert report is not None and report.exceeded == "bytes" and report.stopped, result.notes
    assert result.exit_code == -9 and "all written" not in result.stdout
    assert measure(workspace).bytes <= 16 * MB == report.limit_bytes
    assert report.bytes_after == measure(workspace).bytes
    assert report.peak_bytes > 16 * MB  # the overshoot a count saw before the kill
    assert keep.exists() and digest(keep) == before
    # The newest were taken back, not the first (an empty file the kill interrupted costs nothing and stays).
    written = sorted(p.name for p in (workspace / "out").iterdir() if p.stat().st_size)
    assert written == [f"f{i:04}.bin" for i in range(len(written))]
    assert report.trimmed_count >= 1 and report.trimmed[0].action == "removed"
    assert {t.path for t in report.trimmed}.isdisjoint({"keep.bin"})
    assert any("workspace budget exceeded (bytes), stopped during the run" in n for n in result.notes)


def test_one_big_file_is_stopped_by_the_file_size_limit(backend: SandboxBackend, workspace: Path) -> None:
    (workspace / "old.bin").write_bytes(b"o" * (3 * MB))
    code = "with open('big.bin', 'wb') as f:\n    f.write(b'x' * (40 << 20))\n"
    result = backend.run_sync("python", code, limits=budget(8), workspace=workspace)
    assert result.exit_code == 1 and "File too large" in result.stderr  # RLIMIT_FSIZE: the 5 MB left
    assert result.workspace is not None and not result.workspace.exceeded
    assert (workspace / "big.bin").stat().st_size == 5 * MB
    assert measure(workspace).bytes == 8 * MB


def test_files_that_existed_are_kept_and_grown_ones_cut_back(backend: SandboxBackend, workspace: Path) -> None:
    untouched = workspace / "untouched.bin"
    untouched.write_bytes(os.urandom(2 * MB))
    a, b = workspace / "a.log", workspace / "b.log"
    a.write_bytes(b"A" * MB)
    b.write_bytes(b"B" * MB)
    before = digest(untouched)
    # Each log may grow to the room left (RLIMIT_FSIZE), so two of them together pass the budget.
    code = (
        "chunk = b'+' * (1 << 20)\n"
        "for i in range(60):\n"
        "    for name in ('a.log', 'b.log'):\n"
        "        with open(name, 'ab') as f:\n"
        "            f.write(chunk)\n"
    )
    result = backend.run_sync("python", code, limits=budget(16), workspace=workspace)
    report = result.workspace
    assert report is not None and report.exceeded == "bytes", (result.stderr, result.notes)
    assert measure(workspace).bytes <= 16 * MB
    assert digest(untouched) == before
    for log, mark in ((a, b"A"), (b, b"B")):
        data = log.read_bytes()
        assert len(data) >= MB and data[:MB] == mark * MB  # never below its size before the run
    cut = [t for t in report.trimmed if t.action == "truncated"]
    assert cut and {t.path for t in cut} <= {"a.log", "b.log"}
    assert any(log.stat().st_size == MB for log in (a, b))


def test_a_normal_run_in_a_nearly_full_workspace_is_unaffected(backend: SandboxBackend, workspace: Path) -> None:
    (workspace / "filler.bin").write_bytes(b"f" * (8 * MB - 100_000))
    code = "open('result.txt', 'w').write('42\\n' * 1000)\nprint(open('result.txt').read().count('42'))"
    result = backend.run_sync("python", code, limits=budget(8), workspace=workspace)
    assert result.ok and result.stdout == "1000\n", (result.stderr, result.notes)
    report = result.workspace
    assert report is not None and not report.exceeded and not report.stopped and report.trimmed == []
    assert (workspace / "result.txt").stat().st_size == 3000
    assert result.notes == []


def test_an_entry_flood_is_stopped(backend: SandboxBackend, workspace: Path) -> None:
    (workspace / "mine").mkdir()
    for i in range(10):
        (workspace / "mine" / f"keep{i}.txt").write_text("k")
    code = (
        "import os\n"
        "os.mkdir('flood')\n"
        "for i in range(1_000_000):\n"
        "    os.close(os.open(f'flood/e{i}', os.O_CREAT | os.O_WRONLY, 0o644))\n"
        "print('a million')\n"
    )
    result = backend.run_sync("python", code, limits=budget(64, entries=2000), workspace=workspace)
    report = result.workspace
    assert report is not None and report.exceeded == "entries" and report.stopped, result.notes
    assert "a million" not in result.stdout
    tally = measure(workspace)
    assert tally.entries <= 2000 == report.limit_entries and report.entries_after == tally.entries
    assert report.peak_entries > 2000
    assert sorted(p.name for p in (workspace / "mine").iterdir()) == [f"keep{i}.txt" for i in range(10)]


def test_folders_nested_past_the_walk_depth_are_stopped_and_removed(
    backend: SandboxBackend, workspace: Path
) -> None:
    # Below MAX_DEPTH a count cannot see: writing there must not be a way around the quota.
    code = (
        "import os\n"
        f"path = '/'.join(['d'] * {MAX_DEPTH + 20})\n"
        "os.makedirs(path)\n"
        "block = b'x' * (1 << 20)\n"
        "for i in range(500):\n"
        "    with open(os.path.join(path, f'f{i}'), 'wb') as f:\n"
        "        f.write(block)\n"
    )
    (workspace / "kept.txt").write_text("kept")
    result = backend.run_sync("python", code, limits=budget(8), workspace=workspace)
    report = result.workspace
    assert report is not None and report.exceeded == "depth" and report.stopped, (result.stderr, result.notes)
    assert report.trimmed[0].action == "removed" and report.trimmed[0].path.count("/") == MAX_DEPTH - 1
    assert measure(workspace).deep == []
    assert (workspace / "kept.txt").read_text() == "kept"


def test_links_are_never_followed(backend: SandboxBackend, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "huge.bin").write_bytes(b"h" * (20 * MB))
    (workspace / "to_outside").symlink_to(outside)
    code = "import os\nos.symlink('/', 'root')\nos.symlink('.', 'loop')\nprint('linked')"
    result = backend.run_sync("python", code, limits=budget(4), workspace=workspace)
    assert result.ok and result.stdout == "linked\n", (result.stderr, result.notes)
    assert result.workspace is not None and not result.workspace.exceeded
    assert measure(workspace).bytes == 0 and measure(workspace).entries == 3
    assert (outside / "huge.bin").stat().st_size == 20 * MB


def test_an_over_quota_workspace_may_shrink_but_not_grow(backend: SandboxBackend, workspace: Path) -> None:
    (workspace / "a.bin").write_bytes(b"a" * (6 * MB))
    (workspace / "b.bin").write_bytes(b"b" * (6 * MB))  # 12 MB in a 4 MB budget: the quota was lowered
    shrink = backend.run_sync("bash", "rm b.bin && head -c 100000 /dev/zero > small.bin && echo ok",
                              limits=budget(4), workspace=workspace)
    assert shrink.ok and shrink.stdout == "ok\n", (shrink.stderr, shrink.notes)
    assert shrink.workspace is not None and shrink.workspace.over_before and not shrink.workspace.exceeded
    grow = backend.run_sync("bash", "head -c 3000000 /dev/zero > more.bin; echo written",
                            limits=budget(4), workspace=workspace)
    assert grow.workspace is not None and grow.workspace.exceeded == "bytes"
    assert not (workspace / "more.bin").exists()
    assert measure(workspace).bytes == 6 * MB + 100_000


# --- the guard on its own: what a program left behind when it ended before any check saw it


def test_what_a_run_left_over_the_budget_is_taken_back_after_it(workspace: Path) -> None:
    (workspace / "old.txt").write_bytes(b"o" * MB)
    limits = budget(4)
    with guard_workspace(workspace, limits) as guard:
        assert isinstance(guard, WorkspaceGuard) and guard.limits.max_file_mb == 3  # the room left
        # What a fast program could do between two checks: three files, then it exits.
        for name in ("one.bin", "two.bin", "three.bin"):
            (workspace / name).write_bytes(b"n" * (2 * MB))
            os.utime(workspace / name, ns=(0, {"one.bin": 1, "two.bin": 2, "three.bin": 3}[name] * 10**9))
        report = guard.finish()
    assert report.exceeded == "bytes" and not report.stopped
    # 7 MB in a 4 MB budget: the newest files go until it fits (three, then two); one stays.
    assert [(t.path, t.action) for t in report.trimmed] == [("three.bin", "removed"), ("two.bin", "removed")]
    assert sorted(p.name for p in workspace.iterdir()) == ["old.txt", "one.bin"]
    assert report.bytes_after == 3 * MB and report.trimmed_bytes == 4 * MB


def test_only_what_is_needed_is_taken_back(workspace: Path) -> None:
    with guard_workspace(workspace, budget(4)) as guard:
        assert guard is not None
        (workspace / "big.bin").write_bytes(b"b" * (5 * MB))
        os.utime(workspace / "big.bin", ns=(0, 10**9))
        (workspace / "note.txt").write_text("newest, small")  # newer, but removing it would not be enough
        report = guard.finish()
    assert [t.path for t in report.trimmed] == ["big.bin"]
    assert (workspace / "note.txt").exists()


def test_a_file_made_read_only_is_still_cut_back(workspace: Path) -> None:
    log = workspace / "log.txt"
    log.write_bytes(b"L" * MB)
    with guard_workspace(workspace, budget(2)) as guard:
        assert guard is not None
        with open(log, "ab") as f:
            f.write(b"+" * (3 * MB))
        log.chmod(0o444)
        report = guard.finish()
    assert [(t.path, t.action, t.bytes) for t in report.trimmed] == [("log.txt", "truncated", 3 * MB)]
    assert log.read_bytes() == b"L" * MB


def test_no_budget_no_guard(workspace: Path) -> None:
    with guard_workspace(workspace, ExecLimits()) as guard:
        assert guard is None
