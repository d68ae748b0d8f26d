"""Per-session workspaces: names that never escape the root, quota by usage, cleanup by age without following
symlinks, in-use workspaces left alone."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.sandbox import BwrapSandbox, ExecLimits, SandboxError, Workspaces, workspace_name
from ghost_agent.sandbox.bwrap import has_cap_sys_admin

DAY = 86400.0

HOSTILE_IDS = ["../..", "..", ".", "/etc", "/", "", "a/../../b", "ünïcødé-séssion", "x" * 300, "a\x00b", "-rf",
               ".hidden", "sess\nion", "C:\\Windows"]


@pytest.fixture
def ws(tmp_path: Path) -> Workspaces:
    return Workspaces(tmp_path / "workspace", quota_mb=1, max_age_days=7)


def age(path: Path, seconds: float) -> None:
    """Set every mtime under `path` (itself included, links not followed) `seconds` in the past."""
    when = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (when, when), follow_symlinks=False)
    os.utime(path, (when, when))


# ------------------------------------------------------------------------------------------------- naming


def test_a_plain_session_id_is_its_own_directory(ws: Workspaces) -> None:
    path = ws.path_for("sess-42_a.b")
    assert path == ws.root.resolve() / "sess-42_a.b" and path.is_dir()
    assert (path.stat().st_mode & 0o777) == 0o700


@pytest.mark.parametrize("session_id", HOSTILE_IDS)
def test_hostile_ids_stay_inside_the_root(ws: Workspaces, session_id: str) -> None:
    path = ws.path_for(session_id)
    root = ws.root.resolve()
    assert path.parent == root and path.resolve().parent == root
    assert path.is_dir() and not path.is_symlink()
    name = path.name
    assert name not in (".", "..") and not name.startswith((".", "-"))
    assert len(name) <= 64 and all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
    assert list(root.iterdir()) == [path]  # nothing was created anywhere else under the root


def test_names_are_stable_and_distinct() -> None:
    ids = HOSTILE_IDS + ["a b", "a_b", "a?b", "x" * 299, "ÿ", "y"]
    names = [workspace_name(i) for i in ids]
    assert len(set(names)) == len(ids)  # sanitizing alike-looking ids never merges two sessions
    assert [workspace_name(i) for i in ids] == names


@pytest.mark.parametrize("secret", [
    "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",  # short and safe-charactered: it used to be the name itself
    "sk-proj-Ab1_Cd2-Ef3Ab1_Cd2-Ef3Ab1_Cd2-Ef3Ab1_Cd2-Ef3",
    "password=hunter2hunter2",  # unsafe characters: its first 40 used to prefix the name
    "alice@example.com",
])
def test_a_secret_used_as_a_session_id_never_names_a_directory(ws: Workspaces, secret: str) -> None:
    path = ws.path_for(secret)
    assert path.name.startswith("REDACTED_") and not any(part in path.name for part in ("ghp_", "sk-", "hunter2",
                                                                                        "alice", "example"))
    assert ws.path_for(secret) == path and ws.path_for(secret + "x") != path  # stable per session, distinct


def test_persistent_across_turns(ws: Workspaces) -> None:
    first = ws.path_for("s1")
    (first / "data.csv").write_text("a,b\n1,2\n")
    again = ws.path_for("s1")
    assert again == first and (again / "data.csv").read_text() == "a,b\n1,2\n"


def test_a_symlink_in_place_of_a_workspace_is_refused(ws: Workspaces, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws.root.mkdir(parents=True)
    (ws.root / "planted").symlink_to(outside)
    with pytest.raises(SandboxError, match="not a directory"):
        ws.path_for("planted")


# -------------------------------------------------------------------------------------------------- quota


def test_usage_and_quota(ws: Workspaces) -> None:
    assert ws.usage("never-made") == 0 and not ws.check_quota("never-made").exceeded
    path = ws.path_for("q")
    (path / "sub").mkdir()
    (path / "a.bin").write_bytes(b"x" * 300_000)
    (path / "sub" / "b.bin").write_bytes(b"y" * 200_000)
    assert ws.usage("q") == 500_000
    status = ws.check_quota("q")
    assert (status.used, status.limit, status.exceeded) == (500_000, 1024 * 1024, False)
    (path / "sub" / "c.bin").write_bytes(b"z" * 600_000)
    status = ws.check_quota("q")
    assert status.used == 1_100_000 and status.exceeded


def test_the_entry_limit_follows_the_quota(tmp_path: Path) -> None:
    # One entry per 4 KB of quota (the least a file takes on disk), 1024 at least, unless given.
    assert Workspaces(tmp_path, quota_mb=256, max_age_days=0).max_entries == 65_536
    assert Workspaces(tmp_path, quota_mb=1, max_age_days=0).max_entries == 1024
    assert Workspaces(tmp_path, quota_mb=1, max_age_days=0, max_entries=10).max_entries == 10


def test_usage_does_not_follow_symlinks(ws: Workspaces, tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    (big / "huge.bin").write_bytes(b"x" * 2_000_000)
    path = ws.path_for("links")
    (path / "small.txt").write_bytes(b"12345")
    (path / "dir_link").symlink_to(big)
    (path / "file_link").symlink_to(big / "huge.bin")
    (path / "loop").symlink_to(path)
    assert ws.usage("links") == 5
    assert not ws.check_quota("links").exceeded


# ------------------------------------------------------------------------------------------------ cleanup


def test_cleanup_removes_only_old_workspaces(ws: Workspaces) -> None:
    old, fresh = ws.path_for("old"), ws.path_for("fresh")
    (old / "f.txt").write_bytes(b"1234")
    (fresh / "f.txt").write_text("keep")
    age(old, 8 * DAY)
    age(fresh, 6 * DAY)
    structlog.reset_defaults()
    with capture_logs() as logs:
        report = ws.cleanup()
    assert report.removed == ["old"] and report.kept == 1 and report.freed_bytes == 4 and not report.errors
    assert not old.exists() and (fresh / "f.txt").read_text() == "keep"
    event = next(e for e in logs if e["event"] == "workspace_cleanup")
    assert event["removed"] == 1 and event["kept"] == 1


def test_one_recent_file_keeps_the_whole_workspace(ws: Workspaces) -> None:
    path = ws.path_for("deep")
    (path / "a" / "b").mkdir(parents=True)
    (path / "a" / "b" / "new.txt").write_text("recent")
    age(path, 30 * DAY)
    os.utime(path / "a" / "b" / "new.txt")  # touched now, deep inside
    assert ws.cleanup().removed == []
    assert path.exists()


def test_cleanup_never_follows_symlinks_out_of_the_root(ws: Workspaces, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    (precious / "sub").mkdir(parents=True)
    (precious / "sub" / "keep.txt").write_text("mine")
    path = ws.path_for("evil")
    (path / "to_dir").symlink_to(precious)
    (path / "to_file").symlink_to(precious / "sub" / "keep.txt")
    ws.root.joinpath("stray_link").symlink_to(precious)  # not a workspace: left alone
    age(path, 10 * DAY)
    age(precious, 10 * DAY)
    report = ws.cleanup()
    assert report.removed == ["evil"] and not path.exists()
    assert (precious / "sub" / "keep.txt").read_text() == "mine"
    assert ws.root.joinpath("stray_link").is_symlink()


def test_cleanup_removes_a_workspace_whose_code_locked_itself_out(ws: Workspaces) -> None:
    path = ws.path_for("chmod")
    (path / "ro" / "inner").mkdir(parents=True)
    (path / "ro" / "inner" / "f").write_text("x")
    os.chmod(path / "ro" / "inner", 0o500)
    os.chmod(path / "ro", 0o000)
    age(path, 9 * DAY)
    report = ws.cleanup()
    assert report.removed == ["chmod"] and not path.exists(), report.errors


def test_cleanup_skips_an_active_workspace(ws: Workspaces) -> None:
    with ws.active("busy") as path:
        (path / "x").write_text("working")
        age(path, 20 * DAY)
        report = ws.cleanup()
        assert report.skipped_active == ["busy"] and path.exists()
    age(path, 20 * DAY)
    assert ws.cleanup().removed == ["busy"]


def test_active_is_reentrant_and_thread_safe(ws: Workspaces) -> None:
    inside, release = threading.Barrier(4), threading.Event()

    def turn() -> None:
        with ws.active("shared"):
            inside.wait(timeout=5)
            release.wait(timeout=5)

    threads = [threading.Thread(target=turn) for _ in range(3)]
    for t in threads:
        t.start()
    inside.wait(timeout=5)  # all three inside at once
    age(ws.root / "shared", 20 * DAY)
    assert ws.cleanup().skipped_active == ["shared"]
    release.set()
    for t in threads:
        t.join()
    age(ws.root / "shared", 20 * DAY)
    assert ws.cleanup().removed == ["shared"]


def test_max_age_zero_never_cleans(tmp_path: Path) -> None:
    ws = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=0)
    path = ws.path_for("ancient")
    age(path, 3650 * DAY)
    assert ws.cleanup().removed == [] and path.exists()


def test_path_for_marks_the_workspace_used(ws: Workspaces) -> None:
    path = ws.path_for("revisit")
    age(path, 30 * DAY)
    ws.path_for("revisit")  # a new turn of the session
    assert ws.cleanup().removed == []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox installs it)")
def test_a_workspace_persists_across_turns_in_the_real_sandbox(ws: Workspaces) -> None:
    backend, limits = BwrapSandbox(userns=not has_cap_sys_admin()), ExecLimits(timeout_s=10)
    write = "open('notes.txt', 'w').write('x' * 2_000_000); print('written')"
    first = backend.run_sync("python", write, limits=limits, workspace=ws.path_for("turns"))
    assert first.ok and first.stdout == "written\n", first.stderr
    second = backend.run_sync("bash", "wc -c < notes.txt", limits=limits, workspace=ws.path_for("turns"))
    assert second.ok and second.stdout.strip() == "2000000"
    status = ws.check_quota("turns")  # what the tool layer checks before the next run
    assert status.used == 2_000_000 and status.exceeded
