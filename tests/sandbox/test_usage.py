"""The workspace counter (sandbox/usage.py): what counts, what is never followed, how deep it goes, what changed."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ghost_agent.sandbox.usage import BLOCK, MAX_DEPTH, measure, open_root, remove_tree, scan

MB = 1024 * 1024


def test_bytes_and_entries(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"a" * 300_000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.bin").write_bytes(b"b" * 5)
    os.mkfifo(tmp_path / "sub" / "pipe")
    tally = measure(tmp_path)
    assert (tally.bytes, tally.entries, tally.complete, tally.deep) == (300_005, 4, True, [])
    assert measure(tmp_path / "missing").entries == 0


def test_links_count_as_entries_and_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.bin").write_bytes(b"x" * MB)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dir").symlink_to(outside)
    (ws / "file").symlink_to(outside / "big.bin")
    (ws / "loop").symlink_to(ws)
    assert (measure(ws).bytes, measure(ws).entries) == (0, 3)
    (tmp_path / "ws-link").symlink_to(ws)
    with pytest.raises(OSError):
        open_root(tmp_path / "ws-link")  # a workspace that is itself a link is refused


def test_a_hard_linked_file_counts_once(tmp_path: Path) -> None:
    (tmp_path / "one").write_bytes(b"x" * MB)
    for i in range(5):
        os.link(tmp_path / "one", tmp_path / f"link{i}")
    assert (measure(tmp_path).bytes, measure(tmp_path).entries) == (MB, 6)


def test_blocks_reserved_beyond_the_size_count(tmp_path: Path) -> None:
    # fallocate --keep-size reserves disk without growing the file, and RLIMIT_FSIZE does not stop it.
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = os.open(tmp_path / "reserved", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        if libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(8 * MB)) != 0:  # FALLOC_FL_KEEP_SIZE
            pytest.skip(f"fallocate --keep-size not supported here (errno {ctypes.get_errno()})")
        os.write(fd, b"12345")
    finally:
        os.close(fd)
    assert os.stat(tmp_path / "reserved").st_size == 5
    reserved = measure(tmp_path).bytes
    assert reserved >= 8 * MB - BLOCK  # its size, plus what is reserved past its one block
    (tmp_path / "plain").write_bytes(b"p" * 5000)  # a plain file counts its size, not its 8 KB of blocks
    assert measure(tmp_path).bytes == reserved + 5000


def test_the_bound_stops_the_walk(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i}").write_bytes(b"x")
    tally = measure(tmp_path, bound=10)
    assert not tally.complete and tally.entries == 11


def test_folders_past_the_depth_are_reported_not_entered(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d"] * (MAX_DEPTH + 5))
    deep.mkdir(parents=True)
    (deep / "hidden.bin").write_bytes(b"h" * MB)
    tally = measure(tmp_path)
    assert tally.deep == [("d",) * MAX_DEPTH]
    assert tally.entries == MAX_DEPTH and tally.bytes == 0
    fd = open_root(tmp_path)
    try:
        parent = os.open("/".join(["d"] * (MAX_DEPTH - 1)), os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        try:
            assert remove_tree(parent, "d") == 6 + 1  # five levels below, the file, and the folder itself
        finally:
            os.close(parent)
    finally:
        os.close(fd)
    assert measure(tmp_path).deep == [] and measure(tmp_path).entries == MAX_DEPTH - 1


def test_remove_tree_takes_a_deep_tree_with_few_fds(tmp_path: Path) -> None:
    top = tmp_path / "top"
    chain = top.joinpath(*["n"] * 300)  # far deeper than a walk holding one fd per level would like
    chain.mkdir(parents=True)
    (chain / "f").write_text("x")
    for i in range(20):
        (top / f"side{i}").mkdir()
        (top / f"side{i}" / "g").write_text("y")
    (tmp_path / "keep").write_text("k")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert remove_tree(fd, "top") == 300 + 1 + 40 + 1
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


def test_changes_against_a_baseline(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same")
    (tmp_path / "grows.txt").write_text("12")
    (tmp_path / "shrinks.txt").write_text("1234567890")
    fd = open_root(tmp_path)
    try:
        base = scan(fd, remember=True)
        assert base.known is not None and len(base.known) == 3
        (tmp_path / "grows.txt").write_text("123456")
        (tmp_path / "shrinks.txt").write_text("1")
        (tmp_path / "new").mkdir()
        (tmp_path / "new" / "file.txt").write_text("new!")
        changed = {c.path: (c.kind, c.before, c.growth) for c in scan(fd, baseline=base.known).changed}
    finally:
        os.close(fd)
    assert changed == {"grows.txt": ("file", 2, 4), "new": ("dir", None, 0), "new/file.txt": ("file", None, 4)}


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run the counter as an ordinary uid")
def test_an_ordinary_uid_counts_folders_the_program_closed() -> None:
    # A daemon run as an ordinary user shares its uid with the sandbox (user namespace): code can chmod 000 a
    # folder to hide what it holds. The counter gives its own folders their owner's rwx back and counts them.
    base = Path(tempfile.mkdtemp(prefix="ghost-usage-"))  # not under pytest's 0700 tmp: uid 65534 walks it
    try:
        _count_as_nobody(base)
    finally:
        shutil.rmtree(base)


def _count_as_nobody(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "hidden" / "inner").mkdir(parents=True)
    (ws / "hidden" / "inner" / "big.bin").write_bytes(b"x" * MB)
    for path in (ws, ws / "hidden", ws / "hidden" / "inner", ws / "hidden" / "inner" / "big.bin"):
        os.chown(path, 65534, 65534)
    os.chmod(tmp_path, 0o755)
    (ws / "hidden" / "inner").chmod(0o000)
    (ws / "hidden").chmod(0o100)  # searchable, not listable
    code = f"from ghost_agent.sandbox.usage import measure\nt = measure(__import__('pathlib').Path({str(ws)!r}))\n" \
           "print(t.bytes, t.entries)"
    assert as_nobody(code).split() == [str(MB), "3"]


def as_nobody(code: str) -> str:
    """Run Python `code` as uid/gid 65534 with this checkout's package; its stdout."""
    src = Path(__file__).resolve().parents[2] / "src"
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
                         env={"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "")}, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run the guard as an ordinary uid")
def test_an_ordinary_uid_takes_back_what_a_run_left_in_folders_it_closed() -> None:
    # The same uid-sharing case for the trim: a new file in a folder the program made read-only, a grown file
    # it made read-only, a too-deep tree of read-only folders. The guard (as uid 65534) still takes them back.
    base = Path(tempfile.mkdtemp(prefix="ghost-trim-"))
    try:
        os.chmod(base, 0o755)
        ws = base / "ws"
        ws.mkdir()
        os.chown(ws, 65534, 65534)
        code = f"""
import os
from pathlib import Path
from ghost_agent.sandbox.base import ExecLimits
from ghost_agent.sandbox.quota import guard_workspace
from ghost_agent.sandbox.usage import MAX_DEPTH, measure
ws = Path({str(ws)!r})
(ws / "log.txt").write_bytes(b"L" * 1000)
with guard_workspace(ws, ExecLimits(workspace_bytes=1 << 20, workspace_entries=1000)) as guard:
    (ws / "closed").mkdir()
    (ws / "closed" / "new.bin").write_bytes(b"n" * (2 << 20))
    (ws / "closed").chmod(0o500)
    with open(ws / "log.txt", "ab") as f:
        f.write(b"+" * (1 << 20))
    (ws / "log.txt").chmod(0o400)
    deep = ws.joinpath(*["d"] * (MAX_DEPTH + 3))
    deep.mkdir(parents=True)
    for p in reversed([ws.joinpath(*["d"] * k) for k in range(MAX_DEPTH - 2, MAX_DEPTH + 4)]):
        p.chmod(0o555)
    report = guard.finish()
t = measure(ws)
print(report.exceeded, t.bytes, len(t.deep), sorted(x.action for x in report.trimmed))
print((ws / "log.txt").stat().st_size, (ws / "closed" / "new.bin").exists())
"""
        first, second = as_nobody(code).splitlines()[-2:]  # after the guard's log line
        assert first == "bytes 1000 0 ['removed', 'removed', 'truncated']"
        assert second == "1000 False"
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base)
