"""Per-session workspaces under `$GHOST_HOME/workspace/<session>`: persistent across a session's turns,
size-checked, deleted when untouched for `max_age_days`, and at most `max_count` of them: creating one more
evicts the least recently used idle workspace (by the directory's mtime, which every use refreshes). An
evicted workspace is renamed aside at once (`.evicted-*`) and deleted by a background thread, so a turn
never waits for a large tree to be removed.

Only directories are created here; the sandbox backend binds a workspace at /workspace and makes it writable
for the sandbox user (chown 65534) itself. Quota: `quota_bytes` and `max_entries` (files, folders and links: by
default one per 4 KB of quota, the least a file takes on disk) go to the tool context. `file_system` refuses
writes past them; the sandbox holds a program to them while it runs and takes back what it wrote beyond
(sandbox/quota.py); code still runs in an over-quota workspace (it is how the model deletes files) but may not
grow it. Usage is counted by sandbox/usage.py. Nothing here follows a symlink: a workspace is written by model
code, which may plant links to anywhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import redact_text, session_key
from ghost_agent.sandbox.base import SandboxError
from ghost_agent.sandbox.usage import measure

log = get_logger("sandbox.workspace")

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PREFIX_CHARS = 40
# No workspace name starts with a dot: workspaces being evicted are renamed to this prefix.
EVICTED_PREFIX = ".evicted-"
ENTRY_BYTES = 4096  # the default entry limit charges each file, folder or link one block of the quota
MIN_ENTRIES = 1024


def workspace_name(session_id: str) -> str:
    """The directory name for a session: the id itself when it is short and made of [A-Za-z0-9._-] (not
    starting with a dot or dash), else a readable sanitized prefix plus a hash of the full id, so distinct ids
    never share a directory and no id can name a path outside the root. An id holding a secret (the daemon
    already maps those at the door, other callers may not) is named by its redacted pseudonym instead."""
    if redact_text(session_id) is not session_id:
        session_id = session_key(session_id, max_len=64)
    if _SAFE.fullmatch(session_id):
        return session_id
    prefix = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:_PREFIX_CHARS].lstrip(".-") or "_"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{prefix}-{digest}"


@dataclass(frozen=True)
class QuotaStatus:
    """Bytes used by a workspace (regular files, symlinks not followed) against its limit."""

    used: int
    limit: int
    exceeded: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass
class CleanupReport:
    """What one `cleanup` did: removed workspace names, bytes freed, names skipped because in use, errors."""

    removed: list[str] = field(default_factory=list)
    freed_bytes: int = 0
    kept: int = 0
    skipped_active: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def _scan(path: Path) -> tuple[int, float]:
    """(bytes of regular files, newest mtime) under `path`, lstat only: symlinks count as themselves. For
    cleanup's age test (the quota counts with `usage.measure`)."""
    st = path.lstat()
    total, newest = 0, st.st_mtime
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue  # vanished or unreadable mid-walk: count what we can see
        for entry in entries:
            try:
                est = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            newest = max(newest, est.st_mtime)
            if stat.S_ISDIR(est.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(est.st_mode):
                total += est.st_size
    return total, newest


def _make_writable_and_retry(func: Callable[..., Any], path: str, _exc: Any) -> None:
    # Model code may chmod its files or dirs to 0; the owner (or root) can always restore write permission.
    parent = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.chmod(parent, stat.S_IRWXU)
    with contextlib.suppress(OSError):
        if not os.path.islink(path):
            os.chmod(path, stat.S_IRWXU)
    func(path)


def _rmtree(path: Path) -> None:
    # rmtree never follows symlinks (it unlinks them); only its error-handler keyword differs across versions.
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=_make_writable_and_retry)


class Workspaces:
    """The workspace root and its per-session directories; thread-safe.

    `path_for(session)` creates (0700) or reuses the session's directory and marks it used now. `active(session)`
    is a context manager that protects a workspace from `cleanup` while a turn runs in it (in-memory: cleanup
    runs inside the daemon, the only writer of the root).
    """

    def __init__(
        self, root: Path, *, quota_mb: float, max_age_days: float, max_count: int = 0, max_entries: int | None = None
    ) -> None:
        self.root = Path(root)
        self.quota_bytes = int(quota_mb * 1024 * 1024)
        # A million empty files fill no bytes but exhaust inodes and make every count slow: entries are limited
        # too, by default at one per 4 KB of quota (256 MB: 65,536).
        self.max_entries = max(MIN_ENTRIES, self.quota_bytes // ENTRY_BYTES) if max_entries is None else max_entries
        self.max_age_days = max_age_days
        self.max_count = max_count
        self._lock = threading.Lock()
        self._active: Counter[str] = Counter()
        self._purging: set[threading.Thread] = set()

    def _resolved_root(self) -> Path:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.root.resolve()

    def path_for(self, session_id: str) -> Path:
        """The session's workspace directory (created on demand, mtime refreshed). SandboxError if something
        that is not a real directory (e.g. a symlink) sits at its place."""
        root = self._resolved_root()
        path = root / workspace_name(session_id)
        if path.parent != root:  # cannot happen with workspace_name's charset; kept as the invariant
            raise SandboxError(f"workspace for {session_id!r} would escape {root}")
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if path.is_symlink() or not path.is_dir():
                raise SandboxError(f"workspace {path} is not a directory (refusing to use it)") from None
        else:
            if self.max_count > 0:
                self.evict_over_cap(keep=path.name)
        os.utime(path)  # "used now": cleanup ages workspaces by their newest mtime
        return path

    def evict_over_cap(self, keep: str | None = None) -> list[str]:
        """Evict the least recently used idle workspaces (directory mtime) until at most `max_count` remain;
        `keep` and active workspaces are never evicted. Returns the evicted names; deletion runs in a thread."""
        if self.max_count <= 0:
            return []
        evicted: list[str] = []
        trash: list[Path] = []
        with self._lock:
            entries = []
            with contextlib.suppress(OSError), os.scandir(self.root) as it:
                for entry in it:
                    if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                        continue
                    with contextlib.suppress(OSError):
                        entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
            excess = len(entries) - self.max_count
            for _, name in sorted(entries):
                if excess <= 0:
                    break
                if name == keep or self._active.get(name):
                    continue
                aside = self.root / f"{EVICTED_PREFIX}{name}-{secrets.token_hex(4)}"
                try:
                    os.rename(self.root / name, aside)
                except OSError as exc:
                    log.warning("workspace_evict_failed", workspace=name, error=str(exc))
                    continue
                evicted.append(name)
                trash.append(aside)
                excess -= 1
        if trash:
            log.info("workspace_evicted", root=str(self.root), evicted=len(evicted), max_count=self.max_count)
            self._purge_in_background(trash)
        return evicted

    def _purge_in_background(self, paths: list[Path]) -> None:
        def purge() -> None:
            for p in paths:
                try:
                    _rmtree(p)
                except OSError as exc:  # left for the next `cleanup` (it removes `.evicted-*` first)
                    log.warning("workspace_purge_failed", path=str(p), error=str(exc))
            self._purging.discard(thread)

        thread = threading.Thread(target=purge, name="workspace-evict", daemon=True)
        self._purging.add(thread)  # held until done, like every background task
        thread.start()

    def wait_purged(self, timeout: float | None = None) -> None:
        """Wait for evicted workspaces to be deleted (tests, shutdown)."""
        for thread in list(self._purging):
            thread.join(timeout)

    def existing(self, session_id: str) -> Path | None:
        """The session's workspace if it exists as a real directory (never creates it)."""
        path = self.root / workspace_name(session_id)
        return path if path.is_dir() and not path.is_symlink() else None

    def usage(self, session_id: str) -> int:
        """Bytes in the session's workspace as the quota counts them (`usage.charge`; 0 when it does not exist);
        symlinks not followed."""
        path = self.existing(session_id)
        return measure(path).bytes if path is not None else 0

    def check_quota(self, session_id: str) -> QuotaStatus:
        """Usage against the quota; `exceeded` means used > limit (the tool layer then refuses writes)."""
        used = self.usage(session_id)
        return QuotaStatus(used=used, limit=self.quota_bytes, exceeded=used > self.quota_bytes)

    @contextlib.contextmanager
    def active(self, session_id: str) -> Iterator[Path]:
        """Yield the session's workspace, protected from `cleanup` until the block exits (reentrant)."""
        name = workspace_name(session_id)
        with self._lock:
            self._active[name] += 1
        try:
            yield self.path_for(session_id)
        finally:
            with self._lock:
                self._active[name] -= 1
                if self._active[name] <= 0:
                    del self._active[name]

    def cleanup(self, now: float | None = None) -> CleanupReport:
        """Delete workspaces whose newest mtime (anything inside, lstat) is older than `max_age_days`
        (0 = never). Skips active workspaces and anything in the root that is not a real directory; never
        follows a symlink. Logs `workspace_cleanup`."""
        report = CleanupReport()
        if self.max_age_days <= 0 or not self.root.is_dir():
            return report
        now = time.time() if now is None else now
        cutoff = now - self.max_age_days * 86400
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name.startswith(EVICTED_PREFIX):  # an eviction whose deletion did not finish
                with contextlib.suppress(OSError):
                    _rmtree(Path(entry.path))
                continue
            # Held through the removal so a turn entering `active()` meanwhile waits, then recreates the dir.
            with self._lock:
                if self._active.get(entry.name):
                    report.skipped_active.append(entry.name)
                    continue
                try:
                    size, newest = _scan(Path(entry.path))
                    if newest >= cutoff:
                        report.kept += 1
                        continue
                    _rmtree(Path(entry.path))
                except OSError as exc:
                    report.errors.append(f"{entry.name}: {exc}")
                    continue
            report.removed.append(entry.name)
            report.freed_bytes += size
        log.info("workspace_cleanup", root=str(self.root), removed=len(report.removed), kept=report.kept,
                 freed_bytes=report.freed_bytes, skipped_active=len(report.skipped_active),
                 errors=len(report.errors))
        return report
