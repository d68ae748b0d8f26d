"""Phase 2.6, skills_auto, in the real daemon on a real home: mines candidates from validator-passing turns only,
never promotes one itself, scans incrementally and in bounded passes, yields to a user request mid-scan; the
`skills` CLI promotes and rejects on the same home, and a promoted skill reaches the model as data."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.cli.skills import run_skills_cli
from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.memory.bus import CLOSE, HEADER, OPEN
from ghost_agent.skills_auto.mining import ARROW
from ghost_agent.skills_auto.store import SkillStore
from ghost_agent.trajectories.record import Outcome
from ghost_agent.watchdog.base import PhaseResult
from ghost_agent.watchdog.phases.skills_auto import SkillsAutoPhase
from ghost_agent.watchdog.runner import PhaseState
from tests.skills_auto.helpers import GREP, LIST, LOG_TASK, PANDAS, READ, turn, write
from tests.watchdog.conftest import CHAT, MESSAGES, PLACEHOLDER, SCALE, Daemon, wait_until, watchdog_app

IN_WINDOW = 1000 * SCALE  # 10 s: inside 2.6's scaled window (9–36 s)


def cli(home: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_skills_cli([*argv, "--home", str(home)], out, err)
    return code, out.getvalue(), err.getvalue()


async def run_skills(daemon: Daemon) -> PhaseResult:
    """One pass of the skills row, whatever its window and cooldown say."""
    watchdog = daemon.watchdog
    return await watchdog.run_phase(watchdog.phase("skills_auto"), watchdog.states.setdefault("skills_auto",
                                                                                              PhaseState()))


def seed(home: Path) -> dict[str, list[str]]:
    """3 passing log-counting turns, the same sequence FAILED (and a PASSED one a user then corrected), 3 UNKNOWN
    pandas turns, and 3 passing pandas→list turns."""
    ids: dict[str, list[str]] = {}
    ids["log"] = write(home, [turn([LIST, READ, GREP], Outcome.PASSED, f"count the error lines in access.log #{i}")
                              for i in range(3)])
    ids["failed"] = write(home, [turn([LIST, READ, GREP], Outcome.FAILED) for _ in range(3)])
    corrected = turn([LIST, READ, GREP], Outcome.PASSED)
    ids["corrected"] = write(home, [corrected], [(corrected.id, Outcome.FAILED, "user_correction")])
    ids["unknown"] = write(home, [turn([READ, PANDAS], Outcome.UNKNOWN, "read then pandas") for _ in range(3)])
    ids["pandas"] = write(home, [turn([PANDAS, LIST], Outcome.PASSED, "describe x.csv then list the files")
                                 for _ in range(3)])
    return ids


async def test_candidates_come_from_passing_turns_and_only_the_operator_promotes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = seed(home)
    async with watchdog_app(tmp_path) as daemon:
        assert isinstance(daemon.watchdog.phase("skills_auto"), SkillsAutoPhase)  # the table's row 2.6
        result = await run_skills(daemon)
        assert result.status == "ok", result
        assert result.data == {"scanned": 13, "observed": 13, "backlog": False, "window": 13, "candidates": 2,
                               "new": 2, "dropped": 0}
        with SkillStore(GhostHome(home).skills_db) as store:
            found = {c.steps: c for c in store.candidates()}
        assert set(found) == {LOG_TASK, ("python(code=import pandas)", "file_system(action=list, path)")}
        log_task = found[LOG_TASK]
        assert log_task.status == "candidate" and log_task.support == 3  # not the FAILED, not the corrected one
        assert set(log_task.trajectory_ids) == set(ids["log"])
        assert log_task.samples[0].startswith("count the error lines in access.log")
        logged = daemon.log_events("skill_candidate")
        assert {e["candidate_id"] for e in logged} == {c.id for c in found.values()}
        status = (await daemon.client.get("/v1/ghost/status", params={"refresh": "true"})).json()
        assert status["counts"]["candidates"] == {"available": True, "total": 2, "by_status": {"candidate": 2}}
        memory = daemon.ctx.agent_services.memory
        assert memory is not None and memory.all() == []  # mined, never promoted by the phase

        # The operator, on the same home while the daemon runs.
        code, out, _ = cli(home, "candidates", "--json")
        assert code == 0 and [c["id"] for c in orjson.loads(out)][0] == log_task.id
        code, out, _ = cli(home, "candidates")
        assert code == 0 and log_task.id in out and ARROW.join(LOG_TASK) in out and "count the error lines" in out
        code, out, err = cli(home, "promote", log_task.id[:6])
        assert code == 0, err
        assert f"{log_task.id}  promoted" in out
        other = found[("python(code=import pandas)", "file_system(action=list, path)")]
        assert cli(home, "reject", other.id, "--reason", "too generic")[0] == 0

        with SkillStore(GhostHome(home).skills_db) as store:
            promoted = store.get(log_task.id)
        assert promoted is not None and promoted.status == "promoted" and promoted.lesson_id
        lesson = memory.get(promoted.lesson_id)
        assert lesson is not None and lesson.status == "pinned" and lesson.source == "skill"
        assert ARROW.join(LOG_TASK) in lesson.solution and lesson.session_id == ""
        code, out, _ = cli(home, "ls", "--json")
        assert [(s["id"], s["lesson_status"]) for s in orjson.loads(out)] == [(log_task.id, "pinned")]

        # More turns later: only the new lines are read; the decisions stand, support is refreshed.
        write(home, [turn([LIST, READ, GREP], Outcome.PASSED, "count the warnings in app.log")])
        write(home, [turn([PANDAS, LIST], Outcome.PASSED, "describe y.csv") for _ in range(2)])
        again = await run_skills(daemon)
        assert again.status == "ok" and again.data["scanned"] == 3 and again.data["new"] == 0
        with SkillStore(GhostHome(home).skills_db) as store:
            after = {c.id: c for c in store.candidates()}
        assert after[log_task.id].status == "promoted" and after[log_task.id].support == 4
        assert after[other.id].status == "rejected" and after[other.id].support == 5  # never proposed again
        assert [c for c in after.values() if c.status == "candidate"] == []

        # Rejecting the promoted skill retracts its lesson.
        assert cli(home, "reject", log_task.id)[0] == 0
        retracted = memory.get(promoted.lesson_id)
        assert retracted is not None and retracted.status == "retracted"


async def test_the_scan_is_incremental_and_bounded_per_pass(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, [turn([LIST, READ, GREP], Outcome.PASSED) for _ in range(12)])
    async with watchdog_app(tmp_path) as daemon:
        daemon.watchdog.install(SkillsAutoPhase(PLACEHOLDER, batch=5, chunk=2))
        passes = [(await run_skills(daemon)).data for _ in range(3)]
        assert [(p["scanned"], p["backlog"]) for p in passes] == [(5, True), (5, True), (2, False)]
        assert [p["window"] for p in passes] == [5, 10, 12]
        write(home, [turn([LIST, READ, GREP], Outcome.PASSED)])
        latest = (await run_skills(daemon)).data
        assert latest["scanned"] == 1 and latest["window"] == 13 and latest["new"] == 0
        assert (await run_skills(daemon)).data["scanned"] == 0


async def test_a_user_request_mid_scan_is_served_at_once_and_the_scan_resumes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    total = 400
    write(home, [turn([LIST, READ, GREP], Outcome.PASSED) for _ in range(total)])
    phase = SkillsAutoPhase(PLACEHOLDER, batch=10_000, chunk=1)  # one line per thread step
    async with watchdog_app(tmp_path, phases=(phase,), loop=True) as daemon:
        daemon.clock.advance(IN_WINDOW)
        deadline = time.monotonic() + 10
        while phase.lines_scanned < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0)  # catch the pass a few chunks in, not after it
        assert 3 <= phase.lines_scanned < total
        with daemon.ctx.model_gate.user():  # a chat request in flight (what the activity hook holds)
            t0 = time.perf_counter()
            response = await daemon.client.post(CHAT, json={"messages": MESSAGES})
            assert response.status_code == 200 and time.perf_counter() - t0 < 1.0
            state = daemon.watchdog.states["skills_auto"]
            await wait_until(lambda: state.last_result is not None)
        assert state.last_result is not None and state.last_result.status == "yielded"
        assert state.last_result.data["scanned"] < total and phase.lines_scanned < total
        resumed = await run_skills(daemon)  # the cursor kept what the yielded pass had read
        assert resumed.status == "ok" and resumed.data["window"] == total
        assert phase.lines_scanned >= total  # (+ the user's own turn when it was recorded in time)


async def test_a_promoted_skill_reaches_the_model_as_data_for_similar_requests_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, [turn([LIST, READ, GREP], Outcome.PASSED, "count the error lines in access.log", session=f"s{i}")
                 for i in range(3)])
    backend = ScriptedBackend(model="scripted-model")
    async with watchdog_app(tmp_path, backend=backend) as daemon:
        assert (await run_skills(daemon)).data["new"] == 1
        with SkillStore(GhostHome(home).skills_db) as store:
            (candidate,) = store.candidates()
        assert cli(home, "promote", candidate.id)[0] == 0

        async def chat(text: str) -> dict[str, Any]:
            response = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": text}]},
                                                headers={"x-ghost-session-id": "someone-else"})
            assert response.status_code == 200
            return backend.requests[-1]

        similar = await chat("count the error lines in app.log please")
        *earlier, last = similar["messages"]
        assert last["role"] == "user"
        block, _, rest = str(last["content"]).partition(f"\n{CLOSE}\n\n")
        assert rest == "count the error lines in app.log please"
        lines = block.split("\n")
        assert lines[:2] == [HEADER, OPEN] and len(lines) == 3
        assert ARROW.join(LOG_TASK) in lines[2] and lines[2].startswith("1. When count the error lines")
        assert all(m["role"] != "system" and OPEN not in json.dumps(m) for m in earlier)

        unrelated = await chat("write a haiku about the sea")
        assert OPEN not in json.dumps(unrelated["messages"]) and "grep" not in json.dumps(unrelated["messages"])
