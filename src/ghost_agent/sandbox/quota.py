"""The workspace quota held during a run, not only between runs (issue 20, item 4).

Counting the workspace before each call and lowering RLIMIT_FSIZE to what is left stops one file from passing
the quota, not many: one call wrote 1.2 GB in 0.9 s into a 256 MB workspace. A `WorkspaceGuard` now watches
the workspace of every execution that has a budget (`ExecLimits.workspace_bytes` / `workspace_entries`), with
either backend, from `run_process`'s loop:

- before: one full count (`usage.scan`, remembering each inode and file size): the usage before the run, and
  RLIMIT_FSIZE lowered to the room left (1 MB at least, as before).
- during: the filesystem's own counters are read (statvfs: used blocks and inodes, about 1 µs), as often as a
  fast writer (FAST_WRITE, FAST_CREATE) would need to use half the room left, every 5 to 50 ms. When the
  filesystem has grown by half the room left since the last count, or every BACKSTOP_S, the workspace is
  counted again; a count never starts sooner than SCAN_GAP times the last one's duration after it, so a large
  workspace costs at most a quarter of a core. Over its limit the run is killed like at a timeout (the whole
  tree): more bytes than allowed, more entries than allowed, or a folder nested past MAX_DEPTH.
- after: a last count, unless not one block or inode was allocated or freed on the filesystem meanwhile. (The
  counters cannot clear a run that wrote: a deletion elsewhere on the filesystem could hide its growth, which
  also means such a deletion can delay a kill until the next backstop count.) When the workspace holds more
  than allowed, what this run wrote beyond it is taken back: files it created are removed, files it grew are
  cut back to their size before the run, newest first, keeping any that are not needed to get back under;
  entries it created beyond the entry limit, newest first; folders it nested too deep. Nothing that existed
  before the run and did not grow is touched. The program's processes are all gone by then.

A run's limit is max(budget, usage before): a workspace already over (its quota was lowered) may shrink, never
grow. /tmp does not count (a size-limited tmpfs in bubblewrap; the fallback's private temp dir is deleted after
the run). Why no kernel limit: a size-limited mount (loop device) and filesystem quotas need root, a tmpfs
workspace would not outlive the turn, and bubblewrap 0.8 has no overlay. bench/bench_workspace_quota.py
measures the overshoot and the cost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ghost_agent.logging import get_logger
from ghost_agent.sandbox import usage
from ghost_agent.sandbox.base import ExecLimits, ExecResult, Trimmed, WorkspaceReport

log = get_logger("sandbox")

POLL_MIN_S, POLL_MAX_S = 0.005, 0.05  # how often the filesystem counters are read while a program runs
FAST_WRITE = 4 << 30  # bytes/s: the poll interval gives a writer this fast half the room left, no more
FAST_CREATE = 200_000  # entries/s, likewise
BACKSTOP_S = 1.0  # a full count at least this often, whatever the counters say (or 10x its own cost)
SCAN_GAP = 3  # a count waits this many times the last count's duration after it
MIN_FILE_MB = 1  # RLIMIT_FSIZE never below this: a full workspace still lets a program write a small file
LISTED = 20  # trimmed files named in the report
MIB = 1024 * 1024
_O_FILE = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class WorkspaceGuard:
    """Watches one execution's workspace against its budget (see the module docstring). Build it before the
    program starts, call `poll` while it runs (when `next_poll` is due; True = kill it now), `finish` once every
    process of the execution is gone, then `close`."""

    def __init__(self, root: Path, limits: ExecLimits) -> None:
        self.fd = usage.open_root(root)
        self._counters = True  # statvfs answers here (else every poll counts, as the gap allows)
        try:
            started = time.monotonic()
            self._fs_mark = self._fs()
            bound = max(usage.MAX_SCAN_ENTRIES, (limits.workspace_entries or 0) + 1)
            base = usage.scan(self.fd, bound=bound, remember=True)
        except BaseException:
            os.close(self.fd)
            raise
        now = time.monotonic()
        self.known: dict[int, int] = base.known or {}
        self.deep_before = set(base.deep)
        self.report = WorkspaceReport(
            limit_bytes=limits.workspace_bytes, limit_entries=limits.workspace_entries,
            bytes_before=base.bytes, entries_before=base.entries, bytes_after=base.bytes,
            entries_after=base.entries, peak_bytes=base.bytes, peak_entries=base.entries,
            counted_before=base.complete,
        )
        self.max_bytes = None if limits.workspace_bytes is None else max(limits.workspace_bytes, base.bytes)
        # Past the bound the entries are not all known: the entry limit cannot be judged this run.
        self.max_entries = (
            None if limits.workspace_entries is None or not base.complete
            else max(limits.workspace_entries, base.entries)
        )
        self.bound = self.max_entries + 1 if self.max_entries is not None else bound
        self.limits = limits
        if self.max_bytes is not None:
            room_mb = max(MIN_FILE_MB, (self.max_bytes - base.bytes) // MIB)
            if room_mb < limits.max_file_mb:
                self.limits = dataclasses.replace(limits, max_file_mb=room_mb)
        self.exceeded = ""
        self._last = (base.bytes, base.entries)
        self._cost = now - started
        self._scan_after = now + SCAN_GAP * self._cost
        self._backstop_at = now + max(BACKSTOP_S, 10 * self._cost)
        self.next_poll = now + self._interval(0, 0)

    # ------------------------------------------------------------------------------------------------ during

    def poll(self, now: float) -> bool:
        """Read the filesystem counters, count the workspace when they say it may be over (or at the backstop);
        True when the run outgrew its workspace and must be killed now (`exceeded` says how)."""
        self.report.polls += 1
        if self.exceeded:
            return True
        used, inodes = self._fs()
        grown_b, grown_i = used - self._fs_mark[0], inodes - self._fs_mark[1]
        self.next_poll = now + self._interval(grown_b, grown_i)
        due = self._share(grown_b, grown_i) >= 0.5 or now >= self._backstop_at
        if not due or now < self._scan_after:
            return False
        self._count()
        self.next_poll = time.monotonic() + self._interval(0, 0)
        return bool(self.exceeded)

    def _interval(self, grown_b: int, grown_i: int) -> float:
        """Seconds until the next poll: the time a fast writer needs to use half the room still left."""
        wait = POLL_MAX_S
        if self.max_bytes is not None:
            wait = min(wait, (self.max_bytes - self._last[0] - grown_b) / 2 / FAST_WRITE)
        if self.max_entries is not None:
            wait = min(wait, (self.max_entries - self._last[1] - grown_i) / 2 / FAST_CREATE)
        return max(POLL_MIN_S, wait)

    def _fs(self) -> tuple[int, int]:
        """(bytes, inodes) in use on the workspace's filesystem; (0, 0) where statvfs does not answer."""
        try:
            st = os.statvfs(self.fd)
        except OSError:
            self._counters = False
            return 0, 0
        return (st.f_blocks - st.f_bfree) * st.f_frsize, max(0, st.f_files - st.f_ffree)

    def _share(self, grown_b: int, grown_i: int) -> float:
        """How far the filesystem grew since the last count, as a share of the room that count left (bytes or
        inodes, the larger); 1.0 or more: the workspace may be over its limit now (always, without counters)."""
        if not self._counters:
            return 1.0
        share = 0.0
        if self.max_bytes is not None:
            share = grown_b / max(1, self.max_bytes - self._last[0])
        if self.max_entries is not None:
            share = max(share, grown_i / max(1, self.max_entries - self._last[1]))
        return share

    def _count(self, *, bound: int | None = -1, baseline: bool = False) -> usage.Tally:
        """A full count; updates the marks, the peak and `exceeded`."""
        started = time.monotonic()
        mark = self._fs()
        tally = usage.scan(self.fd, bound=self.bound if bound == -1 else bound,
                           baseline=self.known if baseline else None)
        now = time.monotonic()
        self._fs_mark, self._last, self._cost = mark, (tally.bytes, tally.entries), now - started
        self._scan_after = now + SCAN_GAP * self._cost
        self._backstop_at = now + max(BACKSTOP_S, 10 * self._cost)
        r = self.report
        r.scans += 1
        r.peak_bytes, r.peak_entries = max(r.peak_bytes, tally.bytes), max(r.peak_entries, tally.entries)
        if not self.exceeded:
            self.exceeded = self._judge(tally)
        return tally

    def _judge(self, tally: usage.Tally) -> str:
        if self.max_bytes is not None and tally.bytes > self.max_bytes:
            return "bytes"
        if self.max_entries is not None and (not tally.complete or tally.entries > self.max_entries):
            return "entries"
        if any(p not in self.deep_before for p in tally.deep):
            return "depth"
        return ""

    # ------------------------------------------------------------------------------------------------- after

    def stop(self) -> None:
        """Mark the run as killed for outgrowing the workspace (the caller killed it after `poll` said so)."""
        self.report.stopped = True

    def finish(self) -> WorkspaceReport:
        """The last count and, when the workspace holds more than allowed, the trim (see the module docstring).
        Call once every process of the execution is gone."""
        r = self.report
        if not self.exceeded and self._counters and self._fs() == self._fs_mark:
            # Not one block or inode was allocated or freed on the filesystem since the last count: the run wrote
            # nothing (growth elsewhere is not enough to skip: a deletion elsewhere could hide it).
            return r
        tally = self._count(bound=None if self.exceeded else self.bound, baseline=True)
        if self.exceeded and not tally.complete:
            tally = self._count(bound=None, baseline=True)
        if self.exceeded:
            r.exceeded = self.exceeded
            self._trim(tally)
            tally = usage.scan(self.fd, bound=self.bound)
            log.warning("workspace_quota_exceeded", reason=self.exceeded, stopped=r.stopped,
                        limit_bytes=r.limit_bytes, peak_bytes=r.peak_bytes, trimmed=r.trimmed_count,
                        trimmed_bytes=r.trimmed_bytes, bytes_after=tally.bytes)
        r.bytes_after, r.entries_after = tally.bytes, tally.entries
        return r

    def _trim(self, tally: usage.Tally) -> None:
        """Take back what this run wrote beyond the limits: too-deep folders, then bytes, then entries."""
        changed = tally.changed
        gone: set[tuple[str, ...]] = set()
        for c in changed:
            if c.kind == "dir" and len(c.parts) >= usage.MAX_DEPTH:
                with contextlib.suppress(OSError), usage.open_parent(self.fd, c.parts) as fd:
                    self._note(c.path, 0, "removed", entries=usage.remove_tree(fd, c.parts[-1]))
                    gone.add(c.parts)
        total = tally.bytes
        if self.max_bytes is not None and total > self.max_bytes:
            by_ino: dict[int, list[usage.Changed]] = {}
            for c in changed:
                if c.kind == "file" and c.growth > 0 and c.parts not in gone:
                    by_ino.setdefault(c.ino, []).append(c)
            # Newest first; mtimes tick coarsely (a jiffy), so within a tick the largest, then the last name.
            files = sorted(by_ino.values(), key=lambda links: (links[0].mtime_ns, links[0].growth, links[0].parts),
                           reverse=True)
            for links in _enough(files, total - self.max_bytes, lambda links: links[0].growth):
                total -= self._take_back(links, gone)
        entries = tally.entries - len(gone)
        if self.max_entries is not None and entries > self.max_entries:
            extra = [c for c in changed if c.before is None and c.kind != "dir" and c.parts not in gone]
            extra.sort(key=lambda c: (c.mtime_ns, c.parts), reverse=True)
            folders = sorted((c for c in changed if c.before is None and c.kind == "dir" and c.parts not in gone),
                             key=lambda c: -len(c.parts))
            removed = 0
            for c in [*extra, *folders]:
                if entries <= self.max_entries:
                    break
                if self._unlink(c):
                    gone.add(c.parts)
                    entries -= 1
                    removed += 1
                    self.report.trimmed_bytes += c.charge
            self.report.trimmed_count += removed  # counted, not listed: typically thousands of empty files

    def _take_back(self, links: list[usage.Changed], gone: set[tuple[str, ...]]) -> int:
        """Remove a file this run created (every link to it) or cut one it grew back to its size before; the
        bytes freed (0 when it could not)."""
        first = links[0]
        if first.before is None:
            removed = [c for c in links if self._unlink(c)]
            gone.update(c.parts for c in removed)
            if len(removed) < len(links):
                return 0
            self._note(first.path, first.charge, "removed", entries=len(removed))
            return first.charge
        try:
            with usage.open_parent(self.fd, first.parts) as dir_fd:
                fd = _open_own(first.parts[-1], dir_fd)
                try:
                    if os.fstat(fd).st_ino != first.ino:
                        return 0
                    os.ftruncate(fd, first.before)
                finally:
                    os.close(fd)
        except OSError:
            return 0
        self._note(first.path, first.growth, "truncated", entries=0)
        return first.growth

    def _unlink(self, c: usage.Changed) -> bool:
        """Remove one entry this run created, if it is still the same inode (never a folder with content)."""
        try:
            with usage.open_parent(self.fd, c.parts) as dir_fd:
                name = c.parts[-1]
                if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino != c.ino:
                    return False
                if c.kind == "dir":
                    os.rmdir(name, dir_fd=dir_fd)
                else:
                    os.unlink(name, dir_fd=dir_fd)
                return True
        except OSError:
            return False

    def _note(self, path: str, freed: int, action: str, *, entries: int) -> None:
        r = self.report
        r.trimmed_bytes += freed
        r.trimmed_count += 1
        if len(r.trimmed) < LISTED:
            r.trimmed.append(Trimmed(path=path, bytes=freed, action=action, entries=entries))

    def close(self) -> None:
        """Release the workspace fd. Idempotent."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _enough(
    items: list[list[usage.Changed]], excess: int, weight: Callable[[list[usage.Changed]], int]
) -> list[list[usage.Changed]]:
    """The first items (in the given order) that together weigh at least `excess`, less any of them (lightest
    first) that the rest already cover."""
    chosen: list[list[usage.Changed]] = []
    total = 0
    for item in items:
        if total >= excess:
            break
        chosen.append(item)
        total += weight(item)
    spare: set[int] = set()
    for i in sorted(range(len(chosen)), key=lambda i: weight(chosen[i])):
        if total - weight(chosen[i]) >= excess:
            spare.add(i)
            total -= weight(chosen[i])
    return [item for i, item in enumerate(chosen) if i not in spare]


def _open_own(name: str, dir_fd: int) -> int:
    """Open a regular file for writing without following a link; a file of our own uid that the program made
    read-only gets its owner's write bit back first (root needs none)."""
    try:
        return os.open(name, _O_FILE, dir_fd=dir_fd)
    except PermissionError:
        if os.geteuid() == 0:
            raise
        pfd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            st = os.fstat(pfd)
            if st.st_uid != os.geteuid() or not stat.S_ISREG(st.st_mode):
                raise
            os.chmod(f"/proc/self/fd/{pfd}", stat.S_IMODE(st.st_mode) | stat.S_IWUSR)
        finally:
            os.close(pfd)
    return os.open(name, _O_FILE, dir_fd=dir_fd)


@contextlib.contextmanager
def guard_workspace(root: Path, limits: ExecLimits) -> Iterator[WorkspaceGuard | None]:
    """A guard for `root` when `limits` give the workspace a budget, else None; closed on exit."""
    if limits.workspace_bytes is None and limits.workspace_entries is None:
        yield None
        return
    guard = WorkspaceGuard(root, limits)
    try:
        yield guard
    finally:
        guard.close()


def settle(guard: WorkspaceGuard | None, result: ExecResult) -> ExecResult:
    """After every process of the execution is gone: the guard's last count and trim, into `result`."""
    if guard is None:
        return result
    report = result.workspace = guard.finish()
    if report.exceeded:
        result.notes.append(report.summary())
    return result


__all__ = ["BACKSTOP_S", "WorkspaceGuard", "guard_workspace", "settle"]
