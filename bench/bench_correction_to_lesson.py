"""Correction → lesson stored: how soon a user's "no, ..." becomes a lesson the next turn can be shown.

    python bench/bench_correction_to_lesson.py [--rounds 40] [--warmup 3] [--kind critique|preference|both]

The daemon runs under a real uvicorn on a loopback port in front of the scripted fake upstream (also on a
loopback port, answering instantly), with a temporary GHOST_HOME: real trajectory store, corrections sidecar
and lesson store. Each round is a fresh session: turn 1 (a three-word request), then the correction ("no, ..."
+ a rephrase) — the daemon marks turn 1 FAILED, retracts its lessons and schedules the reflection, whose
critique the fake upstream answers with a lesson. `--kind preference` corrections also state what the user
wants ("no, I want the words in capitals. ..."): their lesson is the user's words, stored with no critique
call (the fake upstream would answer one with an error). Timed per round, from the moment the correction is
sent:

  reply           the correcting turn's reply (the user never waits for the reflection)
  lesson stored   the reflection's lesson visible in the lesson store (polled every 2 ms from this process)

Target (issue 13): correction → lesson stored p50 <= 100 ms with the scripted upstream. Never run this against
the embedded model: it measures our own overhead, and a second model process would ruin any benchmark
running on the machine.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import structlog

from ghost_agent.home import GhostHome
from ghost_agent.llm.fake_server import FakeOpenAIServer, serve_in_thread
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.server import build_app
from ghost_agent.settings import Settings

WORDS = ("kangaroo trampoline lighthouse metronome walnut glacier saxophone cactus lantern pebble origami "
         "harbor violet comet marble thimble anchor quartz falcon meadow").split()
POLL_S = 0.002
DEADLINE_S = 10.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def lesson_stored(db: sqlite3.Connection, trajectory_id: str) -> bool:
    row = db.execute("SELECT 1 FROM lessons WHERE source_trajectory_id = ? LIMIT 1", (trajectory_id,)).fetchone()
    return row is not None


def one_round(client: httpx.Client, llm: ScriptedBackend, db: sqlite3.Connection, rng: random.Random, n: int,
              kind: str) -> tuple[float, float]:
    """(reply ms, lesson-stored ms) for one correction, both from the moment the correction is sent."""
    a, b, c, d = rng.sample(WORDS, 4)
    request = f"Reply with three words exactly: {a} {b} {c}"
    first_reply = f"Sure! {a} {b} {c}"
    headers = {"x-ghost-session-id": f"bench-{kind}-{n}"}
    if kind == "preference":
        correction = f"no, I want the words in capitals and nothing else. Reply with three words exactly: {a} {b} {c}"
        llm.enqueue(ScriptedReply(content=first_reply), ScriptedReply(content=f"{a} {b} {c}".upper()))
    else:
        correction = f"no, reply with three words exactly: {a} {b} {d}"
        lesson = {"task": f"replying with exactly three given words like {a} {b}", "mistake": f"added words around {c}",
                  "solution": f"Reply with exactly {a} {b} {d} and nothing else."}
        llm.enqueue(ScriptedReply(content=first_reply), ScriptedReply(content=f"{a} {b} {d}"),
                    ScriptedReply(content=json.dumps(lesson)))
    first = client.post("/v1/chat/completions", headers=headers,
                        json={"model": "m", "messages": [{"role": "user", "content": request}]})
    first.raise_for_status()
    turn1 = first.headers["x-ghost-trajectory-id"]
    time.sleep(0.05)  # turn 1 is recorded after its reply: let that finish, it is not what is measured
    body = {"model": "m", "messages": [{"role": "user", "content": request},
                                       {"role": "assistant", "content": first_reply},
                                       {"role": "user", "content": correction}]}
    t0 = time.perf_counter()
    second = client.post("/v1/chat/completions", headers=headers, json=body)
    reply_ms = (time.perf_counter() - t0) * 1000
    second.raise_for_status()
    while not lesson_stored(db, turn1):
        if time.perf_counter() - t0 > DEADLINE_S:
            raise SystemExit(f"round {n}: no lesson within {DEADLINE_S}s (log: see the temp home)")
        time.sleep(POLL_S)
    return reply_ms, (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--kind", choices=("critique", "preference", "both"), default="both",
                        help="corrections that only rephrase (critique), that state a preference, or both")
    args = parser.parse_args()
    kinds = ("critique", "preference") if args.kind == "both" else (args.kind,)
    rng = random.Random(args.seed)
    llm = ScriptedBackend(model="upstream-model", default="error")
    with tempfile.TemporaryDirectory() as tmp, serve_in_thread(FakeOpenAIServer(llm)) as upstream:
        settings = Settings.from_keys(
            home=Path(tmp) / "home", upstream_url=upstream, router="always-fast", watchdog=False,
            log_level="warning", model_cache_dir=Path(tmp) / "models",
        ).validate()
        app = build_app(settings)
        try:
            with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
                db = sqlite3.connect(f"file:{GhostHome(settings.home).lessons_db}?mode=ro", uri=True)
                replies: dict[str, list[float]] = {k: [] for k in kinds}
                lessons: dict[str, list[float]] = {k: [] for k in kinds}
                for n in range(args.warmup + args.rounds):
                    for kind in kinds:  # alternated, so a slow stretch of the machine hits both alike
                        reply_ms, lesson_ms = one_round(client, llm, db, rng, n, kind)
                        if n >= args.warmup:
                            replies[kind].append(reply_ms)
                            lessons[kind].append(lesson_ms)
                db.close()
        finally:
            structlog.reset_defaults()
    print(f"# correction -> lesson stored, scripted upstream over loopback HTTP, {args.rounds} rounds "
          f"({args.warmup} warm-up rounds not counted)")
    for kind in kinds:
        for label, values, target in (
            (f"{kind}: correcting reply", replies[kind], ""),
            (f"{kind}: -> lesson stored", lessons[kind], "(target p50 <= 100 ms)"),
        ):
            print(f"{label:34s}: p50 {statistics.median(values):7.1f} ms  p90 {percentile(values, .9):7.1f} ms  "
                  f"max {max(values):7.1f} ms  {target}")


if __name__ == "__main__":
    main()
