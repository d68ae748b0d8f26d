"""A seeded GHOST_HOME for the status page's tests: turns, lessons (one of them hostile markup), a skill
candidate and watchdog runs, written through the real stores."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ghost_agent.home import GhostHome
from ghost_agent.memory.store import SkillMemory
from ghost_agent.settings import Settings
from ghost_agent.skills_auto.mining import Support
from ghost_agent.skills_auto.store import SkillStore
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory
from ghost_agent.watchdog.run_log import History, PhaseRunLog

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
START = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Seeded:
    turn_ids: list[str]  # oldest first
    lesson_id: str
    hostile_lesson_id: str
    candidate_id: str


def turn(i: int, *, request: str | None = None, tools: bool = False) -> Trajectory:
    steps = [Step(i=0, description="run the program", tool_name="python", duration_ms=120.0, result_preview="42"),
             Step(i=1, description="read the file", tool_name="read_file", duration_ms=8.0, ok=False,
                  error="no such file")] if tools else []
    return Trajectory(
        session_id=f"client-{i % 3}", ts=(START + timedelta(minutes=i)).isoformat(),
        user_request=request or f"request number {i}: what is {i} squared?", final_response=f"It is {i * i}.",
        steps=steps, outcome=Outcome.PASSED if i % 2 else Outcome.UNKNOWN,
        router={"decision": "agent" if tools else "fast", "reason": "prior_agent" if tools else "prior_fast"},
        usage={"prompt_tokens": 40 + i, "completion_tokens": 10, "total_tokens": 50 + i},
        timing_ms={"stage_memory": 0.5, "stage_router": 0.3, "stage_respond": 900.0 + i},
        extra={"agent": {"strategy": "answer-first", "llm_calls": 2, "ms": 890.0, "kind": "number",
                         "computed": {"value": i * i, "trusted": True},
                         "calls": [{"purpose": "draft", "ms": 600.0, "prompt_tokens": 40, "completion_tokens": 8},
                                   {"purpose": "program", "ms": 150.0, "prompt_tokens": 60,
                                    "completion_tokens": 20}]}} if tools else {},
    )


def seed(settings: Settings, turns: int = 12) -> Seeded:
    home = GhostHome(settings.home).ensure()
    ids = []
    with TrajectoryCollector(home.trajectories) as collector:
        for i in range(turns):
            traj = turn(i, tools=i == turns - 1,
                        request=f"{HOSTILE} hostile request" if i == turns - 2 else None)
            collector.append(traj)
            ids.append(traj.id)
    with SkillMemory(home.lessons_db) as memory:
        lesson = memory.learn_lesson("requests like: the date of Christmas", "", "The user said: \"I write dates as "
                                     "DD/MM/YYYY.\"", source_trajectory_id=ids[0], session_id="client-0",
                                     source="preference").lesson
        hostile = memory.learn_lesson("requests like: anything", "", HOSTILE, source_trajectory_id=ids[1],
                                      session_id="client-1").lesson
    store = SkillStore(home.skills_db)
    try:
        support = Support(("python", "read_file"), ids=ids[:3], requests=["count the lines", "sum the column"])
        candidate = store.sync([support], {support.key: support}).new[0]
    finally:
        store.close()
    run_log = PhaseRunLog(home.watchdog_runs)
    now = time.time() - 3600
    for k, (phase, status) in enumerate([("reflection", "ok"), ("skills_auto", "skipped"), ("retrain", "failed"),
                                         ("reflection", "ok"), ("self_play", "yielded")]):
        run_log.append(phase=phase, key=phase[:1], started=now + k * 300, ended=now + k * 300 + 40,
                       status=status, detail=f"{phase} detail {k}", data={"examples": k})
    return Seeded(ids, lesson.id, hostile.id, candidate.id)


def seed_learning(settings: Settings) -> None:
    """Self-play turns over two days in two clusters, and two judged retrains with calibration."""
    home = GhostHome(settings.home).ensure()
    with TrajectoryCollector(home.trajectories) as collector:
        for day in range(2):
            for k in range(4):
                passed = k < 1 + 2 * day  # algo: 1/2 then 2/2; text: 0/2 then 1/2
                collector.append(Trajectory(
                    session_id="self-play", source="self_play", cluster="algo" if k % 2 == 0 else "text",
                    ts=(START + timedelta(days=day, minutes=k)).isoformat(), user_request=f"practice {day}/{k}",
                    outcome=Outcome.PASSED if passed else Outcome.FAILED))
    history = History(home.retrain_history)
    for n, (auc, live_auc) in enumerate(((0.61, 0.5), (0.74, 0.61))):
        history.add({"ts": (START + timedelta(days=n)).isoformat(), "kind": "prm", "result": "swapped",
                     "live_model_id": f"prm-{n}", "samples": 300 + n,
                     "gate": {"judged": True, "accepted": True, "reason": "better held-out log loss",
                              "candidate": {"auc": auc, "log_loss": 0.6 - n / 10}, "live_id": "neutral",
                              "live": {"auc": live_auc, "log_loss": 0.69}, "holdout_samples": 60,
                              "calibration": [{"lo": 0.1, "hi": 0.2, "n": 20, "predicted": 0.15, "observed": 0.1},
                                              {"lo": 0.8, "hi": 0.9, "n": 40, "predicted": 0.85, "observed": 0.9}]}})


def seed_evals(settings: Settings) -> None:
    """Three eval runs of two suites and one frozen baseline."""
    home = GhostHome(settings.home).ensure()
    history = History(home.eval_history)
    for n, (suite, rate) in enumerate((("default", 0.5), ("default", 0.625), ("everyday", 0.9))):
        history.add({"ts": (START + timedelta(days=n)).isoformat(), "command": "compare" if n else "freeze",
                     "suite": suite, "pass_rate": rate, "passed": int(rate * 8), "total": 8, "clusters": {},
                     "runner": "http", "model": "qwen", "baseline_pass_rate": 0.5 if n else None,
                     "regressed": False if n else None})
    (home.eval / "default.json").write_text('{"schema": "x", "suite": "default", "pass_rate": 0.5, "passed": 4, '
                                            '"total": 8, "clusters": {}, "metadata": {"runner": "http"}}')
    (home.eval / "broken.json").write_text("{not json")
