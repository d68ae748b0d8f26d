"""file_system on real directories: the happy paths, and every way out of the workspace refused."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.tools import ToolContext, ToolRegistry, ToolResult
from ghost_agent.tools.file_system import DEFAULT_READ_BYTES, MAX_FIND_RESULTS, FileSystemTool, glob_regex

ESCAPE = "path escapes the workspace"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace holding a secret the tool must never reveal or change."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("TOP SECRET")
    return d


async def fs(ws: Path, quota: int | None = None, max_entries: int | None = None, **args: Any) -> ToolResult:
    ctx = ToolContext(workspace=ws, session_id="t", quota_bytes=quota, quota_entries=max_entries)
    return await ToolRegistry([FileSystemTool()]).call("file_system", args, ctx)


def leftovers(ws: Path) -> list[str]:
    return [p.name for p in ws.rglob(".gw-*")]


async def test_write_read_list_find(ws: Path) -> None:
    w = await fs(ws, action="write", path="data/raw/a.csv", content="x,y\n1,2\n")
    assert w.ok and w.output == "created data/raw/a.csv (8 bytes)"
    assert (ws / "data/raw/a.csv").read_text() == "x,y\n1,2\n"
    assert (await fs(ws, action="write", path="notes.txt", content="hi")).ok

    r = await fs(ws, action="read", path="data/raw/a.csv")
    assert r.ok and r.output == "x,y\n1,2\n" and r.data["size"] == 8

    listing = await fs(ws, action="list")
    assert listing.ok
    lines = listing.output.splitlines()
    assert lines[0] == "./ (2 entries)"
    assert lines[1].startswith("dir") and lines[1].endswith("data/")
    assert lines[2].startswith("file") and "2 B" in lines[2] and lines[2].endswith("notes.txt")

    found = await fs(ws, action="find", pattern="*.csv")
    assert found.ok and found.output.splitlines() == ["1 match for '*.csv' under ./", "data/raw/a.csv"]
    assert (await fs(ws, action="find", pattern="data/*/*.csv")).data["matches"] == 1
    assert (await fs(ws, action="find", pattern="*/*.csv")).data["matches"] == 0  # '*' stays in one dir
    assert (await fs(ws, action="find", path="data", pattern="**/*.csv")).output.splitlines()[1] == "data/raw/a.csv"
    assert leftovers(ws) == []


async def test_overwrite_is_atomic_and_keeps_the_mode(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    inode_before = script.stat().st_ino
    r = await fs(ws, action="write", path="run.sh", content="new")
    assert r.ok and r.output.startswith("replaced")
    assert script.read_text() == "new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert script.stat().st_ino != inode_before  # a new file renamed into place, not rewritten in place
    assert leftovers(ws) == []


async def test_paths_the_model_may_copy_from_the_sandbox(ws: Path) -> None:
    (ws / "a.txt").write_text("A")
    assert (await fs(ws, action="read", path="/workspace/a.txt")).output == "A"
    assert (await fs(ws, action="read", path=str(ws / "a.txt"))).output == "A"
    assert (await fs(ws, action="read", path="sub/../a.txt")).output == "A"
    assert (await fs(ws, action="read", path="./a.txt")).output == "A"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "a/../../outside/secret.txt", "..", "/etc/passwd",
                                  "/workspace/../etc/passwd", "~/.bashrc", "/workspacefoo/x"])
async def test_traversal_and_absolute_paths_are_refused(ws: Path, outside: Path, path: str) -> None:
    for action in ("read", "list"):
        r = await fs(ws, action=action, path=path)
        assert not r.ok and r.error is not None and r.error.startswith(f"file_system: {ESCAPE}"), r.error
        assert "SECRET" not in r.to_message() and "root:" not in r.to_message()
    w = await fs(ws, action="write", path=path.rstrip(".") + "/pwned" if path.endswith("..") else path,
                 content="pwned")
    assert not w.ok and ESCAPE in (w.error or "")
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


async def test_symlink_to_etc_passwd_planted_in_the_workspace_is_refused(ws: Path) -> None:
    (ws / "passwd").symlink_to("/etc/passwd")
    r = await fs(ws, action="read", path="passwd")
    assert not r.ok
    assert r.error == (f"file_system: {ESCAPE} ('passwd' is a symlink to '/etc/passwd'); only files inside the "
                       "workspace are reachable")
    assert "root:" not in r.to_message()
    listing = await fs(ws, action="list")  # shown as a link, never followed
    assert listing.ok and "link" in listing.output and "passwd -> /etc/passwd" in listing.output
    assert "root:" not in listing.output


async def test_writing_through_a_link_to_outside_is_refused(ws: Path, outside: Path) -> None:
    # The write-side twin of the /etc/passwd case, aimed at a file of ours so a regression cannot damage the host.
    (ws / "innocent.txt").symlink_to(outside / "secret.txt")
    r = await fs(ws, action="write", path="innocent.txt", content="pwned")
    assert not r.ok and ESCAPE in (r.error or "")
    assert (outside / "secret.txt").read_text() == "TOP SECRET"
    assert (ws / "innocent.txt").is_symlink()


async def test_symlinked_directory_pointing_outside(ws: Path, outside: Path) -> None:
    (ws / "out").symlink_to(outside, target_is_directory=True)
    for args in ({"action": "list", "path": "out"}, {"action": "read", "path": "out/secret.txt"},
                 {"action": "find", "path": "out", "pattern": "*"},
                 {"action": "write", "path": "out/new.txt", "content": "x"}):
        r = await fs(ws, **args)
        assert not r.ok and ESCAPE in (r.error or ""), (args, r.error)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    everything = await fs(ws, action="find", pattern="*")  # the link is listed, its contents are not
    assert everything.ok and "secret" not in everything.output and "out -> " in everything.output


async def test_links_inside_the_workspace_are_followed_for_reading(ws: Path) -> None:
    (ws / "data").mkdir()
    (ws / "data/2024.csv").write_text("a,b")
    (ws / "latest.csv").symlink_to("data/2024.csv")
    (ws / "abs.csv").symlink_to("/workspace/data/2024.csv")  # how a link made inside the sandbox looks
    (ws / "d").symlink_to("data", target_is_directory=True)
    assert (await fs(ws, action="read", path="latest.csv")).output == "a,b"
    assert (await fs(ws, action="read", path="abs.csv")).output == "a,b"
    assert (await fs(ws, action="read", path="d/2024.csv")).output == "a,b"
    assert "2024.csv" in (await fs(ws, action="list", path="d")).output
    # ...but writing goes through no link, even one that stays inside.
    w = await fs(ws, action="write", path="latest.csv", content="x")
    assert not w.ok and w.error == ("file_system: refusing to write through a symlink ('latest.csv'); write to "
                                    "the real path instead")
    w2 = await fs(ws, action="write", path="d/new.csv", content="x")
    assert not w2.ok and "refusing to write through a symlink ('d')" in (w2.error or "")
    assert (ws / "data/2024.csv").read_text() == "a,b" and not (ws / "data/new.csv").exists()


async def test_symlink_loop_is_reported(ws: Path) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    r = await fs(ws, action="read", path="a")
    assert not r.ok and "too many levels of symlinks" in (r.error or "")


async def test_binary_file_is_refused_with_a_hint(ws: Path) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    r = await fs(ws, action="read", path="img.png")
    assert not r.ok
    assert r.error == ("file_system: 'img.png' is binary (272 bytes, starts 89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 "
                       "48 44 52); inspect it with the python tool")


async def test_big_file_is_capped(ws: Path) -> None:
    (ws / "big.txt").write_text("é" + "x" * 49_999)  # a 2-byte char first: the cut lands on a char boundary
    r = await fs(ws, action="read", path="big.txt")
    assert r.ok and r.truncated
    assert r.output.startswith("é" + "x" * 100)
    assert f"[... showing the first {DEFAULT_READ_BYTES} of 50001 bytes" in r.output
    small = await fs(ws, action="read", path="big.txt", max_bytes=3)
    assert small.output.startswith("éx\n[... showing the first 3 of 50001 bytes")
    cut = await fs(ws, action="read", path="big.txt", max_bytes=1)  # half of 'é': dropped, not "binary"
    assert cut.ok and cut.output.startswith("\n[... showing the first 1 of")
    too_much = await fs(ws, action="read", path="big.txt", max_bytes=10**9)
    assert not too_much.ok and "'max_bytes' must be <= " in (too_much.error or "")


async def test_quota_is_respected_before_writing(ws: Path) -> None:
    (ws / "old.bin").write_bytes(b"0" * 800)
    r = await fs(ws, quota=1000, action="write", path="new.txt", content="y" * 300)
    assert not r.ok
    assert r.error == ("file_system: workspace quota exceeded: writing 300 B would bring the workspace to 1.1 KB "
                       "(limit 1000 B); delete or shrink files first")
    assert not (ws / "new.txt").exists() and leftovers(ws) == []
    # Replacing a file only counts the difference.
    assert (await fs(ws, quota=1000, action="write", path="old.bin", content="z" * 950)).ok
    assert (await fs(ws, quota=1000, action="write", path="ok.txt", content="y" * 50)).ok


async def test_the_entry_limit_is_respected_before_writing(ws: Path) -> None:
    for i in range(3):
        (ws / f"f{i}.txt").write_text("x")
    r = await fs(ws, max_entries=3, action="write", path="one-more.txt", content="y")
    assert r.error == ("file_system: the workspace holds 3 files and folders, its limit (3); delete files first, "
                       "or write into an existing file")
    assert (await fs(ws, max_entries=3, action="write", path="f0.txt", content="replaced")).ok


async def test_unicode_names(ws: Path) -> None:
    assert (await fs(ws, action="write", path="données/été 2024.csv", content="ça,va\n")).ok
    assert (await fs(ws, action="read", path="données/été 2024.csv")).output == "ça,va\n"
    assert "données/" in (await fs(ws, action="list")).output
    found = await fs(ws, action="find", pattern="été*")
    assert found.output.splitlines()[1] == "données/été 2024.csv"
    os.close(os.open(os.fsencode(ws) + b"/bad\xffname", os.O_CREAT | os.O_WRONLY, 0o644))
    listing = await fs(ws, action="list")
    assert listing.ok and "bad\ufffdname" in listing.output
    listing.output.encode("utf-8")  # no lone surrogates reach the model or the trajectory


async def test_fifo_does_not_hang_the_daemon(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    started = time.monotonic()
    r = await fs(ws, action="read", path="pipe")
    assert not r.ok and r.error == "file_system: 'pipe' is not a regular file"
    assert time.monotonic() - started < 2


async def test_errors_name_the_problem(ws: Path) -> None:
    (ws / "d").mkdir()
    cases = {
        ("read", "nope.txt"): "file_system: 'nope.txt' does not exist; list the directory to see what is there",
        ("read", "d"): "file_system: 'd' is a directory; use action=list",
        ("list", "nope"): "file_system: 'nope' does not exist; list '.' to see what is there",
        ("write", "d"): "file_system: 'd' exists and is not a regular file",
    }
    for (action, path), error in cases.items():
        r = await fs(ws, action=action, path=path, content="x")
        assert r.error == error
    assert (await fs(ws, action="write", path="a.txt")).error == (
        "file_system: write needs 'content'; pass the text to write as 'content'")
    assert (await fs(ws, action="find")).error == (
        "file_system: find needs 'pattern'; pass a glob such as '*.csv' or '**/*.py'")
    assert (await fs(ws, action="delete")).error.startswith(
        "file_system: 'action' must be one of list, read, write, find (got 'delete')")
    (ws / "f.txt").write_text("x")
    not_dir = await fs(ws, action="write", path="f.txt/g", content="x")
    assert not_dir.error == "file_system: 'f.txt' is not a directory"


async def test_listing_and_finding_are_bounded(ws: Path) -> None:
    for i in range(MAX_FIND_RESULTS + 20):
        (ws / f"f{i:04d}.txt").write_text("")
    listing = await fs(ws, action="list")
    assert listing.truncated and listing.output.splitlines()[-1].startswith("[... 20 more entries")
    found = await fs(ws, action="find", pattern="*.txt")
    assert found.truncated and found.data["matches"] == MAX_FIND_RESULTS
    assert found.output.splitlines()[-1].startswith(f"[stopped at {MAX_FIND_RESULTS} matches")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another owner needs root")
async def test_written_files_belong_to_the_workspace_owner(ws: Path) -> None:
    os.chown(ws, 65534, 65534)  # as the sandbox leaves it: owned by nobody, so sandboxed code can edit our files
    assert (await fs(ws, action="write", path="sub/a.txt", content="x")).ok
    for p in (ws / "sub", ws / "sub/a.txt"):
        assert (p.stat().st_uid, p.stat().st_gid) == (65534, 65534)


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*.py", ["a.py"], ["a.pyc", "d/a.py"]),
        ("**/*.py", ["a.py", "d/a.py", "d/e/a.py"], ["a.txt"]),
        ("src/**", ["src/a", "src/d/a"], ["lib/a"]),
        ("f?.[ct]sv", ["f1.csv", "fx.tsv"], ["f10.csv", "f1.psv"]),
        ("[!a]*", ["b"], ["a"]),
    ],
)
def test_glob_regex(pattern: str, yes: list[str], no: list[str]) -> None:
    regex = glob_regex(pattern)
    assert all(regex.match(p) for p in yes), pattern
    assert not any(regex.match(p) for p in no), pattern


async def test_a_directory_swapped_for_a_link_mid_call_never_leads_outside(ws: Path, outside: Path) -> None:
    # Model code runs beside the daemon and may flip a directory into a symlink between a check and a use
    # (TOCTOU). A string-path check (resolve, then open) loses this race now and then; the fd walk cannot.
    (outside / "f.txt").write_text("TOP SECRET")
    real, link, flip = ws / ".real", ws / ".link", ws / "d"
    real.mkdir()
    (real / "f.txt").write_text("inside")
    link.symlink_to(outside, target_is_directory=True)
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            for src in (real, link):
                try:
                    os.rename(src, flip)
                    os.rename(flip, src)
                except OSError:
                    pass

    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    seen: set[str] = set()
    try:
        started = time.monotonic()
        while (elapsed := time.monotonic() - started) < 0.5 or (len(seen) < 2 and elapsed < 5):
            r = await fs(ws, action="read", path="d/f.txt")
            seen.add("inside" if r.output == "inside" else "refused" if not r.ok else r.output)
            assert "SECRET" not in r.to_message()
        # Writes last: one landing while 'd' is missing creates a real 'd', which ends the flipping.
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            w = await fs(ws, action="write", path="d/new.txt", content="x")
            assert not (outside / "new.txt").exists(), w
    finally:
        stop.set()
        thread.join()
    assert "inside" in seen and "refused" in seen  # the race was really exercised both ways
