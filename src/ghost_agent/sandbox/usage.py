"""What a workspace holds, counted from directory fds: bytes, entries, and (against an earlier count) what changed.

The one counter behind the quota: the tool layer's checks, `Workspaces.usage` and the guard that watches a
workspace while a program runs (`quota.py`) all use `scan`. Model code shares the tree and may plant links or
swap a directory for a link at any time, so the walk opens every directory relative to its parent with
O_NOFOLLOW and never follows a link; links count as entries of no size.

What a regular file counts for: its size, plus any blocks allocated beyond its size rounded up to a block
(`fallocate --keep-size` reserves disk without growing the file, and RLIMIT_FSIZE does not stop it). Hard links
count once. Every name (file, folder, link, FIFO) is one entry.

Depth: the walk holds one fd per level, so it stops at MAX_DEPTH levels; folders deeper than that are reported
(`Tally.deep`), never silently skipped. Unreadable folders: a daemon running as an ordinary user maps the
sandbox to its own uid, so code can `chmod 000` a folder to hide it; such a folder owned by the daemon's uid is
given back its owner's rwx (as `Workspaces` cleanup already does) and counted. Root reads them anyway.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_DEPTH = 64  # folder levels under the workspace root that a walk enters (one open fd each)
MAX_SCAN_ENTRIES = 200_000  # what an ordinary count walks before it gives up (`Tally.complete` False)
BLOCK = 4096  # the allocation unit beyond which reserved blocks count (ext4, xfs, btrfs: 4 KB)
_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_PATH = getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Changed:
    """An entry that is new since a baseline count, or a regular file that grew."""

    parts: tuple[str, ...]  # workspace-relative path components
    ino: int
    kind: str  # "file" | "dir" | "other"
    charge: int  # bytes it counts for now (0 but for files)
    before: int | None  # the same inode's size in the baseline; None = created since
    mtime_ns: int

    @property
    def growth(self) -> int:
        """Bytes it added since the baseline (all of it when new)."""
        return self.charge - (self.before or 0)

    @property
    def path(self) -> str:
        """The workspace-relative path, for messages."""
        return "/".join(self.parts)


@dataclass
class Tally:
    """One count. `complete` is False when the walk stopped at its entry bound (then `entries` = the bound + 1
    and `bytes` counts only what it saw). `known` (ino -> file size, -1 for non-files) is filled when asked to
    remember; `changed` when compared against a baseline."""

    bytes: int = 0
    entries: int = 0
    complete: bool = True
    deep: list[tuple[str, ...]] = field(default_factory=list)  # folders at MAX_DEPTH, not entered
    known: dict[int, int] | None = None
    changed: list[Changed] = field(default_factory=list)


class _Bound(Exception):
    """The walk reached its entry bound."""


def charge(st: os.stat_result) -> int:
    """What a regular file counts for: its size plus blocks reserved beyond it (see the module docstring)."""
    size = st.st_size
    allocated = st.st_blocks * 512
    rounded = -(-size // BLOCK) * BLOCK
    return size + max(0, allocated - rounded)


def open_root(path: Path) -> int:
    """An fd on the workspace directory itself (O_NOFOLLOW: a workspace that is a link is refused, ELOOP)."""
    return os.open(path, _O_DIR)


def scan(
    root_fd: int,
    *,
    bound: int | None = MAX_SCAN_ENTRIES,
    remember: bool = False,
    baseline: dict[int, int] | None = None,
) -> Tally:
    """Count everything under `root_fd` (not closed here). `bound`: stop after that many entries (None = no
    bound). `remember`: fill `Tally.known` for a later comparison. `baseline`: a `known` map from an earlier
    scan; new entries and grown files go to `Tally.changed`."""
    tally = Tally(known={} if remember else None)
    repair = os.geteuid() != 0
    multi: set[int] = set()  # inodes with several links, counted once
    frames: list[tuple[int, tuple[str, ...], list[str]]] = []
    try:
        fd = os.dup(root_fd)
        frames.append((fd, (), []))
        _list(fd, (), frames[-1][2], tally, bound, baseline, multi, repair)
        while frames:
            fd, parts, subdirs = frames[-1]
            if not subdirs:
                os.close(fd)
                frames.pop()
                continue
            name = subdirs.pop()
            try:
                child = _open_dir(name, fd, repair)
            except OSError:
                continue  # vanished, or swapped for a link/file meanwhile: counted as what lstat saw
            child_parts = (*parts, name)
            frames.append((child, child_parts, []))
            _list(child, child_parts, frames[-1][2], tally, bound, baseline, multi, repair)
    except _Bound:
        tally.complete = False
    finally:
        for fd, _, _ in frames:
            os.close(fd)
    return tally


def _list(
    fd: int,
    parts: tuple[str, ...],
    subdirs: list[str],
    tally: Tally,
    bound: int | None,
    baseline: dict[int, int] | None,
    multi: set[int],
    repair: bool,
) -> None:
    """Count one directory's entries into `tally`; the folders to enter go to `subdirs`."""
    if repair:
        _ensure_searchable(fd)
    try:
        it = os.scandir(fd)
    except OSError:
        return
    with it:
        for entry in it:
            tally.entries += 1
            if bound is not None and tally.entries > bound:
                raise _Bound
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished meanwhile
            mode = st.st_mode
            if stat.S_ISREG(mode):
                kind, size = "file", charge(st)
                if st.st_nlink == 1 or st.st_ino not in multi:  # a hard-linked file's bytes count once
                    tally.bytes += size
                    if st.st_nlink > 1:
                        multi.add(st.st_ino)
            else:
                kind, size = ("dir" if stat.S_ISDIR(mode) else "other"), 0
                if kind == "dir":
                    if len(parts) + 1 >= MAX_DEPTH:
                        tally.deep.append((*parts, entry.name))
                    else:
                        subdirs.append(entry.name)
            if tally.known is not None:
                tally.known[st.st_ino] = st.st_size if kind == "file" else -1
            if baseline is not None:
                before = baseline.get(st.st_ino)
                if before is None or (kind == "file") != (before >= 0):
                    tally.changed.append(Changed((*parts, entry.name), st.st_ino, kind, size, None, st.st_mtime_ns))
                elif kind == "file" and size > before:
                    tally.changed.append(Changed((*parts, entry.name), st.st_ino, kind, size, before, st.st_mtime_ns))


def _open_dir(name: str, dir_fd: int, repair: bool) -> int:
    """Open folder `name` under `dir_fd` without following a link; an unreadable folder of our own uid is given
    back its owner's rwx first (`repair`)."""
    try:
        return os.open(name, _O_DIR, dir_fd=dir_fd)
    except PermissionError:
        if not repair or not _restore_owner_access(name, dir_fd):
            raise
    return os.open(name, _O_DIR, dir_fd=dir_fd)


def _restore_owner_access(name: str, dir_fd: int) -> bool:
    """chmod u+rwx a folder we own, through an O_PATH fd (so a link is never followed); False when it is not
    ours or cannot be changed."""
    try:
        pfd = os.open(name, _O_PATH, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        st = os.fstat(pfd)
        if st.st_uid != os.geteuid():
            return False
        os.chmod(f"/proc/self/fd/{pfd}", stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
        return True
    except OSError:
        return False
    finally:
        os.close(pfd)


def _ensure_searchable(fd: int) -> None:
    """A folder we could open (r) but whose entries we cannot stat or remove (no x or w): owner rwx back."""
    with contextlib.suppress(OSError):
        st = os.fstat(fd)
        if st.st_uid == os.geteuid() and st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)


@contextlib.contextmanager
def open_parent(root_fd: int, parts: tuple[str, ...]) -> Iterator[int]:
    """An fd on the folder holding `parts` (its last component), walked from `root_fd` with O_NOFOLLOW at every
    step; OSError when something on the way is no longer a folder."""
    repair = os.geteuid() != 0
    fd = os.dup(root_fd)
    try:
        for name in parts[:-1]:
            child = _open_dir(name, fd, repair)
            os.close(fd)
            fd = child
        if repair:
            _ensure_searchable(fd)
        yield fd
    finally:
        os.close(fd)


def remove_tree(dir_fd: int, name: str) -> int:
    """Remove folder `name` under `dir_fd` and everything in it, however deep, with at most three fds open: each
    pass empties the folder's sub-folders, first lifting their own sub-folders up into it (renameat within the
    tree), so the depth left shrinks by one a pass. Never follows a link. Returns the entries removed."""
    removed = 0
    repair = os.geteuid() != 0
    token = secrets.token_hex(4)
    top = _open_dir(name, dir_fd, repair)
    try:
        if repair:
            _ensure_searchable(top)
        lifted = 1
        while lifted:
            lifted = 0
            with os.scandir(top) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            for entry_name, is_dir in entries:
                if not is_dir:
                    os.unlink(entry_name, dir_fd=top)
                    removed += 1
                    continue
                sub = _open_dir(entry_name, top, repair)
                try:
                    if repair:
                        _ensure_searchable(sub)
                    with os.scandir(sub) as inner:
                        children = [(c.name, c.is_dir(follow_symlinks=False)) for c in inner]
                    for child, child_is_dir in children:
                        if child_is_dir:
                            if repair:  # moving a folder rewrites its "..": it must be writable
                                _restore_owner_access(child, sub)
                            lifted += 1
                            os.rename(child, f".ghost-lift-{token}-{removed}-{lifted}", src_dir_fd=sub,
                                      dst_dir_fd=top)
                        else:
                            os.unlink(child, dir_fd=sub)
                            removed += 1
                finally:
                    os.close(sub)
                os.rmdir(entry_name, dir_fd=top)
                removed += 1
    finally:
        os.close(top)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    return removed + 1


def measure(path: Path, bound: int | None = MAX_SCAN_ENTRIES) -> Tally:
    """Count the workspace at `path` (an empty Tally when it does not exist)."""
    try:
        fd = open_root(path)
    except FileNotFoundError:
        return Tally()
    try:
        return scan(fd, bound=bound)
    finally:
        os.close(fd)


__all__ = [
    "BLOCK",
    "MAX_DEPTH",
    "MAX_SCAN_ENTRIES",
    "Changed",
    "Tally",
    "charge",
    "measure",
    "open_parent",
    "open_root",
    "remove_tree",
    "scan",
]
