"""Crash-safe file writes: a replacement readers see whole or not at all, and one-line appends to a JSON-lines
file that a torn last line cannot swallow."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file in the same directory, fsync, rename, fsync the directory.

    The parent directory is created if missing. On any failure the temp file is removed and the previous
    content of `path` (if any) is untouched; the exception propagates.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def append_line(path: Path, line: bytes) -> int:
    """Append one whole line (`line` ends with a newline) with one `write` on an `O_APPEND` descriptor (file mode
    0600); when the file's last byte is not a newline (a crash mid-append tore the last line) a newline goes first,
    so the torn line cannot swallow this one. Returns the file's size after. The caller serialises appends."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        return size + len(line)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a rename inside it survives a power cut (best effort where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
