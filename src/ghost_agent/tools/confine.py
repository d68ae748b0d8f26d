"""Confinement to a workspace directory, done with directory file descriptors rather than path strings.

Model-written code shares the workspace and may plant symlinks anywhere in it, or swap a directory for a link
between a check and a use. So every path is walked component by component from an fd on the workspace root,
each opened relative to its parent with O_NOFOLLOW: nothing swapped in meanwhile (TOCTOU) can lead outside. A
symlink met on the way is read, not followed: its target is normalized against the workspace and the walk
restarts from the root with it, so a link may point within the workspace (absolute links that sandboxed code
made as /workspace/... included) but never out of it. Scans never descend through links.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from ghost_agent.sandbox.usage import Tally, scan

SANDBOX_MOUNT = "/workspace"  # where sandboxed code sees the workspace; paths the model copies from there work
MAX_SCAN_ENTRIES = 20_000  # what one find walks: a bounded cost per call
MAX_DEPTH = 32
MAX_SYMLINK_HOPS = 40
_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A request the tool will not do; the message (and hint) go back to the model."""

    def __init__(self, what: str, hint: str | None = None) -> None:
        super().__init__(what)
        self.what, self.hint = what, hint


def _escape(path: str) -> Refused:
    return Refused(f"path escapes the workspace ({path!r})", "use a path relative to the workspace, e.g. 'data.csv'")


def show(name: str) -> str:
    """A file name fit for a message: undecodable bytes become U+FFFD instead of lone surrogates."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _normalize(parts: list[str], base: list[str], original: str) -> list[str]:
    """`parts` appended to `base` lexically ('.' dropped, '..' pops); going above the root is an escape."""
    out = list(base)
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise _escape(original)
            out.pop()
        else:
            out.append(part)
    return out


def _absolute_inside(path: str, root: str) -> str | None:
    """The remainder of absolute `path` under the workspace (its host path or the sandbox mount), else None."""
    for prefix in (root, SANDBOX_MOUNT):
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return path[len(prefix):]
    return None


def split_path(path: str, root: str) -> list[str]:
    """The workspace-relative components of a path the model gave; Refused if it leaves the workspace."""
    path = path.strip() or "."
    if "\0" in path:
        raise Refused("path contains a NUL byte")
    if path.startswith("~"):
        raise _escape(path)
    if path.startswith("/"):
        inside = _absolute_inside(path, root)
        if inside is None:
            raise _escape(path)
        return _normalize(inside.split("/"), [], path)
    return _normalize(path.split("/"), [], path)


@dataclass
class Located:
    """Where a path ends: an open fd on the directory holding it and the final name (None = the root)."""

    dir_fd: int
    name: str | None
    parts: list[str]
    exists: bool

    @property
    def display(self) -> str:
        return show("/".join(self.parts)) or "."


class Confined:
    """An fd on the workspace root and the fd-relative walk every action goes through."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = str(root.resolve(strict=True))
        self.fd = os.open(self.root, _O_DIR)
        root_st = os.fstat(self.fd)
        # As root, files we create take the workspace's owner so the sandboxed code (uid nobody) can change them.
        self.owner = (root_st.st_uid, root_st.st_gid) if os.geteuid() == 0 and root_st.st_uid != 0 else None

    def close(self) -> None:
        os.close(self.fd)

    def chown(self, fd: int) -> None:
        if self.owner is not None:
            os.fchown(fd, *self.owner)

    def locate(self, path: str, *, follow: bool, create_parents: bool = False) -> Located:
        """Walk `path` from the root. Symlinks inside the workspace are followed when `follow` (the final
        component too), else refused; missing parents are created when `create_parents`, else refused. The
        final component may be missing (`exists` False). The caller closes `dir_fd`."""
        pending = split_path(path, self.root)
        done: list[str] = []
        fd = os.dup(self.fd)
        hops = 0
        try:
            while pending:
                name = pending.pop(0)
                last = not pending
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return Located(fd, name, done + [name], exists=False)
                    if not create_parents:
                        raise Refused(f"'{show('/'.join(done + [name]))}' does not exist") from None
                    os.mkdir(name, 0o755, dir_fd=fd)
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    where = "/".join(done + [name])
                    target = self._link_target(fd, name, done, where)  # refuses a link leading outside
                    if not follow:
                        raise Refused(f"refusing to write through a symlink ('{show(where)}')",
                                      "write to the real path instead")
                    hops += 1
                    if hops > MAX_SYMLINK_HOPS:
                        raise Refused(f"too many levels of symlinks at '{show(where)}'")
                    pending = target + pending
                    os.close(fd)
                    fd, done = os.dup(self.fd), []
                    continue
                if last:
                    return Located(fd, name, done + [name], exists=True)
                fd = self._descend(fd, name, done, created=create_parents)
                done.append(name)
            return Located(fd, None, [], exists=True)
        except BaseException:
            os.close(fd)
            raise

    def _link_target(self, fd: int, name: str, done: list[str], where: str) -> list[str]:
        target = os.readlink(name, dir_fd=fd)
        try:
            if target.startswith("/"):
                inside = _absolute_inside(target, self.root)
                if inside is None:
                    raise _escape(target)
                return _normalize(inside.split("/"), [], target)
            return _normalize(target.split("/"), done, target)
        except Refused:
            raise Refused(f"path escapes the workspace ('{show(where)}' is a symlink to {show(target)!r})",
                          "only files inside the workspace are reachable") from None

    def _descend(self, fd: int, name: str, done: list[str], *, created: bool) -> int:
        """Open directory `name` under `fd` (closing `fd`); a non-directory or a swapped-in link is refused."""
        try:
            child = os.open(name, _O_DIR, dir_fd=fd)
        except OSError as exc:
            where = show("/".join(done + [name]))
            if exc.errno == errno.ENOTDIR:
                raise Refused(f"'{where}' is not a directory") from None
            if exc.errno == errno.ELOOP:
                raise Refused(f"'{where}' changed into a symlink during the call") from None
            raise
        os.close(fd)
        if created:
            self.chown(child)
        return child

    def open_dir(self, loc: Located) -> int:
        """An fd on the located directory (the caller closes it)."""
        if loc.name is None:
            return os.dup(loc.dir_fd)
        return self._descend(os.dup(loc.dir_fd), loc.name, loc.parts[:-1], created=False)

    def scan(
        self, dir_fd: int, prefix: list[str], max_entries: int = MAX_SCAN_ENTRIES
    ) -> Generator[tuple[list[str], os.DirEntry[str], int], None, None]:
        """Every entry below `dir_fd` breadth-first, each as (workspace-relative parts, entry, fd of its
        directory — valid until the next item), never descending into links; bounded by MAX_SCAN_ENTRIES
        and MAX_DEPTH. Takes ownership of `dir_fd`; close the generator to release fds early."""
        queue: list[tuple[int, list[str], int]] = [(dir_fd, prefix, 0)]
        seen = 0
        try:
            while queue:
                fd, parts, depth = queue.pop(0)
                try:
                    with os.scandir(fd) as it:
                        entries = sorted(it, key=lambda e: e.name)
                    for entry in entries:
                        seen += 1
                        if seen > max_entries:
                            return
                        yield parts + [entry.name], entry, fd
                        if entry.is_dir(follow_symlinks=False) and depth < MAX_DEPTH:
                            try:
                                child = os.open(entry.name, _O_DIR, dir_fd=fd)
                            except OSError:
                                continue  # vanished or swapped for a link meanwhile: skip it
                            queue.append((child, parts + [entry.name], depth + 1))
                finally:
                    os.close(fd)
        finally:
            for fd, _, _ in queue:
                os.close(fd)

    def count(self) -> Tally:
        """What the workspace holds as the quota counts it (sandbox/usage.py: bytes, entries; links not
        followed), from this root fd."""
        return scan(self.fd)


__all__ = [
    "MAX_SCAN_ENTRIES",
    "SANDBOX_MOUNT",
    "Confined",
    "Located",
    "Refused",
    "show",
    "split_path",
]
