"""The watchdog on the real app: each phase fires inside its idle window and never outside, cooldown anchors
advance even when a phase raises, a phase exception is logged and never fatal, only user requests move the
idle clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ghost_agent.watchdog import PhaseContext, PhaseResult
from ghost_agent.watchdog.runner import PhaseState
from ghost_agent.watchdog.table import ROWS
from tests.watchdog.conftest import CHAT, MESSAGES, SCALE, Daemon, Recorder, wait_until, watchdog_app

NAMES = [row.name for row in ROWS]


async def probe(daemon: Daemon, idle_s: float) -> set[str]:
    """Which phases one tick runs at exactly `idle_s` of idle time, every cooldown reset."""
    for name in NAMES:
        daemon.watchdog.states[name] = PhaseState()
    daemon.idle_for(idle_s)
    return set(await daemon.watchdog.tick())


async def test_each_phase_fires_inside_its_window_and_never_outside(tmp_path: Path) -> None:
    recorders = tuple(Recorder(name=name) for name in NAMES)
    async with watchdog_app(tmp_path, phases=recorders) as daemon:
        for phase in daemon.watchdog.phases:
            lo, hi = phase.window
            assert lo > 0
            assert phase.name not in await probe(daemon, lo * 0.99), f"{phase.name} ran before its window"
            assert phase.name in await probe(daemon, lo), f"{phase.name} did not run at its window start"
            inside = lo * 1.5 if hi is None else (lo + hi) / 2
            assert phase.name in await probe(daemon, inside)
            if hi is not None:
                assert phase.name in await probe(daemon, hi * 0.999)
                assert phase.name not in await probe(daemon, hi), f"{phase.name} ran past its window"
                assert phase.name not in await probe(daemon, hi * 3)
        # The windows are the DESIGN §5 table, compressed by --idle-time-scale.
        windows = {p.name: p.window for p in daemon.watchdog.phases}
        assert windows["journal_drain"] == pytest.approx((120 * SCALE, None))
        assert windows["rem_dream"] == pytest.approx((600 * SCALE, 3600 * SCALE))
        assert windows["self_play"] == pytest.approx((3600 * SCALE, None))
        # Idle 20 s (scaled: 2000 s) opens everything but self-play; in table order.
        for name in NAMES:
            daemon.watchdog.states[name] = PhaseState()
        daemon.idle_for(2000 * SCALE)
        assert list(await daemon.watchdog.tick()) == NAMES[:-1]


async def test_cooldown_holds_between_runs(tmp_path: Path) -> None:
    dream = Recorder(name="rem_dream")
    async with watchdog_app(tmp_path, phases=(dream,)) as daemon:
        wd = daemon.watchdog
        daemon.idle_for(700 * SCALE)
        assert "rem_dream" in await wd.tick()
        daemon.clock.advance(60 * SCALE)
        assert "rem_dream" not in await wd.tick()
        assert wd.states["rem_dream"].skip_reason is not None
        assert wd.states["rem_dream"].skip_reason.startswith("cooldown")
        daemon.clock.advance(1800 * SCALE)  # cooldown 30 min: over, and idle (2560 s) still inside 600-3600
        assert "rem_dream" in await wd.tick()
        assert len(dream.runs) == 2


async def test_anchor_advances_when_the_phase_raises(tmp_path: Path) -> None:
    seen: dict[str, float | None] = {}

    def boom(ctx: PhaseContext) -> None:
        state = daemon.watchdog.states["rem_dream"]
        seen["anchor_during_run"] = state.anchor  # set BEFORE the await
        daemon.clock.advance(5 * SCALE)  # the run takes a while before it fails
        raise RuntimeError("dream crashed mid-consolidation")

    dream = Recorder(name="rem_dream", action=boom)
    async with watchdog_app(tmp_path, phases=(dream,)) as daemon:
        wd = daemon.watchdog
        daemon.idle_for(700 * SCALE)
        started = daemon.clock.monotonic()
        result = (await wd.tick())["rem_dream"]
        assert result.status == "failed" and result.detail == "RuntimeError"
        state = wd.states["rem_dream"]
        assert seen["anchor_during_run"] == started
        assert state.anchor == daemon.clock.monotonic() == started + 5 * SCALE  # re-set in `finally`
        # Tick after tick inside the window: the failing phase does not refire until its cooldown is over.
        for _ in range(10):
            daemon.clock.advance(60 * SCALE)
            await wd.tick()
        assert len(dream.runs) == 1 and state.failures == 1
        assert wd.states["journal_drain"].runs == 11  # the watchdog itself kept going
        daemon.clock.advance(1250 * SCALE)  # past the 30 min cooldown, idle (2550 s) still inside 600-3600
        await wd.tick()
        assert len(dream.runs) == 2
    failed = [e for e in daemon.log_events("phase") if e.get("status") == "failed"]
    assert failed and failed[0]["phase"] == "rem_dream" and failed[0]["error"] == "RuntimeError"
    assert failed[0]["level"] == "error"


async def test_the_running_loop_fires_in_window_only_and_survives_a_raising_phase(tmp_path: Path) -> None:
    def boom(ctx: PhaseContext) -> None:
        raise ValueError("every run fails")

    drain = Recorder(name="journal_drain", action=boom)
    async with watchdog_app(tmp_path, phases=(drain,), loop=True) as daemon:
        wd = daemon.watchdog
        assert wd.tick_s == pytest.approx(0.01)
        await wait_until(lambda: wd.ticks >= 5)
        assert drain.runs == []  # idle 0 s: below the 1.2 s window, however many ticks pass
        daemon.clock.advance(130 * SCALE)
        await wait_until(lambda: len(drain.runs) >= 3)  # cooldown 0: every tick, failing or not
        assert wd.running and wd.states["journal_drain"].failures >= 3
        response = await daemon.client.post(CHAT, json={"messages": MESSAGES})
        assert response.status_code == 200
        runs = len(drain.runs)
        ticks = wd.ticks
        await wait_until(lambda: wd.ticks >= ticks + 5)
        assert len(drain.runs) == runs  # the request reset the idle clock: out of the window again
        status = (await daemon.client.get("/v1/ghost/status")).json()
        row = next(p for p in status["phases"] if p["name"] == "journal_drain")
        assert row["skip_reason"].startswith("idle")
        assert row["last_result"]["status"] == "failed"


async def test_only_user_chat_requests_move_the_idle_clock(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, api_key="k") as daemon:
        auth = {"authorization": "Bearer k"}
        daemon.clock.advance(50.0)
        assert daemon.ctx.activity.idle_s() == pytest.approx(50.0)
        for path in ("/health", "/metrics", "/v1/models", "/v1/ghost/status"):
            await daemon.client.get(path, headers=auth)
        await daemon.client.post(CHAT, json={"messages": MESSAGES})  # unauthenticated: refused, not activity
        await daemon.watchdog.tick()  # phases never touch it either
        assert daemon.ctx.activity.idle_s() == pytest.approx(50.0)
        response = await daemon.client.post(CHAT, json={"messages": MESSAGES}, headers=auth)
        assert response.status_code == 200
        assert daemon.ctx.activity.idle_s() == 0.0
        assert daemon.ctx.activity.requests == 1


async def test_phase_events_are_logged(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path) as daemon:
        daemon.idle_for(950 * SCALE)
        ran = await daemon.watchdog.tick()
        assert ran["reflection"] == PhaseResult.ok(reflected=0, lessons=0)
        assert ran["retrain"] == PhaseResult.skipped("no trajectories yet")
        daemon.clock.advance(1 * SCALE)
        await daemon.watchdog.tick()
    events = daemon.log_events("phase")
    dream = [e for e in events if e["phase"] == "rem_dream"]
    assert [e["action"] for e in dream][:2] == ["start", "end"]
    assert dream[1]["status"] == "ok" and "duration_ms" in dream[1]
    retrain = [e for e in events if e["phase"] == "retrain"]
    assert {"action": "skip", "reason": "no trajectories yet"}.items() <= retrain[1].items()
    reflection = [e for e in events if e["phase"] == "reflection"]
    assert [e["action"] for e in reflection][:2] == ["start", "end"] and reflection[1]["reflected"] == 0
    # Gating skips are logged when the reason changes (here: into the cooldown), not on every tick.
    assert any(e["action"] == "skip" and e["reason"].startswith("cooldown") for e in reflection)
    self_play = [e for e in events if e["phase"] == "self_play"]
    assert len(self_play) == 1 and self_play[0]["kind"] == "idle_below_window"


async def test_watchdog_can_be_disabled(tmp_path: Path) -> None:
    async with watchdog_app(tmp_path, watchdog=False, loop=True) as daemon:
        await asyncio.sleep(0.05)
        assert daemon.watchdog.ticks == 0 and not daemon.watchdog.running
        assert "watchdog" not in {t.get_name() for t in daemon.ctx.tasks}
        status = (await daemon.client.get("/v1/ghost/status")).json()
        assert status["watchdog"]["enabled"] is False
        assert all(p["next_eligible"] is None for p in status["phases"])


async def test_every_run_lands_in_the_run_history(tmp_path: Path) -> None:
    def boom(ctx: PhaseContext) -> None:
        raise RuntimeError("dream crashed")

    dream = Recorder(name="rem_dream", action=boom)
    async with watchdog_app(tmp_path, phases=(dream,)) as daemon:
        wd = daemon.watchdog
        daemon.idle_for(700 * SCALE)
        await wd.tick()
        assert wd.run_log is not None
        runs = wd.run_log.runs()
    by_phase = {r["phase"]: r for r in runs}
    assert by_phase["rem_dream"]["status"] == "failed" and by_phase["rem_dream"]["detail"] == "RuntimeError"
    assert by_phase["journal_drain"]["status"] in ("ok", "skipped")
    assert all(r["start"] <= r["end"] and r["duration_ms"] >= 0 for r in runs)
