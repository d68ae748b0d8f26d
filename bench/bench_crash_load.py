"""Load and kill -9: the daemon in front of the scripted fake upstream, under many concurrent clients.

Both servers run as separate processes on loopback (`ghost-agent serve --upstream-url FAKE --router
always-fast`, so the scripted upstream answers every turn directly; trajectory durability at its default).
Every client holds one keep-alive connection and alternates streaming and non-streaming chat requests, each
with its own `x-ghost-session-id`.

* **load**: N concurrent clients for `--duration` s (or `--requests`): requests, errors by status, p50/p99
  latency, the daemon's RSS (from /proc/PID/status) at start, after warm-up, in the middle and at the end; then a
  graceful stop and a read-back of the store (TrajectoryCollector): every 200's `x-ghost-trajectory-id` must be
  on disk.
* **crash**: the same load; during it the daemon is `kill -9`ed `--kills` times and restarted on the same
  home (and port) in between; the last one is stopped gracefully (SIGTERM: drain, flush). Every trajectory id
  of a response the client fully received with 200 (the body to its end, for a stream `data: [DONE]`) is
  acknowledged by the incarnation that sent it; afterwards, per incarnation, how many of those are on disk.

    python bench/bench_crash_load.py [--concurrency 200] [--duration 60] [--requests 0] [--kills 2]
                                     [--phases load crash] [--json PATH]

Durability (docs/trajectories.md): with `batch` (default) `append` writes through before it returns, so a
process crash loses no *appended* record. The append runs in a finisher *after* the client has the reply,
so a kill -9 between the last byte and that append loses a turn the client saw succeed; the crash phase
measures how often that happens (acknowledged vs on disk) and how long before the kill the lost ones ended.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loadgen import percentile  # noqa: E402

from ghost_agent.home import GhostHome  # noqa: E402
from ghost_agent.llm.fake_server import free_port  # noqa: E402
from ghost_agent.trajectories.collector import TrajectoryCollector  # noqa: E402

TRAJ_HEADER = b"x-ghost-trajectory-id"
DONE = b"data: [DONE]"
REQUEST_TIMEOUT_S = 60.0


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


# ---------------------------------------------------------------------------------------------- the client


@dataclass
class Reply:
    status: int
    trajectory_id: str | None
    complete: bool  # the whole body arrived (a stream: up to `data: [DONE]`)
    close: bool  # the server asked to close the connection


class Broken(Exception):
    """The connection failed mid-request (reset, EOF, garbage); `trajectory_id` if the headers had arrived."""

    def __init__(self, reason: str, trajectory_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.trajectory_id = trajectory_id


class Connection:
    """One keep-alive HTTP/1.1 connection issuing sequential POSTs; keeps the response headers loadgen drops."""

    def __init__(self, host: str, port: int, path: str, session: str) -> None:
        self.host, self.port, self.path = host, port, path
        self._head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"x-ghost-session-id: {session}\r\nContent-Length: "
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def post(self, body: bytes) -> Reply:
        assert self.reader is not None and self.writer is not None
        reader = self.reader
        traj: str | None = None
        stage = "before the status line"
        try:
            self.writer.write(self._head + str(len(body)).encode() + b"\r\n\r\n" + body)
            await self.writer.drain()
            status_line = await reader.readline()
            if not status_line:
                raise Broken(f"{stage} (EOF)")
            status = int(status_line.split()[1])
            stage = "in the headers"
            length: int | None = None
            chunked = close = False
            while True:
                line = await reader.readline()
                if line == b"\r\n":
                    break
                if not line:
                    raise Broken(f"{stage} (EOF)", traj)
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding" and b"chunked" in value.lower():
                    chunked = True
                elif name == b"connection" and b"close" in value.lower():
                    close = True
                elif name == TRAJ_HEADER:
                    traj = value.strip().decode()
            complete = True
            stage = "in the body"
            if length is not None:
                await reader.readexactly(length)
            elif chunked:
                tail = b""
                seen_done = False
                while True:
                    size = int((await reader.readline()).strip(), 16)
                    if size == 0:
                        await reader.readline()
                        break
                    data = await reader.readexactly(size + 2)
                    if not seen_done:
                        seen_done = DONE in tail + data
                        tail = data[-len(DONE):]
                complete = seen_done if status == 200 else True
            return Reply(status, traj, complete, close)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
            raise Broken(f"{stage} ({type(exc).__name__})", traj) from None


# ----------------------------------------------------------------------------------------- the processes


@dataclass
class Daemon:
    """`ghost-agent serve` on the fake upstream, restartable on the same home and port."""

    cmd: list[str]
    url: str
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def wait_up(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=1.0) as client:
            while time.monotonic() < deadline:
                if self.proc is not None and self.proc.poll() is not None:
                    break
                try:
                    if (await client.get(f"{self.url}/health")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.05)
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
        raise RuntimeError(f"daemon at {self.url} did not come up (rc={self.proc and self.proc.poll()}):\n{tail}")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (uvicorn drains, finishers run, the collector fsyncs); the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
            return None


def start_fake(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    log = log_path.open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ghost_agent.llm.fake_server", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    log.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"fake upstream did not come up: {log_path.read_text(errors='replace')[-2000:]}")


# ------------------------------------------------------------------------------------------------- the run


@dataclass
class Incarnation:
    """One daemon process: what the clients saw from it."""

    pid: int
    acked: dict[str, float] = field(default_factory=dict)  # trajectory id -> when its reply was complete
    streamed: set[str] = field(default_factory=set)  # the acknowledged ids of streaming replies
    cut_ids: set[str] = field(default_factory=set)  # streams cut by the kill after their headers arrived
    killed_at: float | None = None
    restart_s: float | None = None


@dataclass
class Run:
    name: str
    daemon: Daemon
    stop: bool = False
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    up: asyncio.Event = field(default_factory=asyncio.Event)
    incarnations: list[Incarnation] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"stream": [], "plain": []})
    statuses: Counter[str] = field(default_factory=Counter)
    broken: Counter[str] = field(default_factory=Counter)
    connect_refused: int = 0
    rss: list[tuple[float, float]] = field(default_factory=list)
    requests: int = 0
    budget: int = 0  # 0 = no request budget, only the duration
    sessions: int = 1
    t0: float = 0.0
    wall_s: float = 0.0
    home: Path | None = None
    backlog: dict[str, Any] = field(default_factory=dict)


def body_for(worker: int, k: int, stream: bool) -> bytes:
    text = f"Bench request {worker}-{k}: say hello, briefly please."
    return json.dumps(
        {"model": "m", "stream": stream, "messages": [{"role": "user", "content": text}]}
    ).encode()


async def worker(run: Run, i: int, host: str, port: int) -> None:
    conn: Connection | None = None
    conn_gen = -1
    for k in itertools.count():
        if run.stop:
            break
        if run.budget and run.requests >= run.budget:
            break
        if conn is None:
            await run.up.wait()
            conn = Connection(host, port, "/v1/chat/completions", f"bench-{i % run.sessions}")
            conn_gen = len(run.incarnations) - 1
            try:
                await conn.open()
            except OSError:
                run.connect_refused += 1
                conn = None
                await asyncio.sleep(0.05)
                continue
        stream = (i + k) % 2 == 0
        run.requests += 1
        t0 = time.perf_counter()
        try:
            reply = await asyncio.wait_for(conn.post(body_for(i, k, stream)), REQUEST_TIMEOUT_S)
        except Broken as exc:
            run.broken[exc.reason] += 1
            if exc.trajectory_id:
                run.incarnations[conn_gen].cut_ids.add(exc.trajectory_id)
            conn.close()
            conn = None
            continue
        except asyncio.TimeoutError:
            run.broken["timeout"] += 1
            conn.close()
            conn = None
            continue
        done = time.perf_counter()
        if reply.status == 200 and not reply.complete:
            run.statuses["200-incomplete"] += 1
        elif reply.status == 200 and reply.trajectory_id is None:
            run.statuses["200-no-trajectory-id"] += 1
        else:
            run.statuses[str(reply.status)] += 1
        if reply.status == 200 and reply.complete:
            run.latencies["stream" if stream else "plain"].append((done - t0) * 1000)
            if reply.trajectory_id:
                run.incarnations[conn_gen].acked[reply.trajectory_id] = done
                if stream:
                    run.incarnations[conn_gen].streamed.add(reply.trajectory_id)
        if reply.close:
            conn.close()
            conn = None
    if conn is not None:
        conn.close()


async def sample_rss(run: Run, every_s: float = 0.5) -> None:
    while not run.stop:
        if run.up.is_set():
            run.rss.append((time.perf_counter() - run.t0, rss_mb(run.daemon.pid)))
        await asyncio.sleep(every_s)


async def probe_backlog(run: Run, at_s: float) -> None:
    """Mid-run, read the store: replies the clients already have whose records are not on disk yet (what a
    kill -9 at that moment would lose), and how long ago the oldest of them was complete."""
    await asyncio.sleep(at_s)
    if run.stop or run.home is None:
        return
    snapshot = time.perf_counter()
    acked = dict(run.incarnations[-1].acked)
    on_disk, _, _ = await asyncio.to_thread(read_store, run.home)
    read_s = time.perf_counter() - snapshot
    ages = sorted((snapshot - t) * 1000 for tid, t in acked.items() if tid not in on_disk)
    run.backlog = {
        "at_s": round(snapshot - run.t0, 1), "acknowledged": len(acked), "not_on_disk": len(ages),
        "oldest_ms": round(ages[-1], 1) if ages else 0.0, "median_ms": round(percentile(ages, 0.5), 1) if ages else 0.0,
        "store_read_s": round(read_s, 2),
    }


async def killer(run: Run, kills: int, duration: float) -> None:
    """kill -9 at evenly spaced points of `duration`; restart on the same home and port at once."""
    for n in range(1, kills + 1):
        at = run.t0 + duration * n / (kills + 1)
        try:
            await asyncio.wait_for(run.stopped.wait(), max(0.0, at - time.perf_counter()))
            return  # the request budget ran out first
        except asyncio.TimeoutError:
            pass
        inc = run.incarnations[-1]
        run.up.clear()
        inc.killed_at = time.perf_counter()
        run.daemon.kill9()  # every reply completed before this line is acknowledged by `inc`
        t_kill = time.perf_counter()
        run.daemon.start()
        # Connections opened from here on reach the new process (until it listens they are refused).
        run.incarnations.append(Incarnation(run.daemon.pid))
        await run.daemon.wait_up()
        inc.restart_s = time.perf_counter() - t_kill
        run.up.set()


async def drive(run: Run, concurrency: int, duration: float, kills: int) -> None:
    host, port = "127.0.0.1", int(run.daemon.url.rsplit(":", 1)[1])
    run.incarnations.append(Incarnation(run.daemon.pid))
    run.rss.append((0.0, rss_mb(run.daemon.pid)))
    run.up.set()
    run.t0 = time.perf_counter()
    workers = [asyncio.ensure_future(worker(run, i, host, port)) for i in range(concurrency)]
    sampler = asyncio.ensure_future(sample_rss(run))
    kill_task = asyncio.ensure_future(killer(run, kills, duration)) if kills else None
    probe = None if kills else asyncio.ensure_future(probe_backlog(run, duration / 2))
    budget_done = asyncio.ensure_future(asyncio.gather(*workers))
    await asyncio.wait({budget_done}, timeout=duration)
    run.stop = True
    run.stopped.set()
    if kill_task is not None:
        await kill_task
    await budget_done
    if probe is not None:
        probe.cancel()
        await asyncio.gather(probe, return_exceptions=True)
    run.wall_s = time.perf_counter() - run.t0
    run.rss.append((run.wall_s, rss_mb(run.daemon.pid)))
    await sampler


def rss_at(run: Run, frac: float) -> float:
    """RSS of the *last* incarnation's samples closest to `frac` of the run (the load phase has one)."""
    if not run.rss:
        return float("nan")
    target = run.wall_s * frac
    return min(run.rss, key=lambda s: abs(s[0] - target))[1]


def read_store(home: Path) -> tuple[set[str], int, int]:
    reader = TrajectoryCollector(GhostHome(home).trajectories)
    ids = [t.id for t in reader.iter_trajectories()]
    return set(ids), len(ids), reader.corrupt_lines


async def phase(name: str, args: argparse.Namespace, tmp: Path, kills: int) -> dict[str, Any]:
    home = tmp / f"home-{name}"
    fake_port, port = free_port(), free_port()
    fake = start_fake(fake_port, tmp / f"fake-{name}.log")
    cmd = [
        sys.executable, "-m", "ghost_agent", "serve", "--port", str(port), "--upstream-url",
        f"http://127.0.0.1:{fake_port}", "--home", str(home), "--router", "always-fast",
        "--log-level", args.log_level, *args.daemon_arg,
    ]
    daemon = Daemon(cmd, f"http://127.0.0.1:{port}", tmp / f"daemon-{name}.log")
    try:
        daemon.start()
        await daemon.wait_up()
        run = Run(name, daemon, budget=args.requests, sessions=args.sessions or args.concurrency,
                  home=home)
        await drive(run, args.concurrency, args.duration, kills)
        t_stop = time.perf_counter()
        rc = daemon.stop()
        stop_s = time.perf_counter() - t_stop
    finally:
        daemon.stop()
        fake.terminate()
        fake.wait(timeout=15)
    on_disk, n_lines, corrupt = read_store(home)

    lat_s, lat_p = sorted(run.latencies["stream"]), sorted(run.latencies["plain"])
    both = sorted(lat_s + lat_p)
    ok = sum(len(inc.acked) for inc in run.incarnations)
    result: dict[str, Any] = {
        "phase": name,
        "concurrency": args.concurrency,
        "sessions": run.sessions,
        "wall_s": round(run.wall_s, 2),
        "requests": run.requests,
        "statuses": dict(run.statuses),
        "broken_connections": dict(run.broken),
        "connect_refused": run.connect_refused,
        "ok_200": ok,
        "rps": round(ok / run.wall_s, 1) if run.wall_s else 0.0,
        "latency_ms": {
            "p50": round(percentile(both, 0.5), 2), "p99": round(percentile(both, 0.99), 2),
            "stream_p50": round(percentile(lat_s, 0.5), 2), "stream_p99": round(percentile(lat_s, 0.99), 2),
            "plain_p50": round(percentile(lat_p, 0.5), 2), "plain_p99": round(percentile(lat_p, 0.99), 2),
        },
        "store": {"records": n_lines, "distinct_ids": len(on_disk), "corrupt_lines": corrupt},
        "final_exit_status": rc,
        "graceful_stop_s": round(stop_s, 2),
    }
    if kills == 0:
        result["rss_mb"] = {
            "start": round(run.rss[0][1], 1), "warm_10pct": round(rss_at(run, 0.1), 1),
            "middle": round(rss_at(run, 0.5), 1), "end": round(run.rss[-1][1], 1),
            "max": round(max(r for _, r in run.rss), 1),
        }
        result["record_backlog_midrun"] = run.backlog
    incs = []
    for n, inc in enumerate(run.incarnations):
        lost = {tid: t for tid, t in inc.acked.items() if tid not in on_disk}
        entry: dict[str, Any] = {
            "incarnation": n + 1,
            "ended_by": "kill -9" if inc.killed_at is not None else "SIGTERM",
            "acknowledged": len(inc.acked),
            "on_disk": len(inc.acked) - len(lost),
            "lost": len(lost),
            "lost_streaming": len(lost.keys() & inc.streamed),
        }
        if inc.killed_at is not None:
            killed = inc.killed_at
            entry["acked_last_100ms_before_kill"] = sum(1 for t in inc.acked.values() if killed - 0.1 <= t < killed)
            entry["acked_after_kill_signal"] = sum(1 for t in inc.acked.values() if t >= killed)  # socket buffers
            entry["lost_ended_ms_before_kill"] = sorted(round((killed - t) * 1000, 1) for t in lost.values())
            entry["streams_cut_with_id"] = len(inc.cut_ids)
            entry["streams_cut_recorded"] = len(inc.cut_ids & on_disk)
            entry["restart_s"] = round(inc.restart_s or 0.0, 2)
        incs.append(entry)
    result["incarnations"] = incs
    acked_all = set().union(*(inc.acked for inc in run.incarnations))
    result["acknowledged_total"] = len(acked_all)
    result["acknowledged_on_disk"] = len(acked_all & on_disk)
    return result


def print_table(results: list[dict[str, Any]]) -> None:
    for r in results:
        lat = r["latency_ms"]
        errors = {k: v for k, v in r["statuses"].items() if k != "200"}
        print(f"\n== {r['phase']}: {r['concurrency']} concurrent clients ({r['sessions']} sessions), "
              f"{r['wall_s']} s, half streaming")
        print(f"  requests {r['requests']:>7}   200 complete {r['ok_200']:>7}   {r['rps']} req/s")
        print(f"  non-200 statuses {errors or 0}   broken connections {r['broken_connections'] or 0}   "
              f"connect refused {r['connect_refused']}")
        print(f"  latency ms  all p50 {lat['p50']:.1f} p99 {lat['p99']:.1f} | stream p50 {lat['stream_p50']:.1f} "
              f"p99 {lat['stream_p99']:.1f} | non-stream p50 {lat['plain_p50']:.1f} p99 {lat['plain_p99']:.1f}")
        if "rss_mb" in r:
            m = r["rss_mb"]
            print(f"  daemon RSS MB  start {m['start']}  warm (10%) {m['warm_10pct']}  middle {m['middle']}  "
                  f"end {m['end']}  max {m['max']}")
        b = r.get("record_backlog_midrun")
        if b:
            print(f"  record backlog at {b['at_s']} s: {b['not_on_disk']} of {b['acknowledged']} replies the clients "
                  f"had were not on disk yet (median {b['median_ms']} ms, oldest {b['oldest_ms']} ms since the reply "
                  f"ended; the read took {b['store_read_s']} s)")
        s = r["store"]
        print(f"  store: {s['records']} records, {s['corrupt_lines']} corrupt lines; final stop exit "
              f"{r['final_exit_status']} in {r['graceful_stop_s']} s")
        print("  incarnation  ended by   acked(200)   on disk   lost   acked<=100ms before kill   cut streams "
              "(recorded)   restart s")
        for inc in r["incarnations"]:
            extra = ""
            if inc["ended_by"] == "kill -9":
                extra = (f"   {inc['acked_last_100ms_before_kill']:>24}   {inc['streams_cut_with_id']:>11} "
                         f"({inc['streams_cut_recorded']})   {inc['restart_s']:>9}")
            print(f"  {inc['incarnation']:>11}  {inc['ended_by']:<9} {inc['acknowledged']:>11} {inc['on_disk']:>9} "
                  f"{inc['lost']:>6}{extra}")
            gaps = inc.get("lost_ended_ms_before_kill")
            if gaps:
                print(f"               lost: {inc['lost_streaming']} streaming, "
                      f"{inc['lost'] - inc['lost_streaming']} non-streaming; complete {gaps[0]:.0f} .. "
                      f"{gaps[-1]:.0f} ms before the kill (median {percentile(gaps, 0.5):.0f} ms)")
        print(f"  every acknowledged 200 on disk: {r['acknowledged_on_disk']} of {r['acknowledged_total']}")


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="ghost-crash-load-"))
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; work dir {tmp}; "
          f"daemon flags: --router always-fast --log-level {args.log_level} {' '.join(args.daemon_arg)}")
    results = []
    for name in args.phases:
        results.append(await phase(name, args, tmp, args.kills if name == "crash" else 0))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=200, help="concurrent clients (connections)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load per phase")
    parser.add_argument("--requests", type=int, default=0, help="stop a phase after this many requests (0 = off)")
    parser.add_argument("--kills", type=int, default=2,
                        help="kill -9s during the crash phase, evenly spaced over --duration")
    parser.add_argument("--sessions", type=int, default=0, help="distinct session ids (0 = one per client)")
    parser.add_argument("--phases", nargs="+", choices=("load", "crash"), default=["load", "crash"])
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    parser.add_argument("--daemon-arg", action="append", default=[],
                        help="extra flag for the daemon, e.g. --daemon-arg=--trajectory-durability=fsync")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
