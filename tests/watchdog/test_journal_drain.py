"""Phase 1, journal drain: fsyncs what the batch durability policy left pending and keeps the status counters
fresh, recounting only when the trajectory store changed."""

from __future__ import annotations

from pathlib import Path

from tests.watchdog.conftest import CHAT, MESSAGES, SCALE, wait_until, watchdog_app


async def test_journal_drain_syncs_pending_records_and_refreshes_the_counts(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, trajectory_durability="batch", trajectory_flush_s=0) as daemon:
        collector, wd = daemon.ctx.collector, daemon.watchdog
        assert (await daemon.client.post(CHAT, json={"messages": MESSAGES})).status_code == 200
        await wait_until(lambda: collector.unsynced > 0)  # recorded after the reply, not yet fsynced
        daemon.idle_for(130 * SCALE)
        first = (await wd.tick())["journal_drain"]
        assert first.status == "ok" and first.data["synced"] > 0 and first.data["counts_refreshed"] is True
        assert collector.unsynced == 0
        assert wd.counts.snapshot is not None and wd.counts.snapshot["trajectories"]["total"] == 1
        daemon.clock.advance(60 * SCALE)
        second = (await wd.tick())["journal_drain"]
        assert second.data == {"synced": 0, "files": first.data["files"], "counts_refreshed": False}

        assert (await daemon.client.post(CHAT, json={"messages": MESSAGES})).status_code == 200
        await wait_until(lambda: collector.unsynced > 0)
        daemon.idle_for(130 * SCALE)
        third = (await wd.tick())["journal_drain"]
        assert third.data["counts_refreshed"] is True
        assert wd.counts.snapshot["trajectories"]["total"] == 2
        # The status serves the drain's counts without rescanning the store.
        status = (await daemon.client.get("/v1/ghost/status")).json()
        assert status["counts"]["computed_at"] == wd.counts.snapshot["computed_at"]
    # Runs every idle tick, so its routine runs are logged at debug, not info.
    assert not [e for e in daemon.log_events("phase") if e["phase"] == "journal_drain" and e["action"] == "end"]
