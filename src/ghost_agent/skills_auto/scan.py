"""Incremental reading of the trajectory tree: only the lines appended since the last pass, a bounded number at
a time.

The store's files (`<root>/YYYY-MM-DD/session-*.jsonl`) are append-only, so a pass remembers, per file, its
inode and the byte offset it has read up to, and the next pass starts there. Only complete lines are
consumed (a torn tail is left for the next pass, when its writer has finished it); a line that does not parse
is skipped, as every reader of the store does. A file whose inode changed or that shrank is read again from
the start. Corrections are not read here: they are overlaid when mining (see `mining.mine`), so a trajectory
corrected after it was scanned still counts with its latest outcome.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ghost_agent.skills_auto.mining import Observed, observe
from ghost_agent.trajectories.record import Trajectory

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
READ_BYTES = 1 << 16

Cursor = tuple[int, int]  # (inode, offset)


@dataclass
class FileWork:
    """A file with unread bytes: its path relative to the root, inode, where reading resumes, and its size."""

    rel: str
    inode: int
    offset: int
    size: int

    @property
    def pending(self) -> bool:
        return self.offset < self.size


def pending_files(root: Path, cursors: dict[str, Cursor]) -> list[FileWork]:
    """Files under `root` with bytes past their cursor, oldest day first (one `stat` per file, no reads)."""
    work: list[FileWork] = []
    try:
        days = sorted(e.name for e in os.scandir(root) if _DAY.fullmatch(e.name) and e.is_dir())
    except OSError:
        return []
    for day in days:
        try:
            entries = sorted(
                (e for e in os.scandir(root / day)
                 if e.name.startswith("session-") and e.name.endswith(".jsonl") and e.is_file()),
                key=lambda e: e.name,
            )
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat()
            except OSError:
                continue
            rel = f"{day}/{entry.name}"
            inode, offset = cursors.get(rel, (st.st_ino, 0))
            if inode != st.st_ino or offset > st.st_size:
                offset = 0  # replaced or truncated: read it again from the start
            if offset < st.st_size:
                work.append(FileWork(rel, st.st_ino, offset, st.st_size))
    return work


def read_chunk(root: Path, work: list[FileWork], max_lines: int) -> tuple[list[Observed], dict[str, Cursor], int]:
    """Read up to `max_lines` complete lines from the pending files (advancing their offsets in `work`).

    Returns the trajectories that can contribute to mining, the cursors to save, and how many lines were read.
    """
    found: list[Observed] = []
    cursors: dict[str, Cursor] = {}
    lines_read = 0
    for item in work:
        if lines_read >= max_lines:
            break
        if not item.pending:
            continue
        lines, consumed = _read_lines(root / item.rel, item.offset, max_lines - lines_read)
        item.offset += consumed
        if consumed == 0:
            item.size = item.offset  # only a torn tail is left: wait for its writer
        cursors[item.rel] = (item.inode, item.offset)
        lines_read += len(lines)
        for line in lines:
            obs = _observe_line(line)
            if obs is not None:
                found.append(obs)
    return found, cursors, lines_read


def _read_lines(path: Path, offset: int, limit: int) -> tuple[list[bytes], int]:
    """Up to `limit` complete lines from `offset`, and how many bytes they took."""
    lines: list[bytes] = []
    consumed = 0
    buffer = b""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            while len(lines) < limit:
                block = fh.read(READ_BYTES)
                if not block:
                    break
                buffer += block
                while len(lines) < limit:
                    end = buffer.find(b"\n")
                    if end < 0:
                        break
                    lines.append(buffer[:end])
                    consumed += end + 1
                    buffer = buffer[end + 1:]
    except OSError:
        return [], 0
    return lines, consumed


def _observe_line(line: bytes) -> Observed | None:
    if not line.strip():
        return None
    try:
        traj = Trajectory.from_json(line)
    except Exception:  # noqa: BLE001 - a corrupt line is skipped, as every reader of the store does
        return None
    return observe(traj)


__all__ = ["Cursor", "FileWork", "pending_files", "read_chunk"]
