"""Phase 1, journal drain (idle > 120 s, every tick): fsync batched trajectory records, refresh the counters.

With `--trajectory-durability batch` an append is written through at once (a crash of the process loses
nothing) and made durable against power loss here, while nobody waits. Then the status counters (trajectories
by outcome and source, lessons, candidates) are recomputed — only when the trajectory tree changed since the
last refresh, so an idle daemon does not rescan an unchanged store every minute.
"""

from __future__ import annotations

import os
from pathlib import Path

from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing


def tree_signature(root: Path) -> tuple[int, int, int]:
    """(files, total bytes, newest mtime ns) of the trajectory tree: changes whenever a record is appended."""
    files = size = newest = 0
    if not root.is_dir():
        return (0, 0, 0)
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    files += 1
                    size += st.st_size
                    newest = max(newest, st.st_mtime_ns)
    return (files, size, newest)


class JournalDrainPhase(Phase):
    """fsync what the batch durability policy left pending; refresh the cached counts if the store changed."""

    name = "journal_drain"
    title = "journal drain"
    quiet = True  # runs every idle tick: its ok runs are logged at debug

    def __init__(self, timing: Timing, *, key: str = "") -> None:
        super().__init__(timing, key=key)
        self._signature: tuple[int, int, int] | None = None

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """Flush, then recount if needed."""
        collector = ctx.app.collector
        pending = collector.unsynced
        if pending:
            await ctx.offload(collector.flush)
        ctx.check_yield()
        signature = await ctx.offload(tree_signature, collector.root)
        refreshed = False
        if ctx.counts is not None and (signature != self._signature or ctx.counts.snapshot is None):
            ctx.counts.put(await ctx.offload(ctx.counts.compute))
            self._signature, refreshed = signature, True
        return PhaseResult.ok(synced=pending, files=signature[0], counts_refreshed=refreshed)


__all__ = ["JournalDrainPhase", "tree_signature"]
