"""Does a retrain hurt the daemon? Event-loop lag and chat latency while the watchdog's phase 2.7 refits.

    python bench/bench_retrain_lag.py [--samples 10000] [--isolation process thread] [--chat-rate 20]

A temporary GHOST_HOME gets `--samples` synthetic trajectories (bench/synth_prm.py turns with tools, enough
for `--samples` PRM step samples, plus fast-path chat turns up to `--samples` router samples in all), spread
over the last two days. The daemon (`build_app`, the scripted backend answering in-process) runs under a real
uvicorn on a loopback port **in this process's event loop**, next to a probe that sleeps 1 ms over and over
and records how late it wakes up (the loop's lag). A separate client process sends sequential chat requests
(`hi there`, fast path) at `--chat-rate` per second and times each.

For each isolation (`process`: the phase as shipped, the fit in a niced child process; `thread`: the same job
in a worker thread, for comparison) the retrain row runs twice — once with no chat traffic (the loop's lag
during a retrain) and once under the chat load (chat latency during vs before the retrain). Each run starts
with no live model, so both models are really refitted, judged and swapped.

Targets (issue 13): event-loop lag p99 during a 10,000-sample retrain <= 5 ms; chat p50 during the retrain
/ idle <= 1.1. CPU only, no model. The machine is shared: the idle rows show its noise floor, and the load
average is printed with each run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_prm import make_trajectory  # noqa: E402

JSON = dict[str, Any]
PROBE_S = 0.001


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


# ------------------------------------------------------------------------------------------- the corpus


def synthesize(collector: Any, samples: int, seed: int) -> tuple[int, int]:
    """Write PRM trajectories (>= `samples` steps) and fast chat turns (router samples up to `samples`)."""
    from ghost_agent.trajectories.record import Outcome, Trajectory

    rng = random.Random(seed)
    prm: list[Trajectory] = []
    steps = 0
    while steps < samples:
        traj = make_trajectory(rng)
        prm.append(traj)
        steps += len(traj.steps)
    fast = max(0, samples - len(prm))
    router = {"decision": "fast", "p": None, "reason": "prior_fast", "model": None}
    chats = [Trajectory(user_request=rng.choice(("hi there", "thanks!", "what is the capital of France?",
                                                 "tell me a joke")) + f" #{k}",
                        final_response="ok", outcome=rng.choice((Outcome.PASSED, Outcome.UNKNOWN)), router=router)
             for k in range(fast)]
    everything = prm + chats
    rng.shuffle(everything)
    start = datetime.now(timezone.utc) - timedelta(days=2)
    step = timedelta(days=2) / max(1, len(everything))
    for k, traj in enumerate(everything):
        traj.ts = (start + k * step).isoformat()
        traj.session_id = f"bench-{k % 40}"
        collector.append(traj)
    collector.flush()
    return len(everything), steps


# ------------------------------------------------------------------------------------------ the client


def client_main(url: str, out: str, stop: str, rate: float) -> None:
    """The chat client process: sequential requests at `rate`/s until `stop` exists; (t, ms) pairs to `out`."""
    import httpx

    period = 1.0 / rate
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}]}
    times: list[tuple[float, float]] = []
    with httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
        client.post("/v1/chat/completions", json=body).raise_for_status()  # warm the connection
        Path(out + ".ready").write_text("1")
        next_at = time.monotonic()
        while not os.path.exists(stop):
            t0 = time.monotonic()
            try:
                client.post("/v1/chat/completions", json=body).raise_for_status()
            except httpx.HTTPError as exc:  # reported, not fatal: the figures say how many failed
                sys.stderr.write(f"chat request failed after {time.monotonic() - t0:.1f} s: {exc!r}\n")
                times.append((t0, -1.0))
                continue
            times.append((t0, (time.monotonic() - t0) * 1000.0))
            next_at += period
            time.sleep(max(0.0, next_at - time.monotonic()))
    Path(out).write_text(json.dumps(times))


@dataclass
class Client:
    """The client process and its files."""

    process: subprocess.Popen[bytes]
    out: Path
    stop: Path

    def finish(self) -> list[tuple[float, float]]:
        self.stop.write_text("1")
        self.process.wait(60)
        return [tuple(x) for x in json.loads(self.out.read_text())]  # type: ignore[misc]


async def start_client(url: str, tmp: Path, tag: str, rate: float) -> Client:
    out, stop = tmp / f"client-{tag}.json", tmp / f"client-{tag}.stop"
    process = subprocess.Popen([sys.executable, __file__, "--client", url, "--out", str(out), "--stop", str(stop),
                                "--chat-rate", str(rate)])
    ready = Path(str(out) + ".ready")
    while not ready.exists():
        if process.poll() is not None:
            raise SystemExit("the chat client died")
        await asyncio.sleep(0.01)
    return Client(process, out, stop)


# ------------------------------------------------------------------------------------------- the probe


@dataclass
class Probe:
    """Sleeps 1 ms again and again in the daemon's loop; records (wake-up time, lag)."""

    samples: list[tuple[float, float]] = field(default_factory=list)
    running: bool = True

    async def run(self) -> None:
        while self.running:
            t0 = time.monotonic()
            await asyncio.sleep(PROBE_S)
            now = time.monotonic()
            self.samples.append((now, (now - t0 - PROBE_S) * 1000.0))

    def between(self, a: float, b: float) -> list[float]:
        return [lag for t, lag in self.samples if a <= t <= b]


def lag_row(label: str, lags: list[float], target: str = "") -> str:
    return (f"  {label:34s} p50 {percentile(lags, .5):6.2f}  p99 {percentile(lags, .99):6.2f}  "
            f"max {max(lags) if lags else float('nan'):7.2f} ms  (n={len(lags)}) {target}")


# ---------------------------------------------------------------------------------------------- a run


async def retrain_once(ctx: Any, isolation: str) -> tuple[float, float, Any]:
    """One run of the retrain row from no live models; (start, end, result).

    Like the watchdog, the phase does not start while a chat request is in flight (it returns `yielded`):
    under the chat load it is retried until it starts in a gap between requests, as it would when idle.
    """
    from ghost_agent.watchdog.phases.retrain import RetrainPhase
    from ghost_agent.watchdog.table import row_for

    watchdog = ctx.watchdog
    for _ in range(200):
        ctx.prm_scorer.set_model(None, source="bench reset")
        ctx.router.set_model(None, source="bench reset")
        phase = RetrainPhase(row_for("retrain").timing(ctx.settings), isolation=isolation)  # type: ignore[arg-type]
        watchdog.install(phase)
        t0 = time.monotonic()
        result = await watchdog.run_phase(watchdog.phase("retrain"), watchdog.states["retrain"])
        if result.status != "yielded":
            return t0, time.monotonic(), result
        await asyncio.sleep(0.003)
    raise SystemExit("the retrain never found a gap between chat requests")


async def bench(args: argparse.Namespace) -> None:
    import structlog
    import uvicorn

    from ghost_agent.home import GhostHome
    from ghost_agent.llm.fake_server import free_port
    from ghost_agent.llm.scripted import ScriptedBackend
    from ghost_agent.server import build_app
    from ghost_agent.settings import Settings
    from ghost_agent.trajectories.collector import TrajectoryCollector

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        settings = Settings.from_keys(home=tmp / "home", router="always-fast", watchdog_tick_s=1e6, log_level="warning",
                                      reflection=False, model_cache_dir=tmp / "models").validate()
        home = GhostHome(settings.home).ensure()
        t0 = time.perf_counter()
        with TrajectoryCollector(home.trajectories) as collector:
            trajectories, prm_samples = synthesize(collector, args.samples, args.seed)
        print(f"# retrain under load: {trajectories} synthetic trajectories ({prm_samples} PRM step samples; "
              f"written in {time.perf_counter() - t0:.1f} s), chat at {args.chat_rate:g} req/s from another process")
        app = build_app(settings, ScriptedBackend(model="scripted"))
        ctx = app.state.ctx
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        serving = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{port}"
        probe = Probe()
        probing = asyncio.ensure_future(probe.run())
        try:
            await asyncio.sleep(0.5)
            a = time.monotonic()
            await asyncio.sleep(args.idle_s)
            print(f"\nevent-loop lag, 1 ms probe in the daemon's loop (load average {loadavg()})")
            print(lag_row("idle, no chat", probe.between(a, time.monotonic())))
            for isolation in args.isolation:
                await run_isolation(ctx, isolation, probe, url, tmp, args)
        finally:
            probe.running = False
            await probing
            server.should_exit = True
            await serving
            structlog.reset_defaults()


async def run_isolation(ctx: Any, isolation: str, probe: Probe, url: str, tmp: Path, args: argparse.Namespace
                        ) -> None:
    print(f"\n## isolation = {isolation} (load average {loadavg()})")
    start, end, result = await retrain_once(ctx, isolation)
    data = result.data
    print(f"retrain, no chat: {end - start:.2f} s, {result.status}: prm {data.get('prm')}, "
          f"router {data.get('router')}")
    print(lag_row("during retrain, no chat", probe.between(start, end), "(target p99 <= 5 ms)"))

    client = await start_client(url, tmp, isolation, args.chat_rate)
    a = time.monotonic()
    await asyncio.sleep(args.idle_s)
    b = time.monotonic()
    start, end, result = await retrain_once(ctx, isolation)
    await asyncio.sleep(0.2)
    chats = client.finish()
    failed = sum(1 for _, ms in chats if ms < 0)
    if failed:
        print(f"  {failed} chat requests FAILED (see stderr)")
    idle = [ms for t, ms in chats if a <= t < b and ms >= 0]
    during = [ms for t, ms in chats if start <= t <= end and ms >= 0]
    print(f"retrain, with chat: {end - start:.2f} s, {result.status}: prm {result.data.get('prm')}, "
          f"router {result.data.get('router')}")
    print(lag_row("idle, with chat", probe.between(a, b)))
    print(lag_row("during retrain, with chat", probe.between(start, end)))
    if idle and during:
        p50_idle, p50_during = statistics.median(idle), statistics.median(during)
        print(f"  chat latency  idle p50 {p50_idle:6.2f} ms (n={len(idle)})   during retrain p50 {p50_during:6.2f} ms "
              f"(n={len(during)})   ratio {p50_during / p50_idle:.2f}  (target <= 1.1)")
        print(f"                idle p90 {percentile(idle, .9):6.2f} ms             during retrain p90 "
              f"{percentile(during, .9):6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--isolation", nargs="+", choices=("process", "thread"), default=["process", "thread"])
    parser.add_argument("--chat-rate", type=float, default=20.0, help="chat requests per second (sequential)")
    parser.add_argument("--idle-s", type=float, default=4.0, help="seconds measured before each retrain")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--stop", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args.client, args.out, args.stop, args.chat_rate)
        return
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
