"""Phase 2.6, skills_auto (idle 900–3600 s, every 2 h): mine frequent tool-call sequences from
validator-passing trajectories into candidates with support counts. Candidates only: nothing is promoted
here (`ghost-agent skills promote ID` is the operator's act), because a sequence shown to every session
without review could poison retrieval (seed 001).

A pass, every step in a worker thread with a user check between steps:

1. **Scan, incrementally and bounded**: read the trajectory lines appended since the last pass (per-file
   cursors in the skills store), at most `batch` lines per pass in chunks of `chunk`, each chunk committed
   with its cursor — so a pass that yields, fails or is cancelled resumes where it stopped, and a large
   backlog is worked off over several passes (`backlog: true` in the result).
2. **Mine** the kept window (the `keep` most recent tool-using trajectories) with the corrections overlaid:
   only trajectories whose latest outcome is PASSED count; FAILED and UNKNOWN ones never do.
3. **Sync** the candidates (new ones are logged as `skill_candidate`); promoted and rejected sequences keep
   their decision and only get their support refreshed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ghost_agent.logging import get_logger
from ghost_agent.skills_auto.mining import DEFAULT_MAX_LEN, DEFAULT_MIN_SUPPORT, mine
from ghost_agent.skills_auto.scan import pending_files, read_chunk
from ghost_agent.skills_auto.store import DEFAULT_WINDOW, SkillStore
from ghost_agent.trajectories.corrections import CorrectionsSidecar
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing

log = get_logger("watchdog")

DEFAULT_BATCH = 2000  # trajectory lines read per pass at most
DEFAULT_CHUNK = 200  # lines per thread step (one transaction): a user waits at most one chunk's worth


class SkillsAutoPhase(Phase):
    """Scan new trajectories, mine tool sequences from the passing ones, keep them as candidates."""

    name = "skills_auto"
    title = "skills auto-extract"

    def __init__(
        self,
        timing: Timing,
        *,
        key: str = "",
        min_support: int = DEFAULT_MIN_SUPPORT,
        max_len: int = DEFAULT_MAX_LEN,
        batch: int = DEFAULT_BATCH,
        chunk: int = DEFAULT_CHUNK,
        keep: int = DEFAULT_WINDOW,
    ) -> None:
        super().__init__(timing, key=key)
        self.min_support = min_support
        self.max_len = max_len
        self.batch = max(batch, 1)
        self.chunk = max(chunk, 1)
        self.keep = keep  # the mining window: tool-using trajectories kept, most recent
        self.lines_scanned = 0  # over the phase's life (tests watch it to catch a pass mid-scan)
        self._sidecars: dict[Path, CorrectionsSidecar] = {}

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """One pass: scan (bounded, resumable), mine, sync; yields to a user request between steps."""
        collector = ctx.app.collector
        root = collector.root
        store = await ctx.offload(SkillStore, ctx.app.home.skills_db)
        try:
            done: dict[str, Any] = {"scanned": 0, "observed": 0}
            cursors = await ctx.offload(store.cursors)
            work = await ctx.offload(pending_files, root, cursors)
            while done["scanned"] < self.batch and any(w.pending for w in work):
                if ctx.user_active():
                    return PhaseResult.yielded(**done)
                limit = min(self.chunk, self.batch - done["scanned"])
                found, moved, lines = await ctx.offload(read_chunk, root, work, limit)
                await ctx.offload(store.record_scan, found, moved, self.keep)
                done["scanned"] += lines
                done["observed"] += len(found)
                self.lines_scanned += lines
            done["backlog"] = any(w.pending for w in work)
            if ctx.user_active():
                return PhaseResult.yielded(**done)
            sidecar = self._sidecars.setdefault(collector.corrections_path,
                                                CorrectionsSidecar(collector.corrections_path))
            overlay = await ctx.offload(sidecar.overlay)
            observed = await ctx.offload(store.observed)
            proposals, by_key = await ctx.offload(
                lambda: mine(observed, min_support=self.min_support, max_len=self.max_len, overlay=overlay)
            )
            if ctx.user_active():
                return PhaseResult.yielded(**done)
            synced = await ctx.offload(store.sync, proposals, by_key)
        finally:
            store.close()
        for candidate in synced.new:
            log.info("skill_candidate", candidate_id=candidate.id, support=candidate.support,
                     length=candidate.length, sequence=candidate.text)
        if (synced.new or synced.dropped) and ctx.counts is not None:
            ctx.counts.put(await ctx.offload(ctx.counts.compute))
        return PhaseResult.ok(**done, window=len(observed), candidates=synced.proposed, new=len(synced.new),
                              dropped=synced.dropped)


__all__ = ["DEFAULT_BATCH", "DEFAULT_CHUNK", "SkillsAutoPhase"]
