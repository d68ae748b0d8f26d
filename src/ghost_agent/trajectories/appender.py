"""Crash-safe, concurrent line appends to many files, with a durability policy and an LRU of open descriptors.

Each line is written with ONE `os.write` (newline included) to an `O_APPEND` descriptor, under a per-file
thread lock and an `fcntl.flock` (other processes sharing the directory), so concurrent lines never
interleave. A torn tail left by a crashed writer is closed with a newline first: it stays one bad line and
never swallows the next record.

Durability policies:

* ``"fsync"``: fdatasync after every line (and the directory when a file is created);
* ``"batch"`` (default): write-through -- the bytes are in the kernel when `write_line` returns, so a
  process crash or SIGKILL loses nothing; fsync happens in `flush()` (journal drain, close, eviction);
* ``"none"``: never fsync.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

DURABILITY_POLICIES = ("fsync", "batch", "none")
MAX_OPEN_FILES = 64


@dataclass
class _Handle:
    """A cached descriptor. `users` > 0 keeps it open after eviction; `end` is the file size after our last
    write (a mismatch means another writer came in between, so the tail byte is checked)."""

    fd: int
    path: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    end: int = -1
    dirty: bool = False
    users: int = 0
    evicted: bool = False


class LineAppender:
    """Appends whole lines to files under `root` (created 0700/0600 on demand). Thread-safe."""

    def __init__(
        self,
        root: Path,
        *,
        durability: str = "batch",
        max_open_files: int = MAX_OPEN_FILES,
        process_lock: bool = True,
    ) -> None:
        if durability not in DURABILITY_POLICIES:
            raise ValueError(f"unknown durability {durability!r} (valid: {', '.join(DURABILITY_POLICIES)})")
        self.root = root
        self.durability = durability
        self._max_open = max(1, max_open_files)
        self._process_lock = process_lock
        self._cache_lock = threading.Lock()
        self._handles: OrderedDict[str, _Handle] = OrderedDict()  # str keys: Path hashing is slow
        self._known_dirs: set[Path] = set()
        self._pending_dirs: set[Path] = set()  # "batch": directories whose new entries await fsync
        self._pending_files: set[Path] = set()  # "batch": dirty files evicted from the cache before a flush

    def write_line(self, path: Path, line: bytes) -> None:
        """Append `line` (which must end with a newline) to `path` as one write, per the durability policy."""
        handle = self._acquire(path)
        try:
            with handle.lock:
                if self._process_lock:
                    fcntl.flock(handle.fd, fcntl.LOCK_EX)
                try:
                    size = os.fstat(handle.fd).st_size
                    if size and size != handle.end and os.pread(handle.fd, 1, size - 1) != b"\n":
                        line = b"\n" + line
                    handle.end = -1  # unknown until the write completes (a failed write leaves a torn tail)
                    view = memoryview(line)
                    while view:
                        view = view[os.write(handle.fd, view) :]
                    handle.end = size + len(line)
                finally:
                    if self._process_lock:
                        fcntl.flock(handle.fd, fcntl.LOCK_UN)
                if self.durability == "fsync":
                    os.fdatasync(handle.fd)
                elif self.durability == "batch":
                    handle.dirty = True
        finally:
            self._release(handle)

    def _acquire(self, path: Path) -> _Handle:
        key = str(path)
        with self._cache_lock:
            handle = self._handles.get(key)
            if handle is not None:
                self._handles.move_to_end(key)
            else:
                handle = _Handle(self._open(path), path)
                self._handles[key] = handle
                while len(self._handles) > self._max_open:
                    _, old = self._handles.popitem(last=False)
                    old.evicted = True
                    if old.users == 0:
                        self._close_handle(old)
            handle.users += 1
            return handle

    def _release(self, handle: _Handle) -> None:
        with self._cache_lock:
            handle.users -= 1
            if handle.evicted and handle.users == 0:
                self._close_handle(handle)

    def _open(self, path: Path) -> int:
        parent = path.parent
        if parent not in self._known_dirs:
            created = [d for d in (parent, *parent.parents) if not d.exists()]
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._known_dirs.add(parent)
            for d in created:
                self._dir_changed(d.parent)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC  # RDWR: the torn-tail check preads
        try:
            fd = os.open(path, flags | os.O_EXCL, 0o600)
        except FileExistsError:
            return os.open(path, flags, 0o600)
        self._dir_changed(parent)
        return fd

    def _dir_changed(self, directory: Path) -> None:
        """A new entry in `directory`: make it durable now ("fsync") or at the next flush ("batch")."""
        if self.durability == "fsync":
            fsync_path(directory)
        elif self.durability == "batch":
            self._pending_dirs.add(directory)

    def _close_handle(self, handle: _Handle) -> None:
        # Called under the cache lock: no fsync here (a slow disk would stall every writer). fsync works on
        # the inode, so `flush` can make an evicted file durable through a fresh descriptor.
        if handle.dirty:
            self._pending_files.add(handle.path)
            handle.dirty = False
        os.close(handle.fd)
        handle.fd = -1

    def flush(self) -> None:
        """fsync every file written since the last flush, then new directory entries. No-op for "none"."""
        with self._cache_lock:
            dirty = [h for h in self._handles.values() if h.dirty]
            for h in dirty:
                h.users += 1
            dirs, self._pending_dirs = self._pending_dirs, set()
            files, self._pending_files = self._pending_files, set()
        try:
            for h in dirty:
                h.dirty = False  # a write racing with this fsync marks it again
                os.fdatasync(h.fd)
        finally:
            for h in dirty:
                self._release(h)
        for path in files:
            fsync_path(path)
        for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
            fsync_path(d)

    def close(self) -> None:
        """Flush and close every cached descriptor. Idempotent; a later write simply reopens its file."""
        self.flush()
        with self._cache_lock:
            handles = list(self._handles.values())
            self._handles.clear()
            for h in handles:
                h.evicted = True
                if h.users == 0:
                    self._close_handle(h)

    @property
    def unsynced(self) -> int:
        """Files and directories written since the last flush (always 0 once `flush` ran)."""
        with self._cache_lock:
            dirty = sum(1 for h in self._handles.values() if h.dirty)
            return dirty + len(self._pending_files) + len(self._pending_dirs)

    @property
    def open_files(self) -> int:
        """Descriptors cached right now (bounded by `max_open_files`)."""
        with self._cache_lock:
            return len(self._handles)


def fsync_path(path: Path) -> None:
    """fsync a file or directory through a fresh descriptor (best effort: one that cannot be opened is skipped)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
