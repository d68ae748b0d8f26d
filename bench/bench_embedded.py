"""Generation speed of the embedded model: xllamacpp called directly vs through our layers.

Paths, measured in alternating rounds with the same prompt and settings:
  direct   `xllamacpp.Server.handle_chat_completions` with a callback, on a plain thread, on the model this
           bench process loaded (through `EmbeddedBackend`, so the engine parameters are the daemon's)
  backend  `EmbeddedBackend.stream` on that same model (worker thread -> loop -> async iterator)
  http     the real daemon, `python -m ghost_agent serve`, started as a separate process with its own copy
           of the model; this process is the client (httpx, SSE over 127.0.0.1)

Each run generates exactly `--max-tokens` tokens (temperature 0, `ignore_eos`). Reported per path: best and
median generation tok/s (tokens after the first / time from first to last token, i.e. decode speed as the
caller sees it), median end-to-end tok/s (tokens / time from request to last token), and the ratio to
`direct`: best over best, and the median of the per-round ratios (runs made side by side).

Two models are loaded, one per process, and only one generates at a time. llama.cpp's threads spin for a
while after a computation, so the bench also reports the CPU time the *idle* process used while the other
one was generating (read from /proc); it should be about zero, or the two paths would slow each other down.

The machine is shared and any other job slows llama.cpp's spinning threads badly, so each round reports the
CPU the rest of the machine used meanwhile; `--quiet-wait` waits for a quiet machine before each round and
`--max-rounds` keeps going until `--rounds` quiet rounds were made (the report adds a quiet-rounds table).

    python bench/bench_embedded.py --model qwen2.5-coder-1.5b --rounds 8 --max-rounds 30 --quiet-wait 300
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.llm.embedded.backend import EmbeddedBackend

JSON = dict[str, Any]
PROMPT = (
    "Write a Python module implementing a binary search tree with insert, delete, search and in-order "
    "traversal. Include docstrings."
)
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    """Timestamps (perf_counter seconds) of one generation, and CPU seconds each process used meanwhile."""

    sent: float
    token_times: list[float]
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return len(self.token_times)

    @property
    def gen_tps(self) -> float:
        span = self.token_times[-1] - self.token_times[0]
        return (self.tokens - 1) / span if span > 0 else float("nan")

    @property
    def e2e_tps(self) -> float:
        return self.tokens / (self.token_times[-1] - self.sent)

    @property
    def seconds(self) -> float:
        return self.token_times[-1] - self.sent


def request_body(max_tokens: int) -> JSON:
    return {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": True,  # llama.cpp extension: always generate exactly max_tokens
    }


def _is_token(chunk: JSON) -> bool:
    choices = chunk.get("choices") or []
    return bool(choices and (choices[0].get("delta") or {}).get("content"))


# -- CPU accounting ----------------------------------------------------------------------------------------


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) used so far by each thread of `pid`, from /proc (1/CLK_TCK resolution)."""
    out: dict[int, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except FileNotFoundError:  # the thread ended
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine so far, summed over CPUs, from /proc/stat."""
    with open("/proc/stat", "rb") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]  # guest time is inside user
    return (user + nice + system + irq + softirq) / _TICK, steal / _TICK


def cpu_delta(before: dict[int, float], after: dict[int, float], exclude: frozenset[int] = frozenset()) -> float:
    return sum(t - before.get(tid, 0.0) for tid, t in after.items() if tid not in exclude)


# -- the paths ---------------------------------------------------------------------------------------------


async def run_direct(backend: EmbeddedBackend, body: JSON) -> Run:
    """The baseline: the same llama.cpp server object, called the way its README shows."""
    server = backend._server  # the bench's one deliberate reach inside: the model this process loaded
    times: list[float] = []

    def on_chunk(chunk: JSON) -> bool:
        if _is_token(chunk):
            times.append(time.perf_counter())
        return False

    sent = time.perf_counter()
    await asyncio.to_thread(server.handle_chat_completions, {**body, "stream": True}, on_chunk)
    return Run(sent, times)


async def run_backend(backend: EmbeddedBackend, body: JSON) -> Run:
    times: list[float] = []
    sent = time.perf_counter()
    async for chunk in backend.stream(dict(body)):
        if _is_token(chunk):
            times.append(time.perf_counter())
    return Run(sent, times)


async def run_http(client: Any, base_url: str, body: JSON) -> Run:
    times: list[float] = []
    sent = time.perf_counter()
    async with client.stream("POST", f"{base_url}/v1/chat/completions", json={**body, "stream": True}) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            if _is_token(json.loads(line[6:])):
                times.append(time.perf_counter())
    return Run(sent, times)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Daemon:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path


@asynccontextmanager
async def daemon_process(args: argparse.Namespace, n_threads: int) -> AsyncIterator[Daemon]:
    """`python -m ghost_agent serve` in its own process, as it runs for real, with the bench's engine settings.

    Yields once `/health` says `ok` (model loaded); stops it with SIGTERM on exit.
    """
    import httpx

    with tempfile.TemporaryDirectory(prefix="ghost-bench-") as home:
        port = _free_port()
        log_path = Path(home) / "daemon.out"
        cmd = [
            sys.executable, "-m", "ghost_agent", "serve",
            "--port", str(port),
            "--local-model", args.model,
            "--model-cache-dir", str(args.cache_dir),
            "--n-ctx", str(args.n_ctx),
            "--n-threads", str(n_threads),
            "--home", str(Path(home) / "home"),
            "--log-level", "warning",
        ]  # fmt: skip
        with open(log_path, "wb") as out:
            process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        base_url = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                deadline = time.monotonic() + args.start_timeout
                while True:
                    if process.poll() is not None:
                        raise RuntimeError(f"daemon exited with {process.returncode}:\n{_tail(log_path)}")
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"daemon not ready after {args.start_timeout}s:\n{_tail(log_path)}")
                    try:
                        health = (await client.get(f"{base_url}/health")).json()
                    except httpx.TransportError:
                        health = {}
                    if health.get("status") == "ok":
                        break
                    if health.get("status") == "degraded":
                        raise RuntimeError(f"daemon degraded: {health.get('degraded')} (details: GET /v1/ghost/health)")
                    await asyncio.sleep(0.25)
            yield Daemon(process, base_url, log_path)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    await asyncio.to_thread(process.wait, 30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# -- the bench ---------------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace) -> None:
    import httpx

    wanted = args.paths.split(",")
    unknown = set(wanted) - {"direct", "backend", "http"}
    if unknown or "direct" not in wanted:
        raise SystemExit(f"--paths: a comma list of direct,backend,http that includes direct (got {args.paths})")
    backend = EmbeddedBackend(args.model, cache_dir=args.cache_dir, n_ctx=args.n_ctx, n_threads=args.threads)
    body = request_body(args.max_tokens)

    t0 = time.perf_counter()
    loading = asyncio.create_task(backend.start())  # loads while the daemon loads its own copy
    try:
        async with (
            daemon_process(args, backend.n_threads) if "http" in wanted else _nothing() as daemon,
            httpx.AsyncClient(timeout=600) as client,
        ):
            await loading
            print(
                f"models loaded in {time.perf_counter() - t0:.1f}s: {backend.served_name} ({backend.model_file}), "
                f"n_ctx={backend.n_ctx} threads={backend.n_threads}"
            )
            results = await _rounds(args, backend, body, daemon, client)
    finally:
        await asyncio.gather(loading, return_exceptions=True)
        await backend.aclose()
    report(args, backend, results)
    cpu_report(results)


async def _rounds(
    args: argparse.Namespace, backend: EmbeddedBackend, body: JSON, daemon: Daemon | None, client: Any
) -> dict[str, list[Run]]:
    """Warm each path up, then run the rounds, alternating the paths; returns each path's runs in round order."""
    me = os.getpid()
    loop_tid = threading.get_native_id()  # this thread runs the event loop, hence the http client
    paths: dict[str, Callable[[], Awaitable[Run]]] = {"direct": lambda: run_direct(backend, body)}
    if "backend" in args.paths.split(","):
        paths["backend"] = lambda: run_backend(backend, body)
    if daemon is not None:
        print(f"daemon pid {daemon.process.pid} ready at {daemon.base_url}")
        paths["http"] = lambda: run_http(client, daemon.base_url, body)

    async def measure(name: str) -> Run:
        busy0, steal0 = machine_cpu()
        mine0 = thread_cpu(me)
        theirs0 = thread_cpu(daemon.process.pid) if daemon else {}
        run = await paths[name]()
        mine1 = thread_cpu(me)
        theirs1 = thread_cpu(daemon.process.pid) if daemon else {}
        busy1, steal1 = machine_cpu()
        run.cpu["bench"] = cpu_delta(mine0, mine1)
        run.cpu["bench-model"] = cpu_delta(mine0, mine1, exclude=frozenset({loop_tid}))  # all but the http client
        if daemon:
            run.cpu["daemon"] = cpu_delta(theirs0, theirs1)
            run.cpu["daemon-loop"] = theirs1.get(daemon.process.pid, 0.0) - theirs0.get(daemon.process.pid, 0.0)
        # Everything else on the machine (other jobs, the kernel's own threads) and the hypervisor's steal.
        run.cpu["others"] = max(0.0, busy1 - busy0 - run.cpu["bench"] - run.cpu.get("daemon", 0.0))
        run.cpu["steal"] = steal1 - steal0
        return run

    names = list(paths)
    results: dict[str, list[Run]] = {name: [] for name in names}
    for name in names:  # warm-up: fills each prompt cache, pages the weights in
        await paths[name]()
    quiet = 0
    for r in range(args.max_rounds or args.rounds):
        if (quiet if args.max_rounds else r) >= args.rounds:
            break
        await wait_until_quiet(args)
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate to cancel order effects
        for name in order:
            run = await measure(name)
            if run.tokens != args.max_tokens:
                print(f"  warning: {name} produced {run.tokens} tokens")
            results[name].append(run)
        line = "  ".join(f"{n}={results[n][-1].gen_tps:6.2f}" for n in names)
        noise = max(_noise(results[n][-1]) for n in names)
        quiet += noise < args.quiet
        print(f"round {r + 1}: gen tok/s  {line}   other load {noise:4.2f} CPU", flush=True)
    return results


async def wait_until_quiet(args: argparse.Namespace) -> None:
    """Before a round, wait (up to --quiet-wait s) for other load to drop below --quiet CPUs for 2 s in a row.

    Both of our processes are idle here, so all busy CPU time is someone else's (or the hypervisor's).
    """
    deadline = time.monotonic() + args.quiet_wait
    calm = 0
    waited = False
    while calm < 4 and time.monotonic() < deadline:
        busy0, steal0 = machine_cpu()
        await asyncio.sleep(0.5)
        busy1, steal1 = machine_cpu()
        load = (busy1 - busy0 + steal1 - steal0) / 0.5
        calm = calm + 1 if load < args.quiet else 0
        waited = waited or calm == 0
    if waited:
        state = "quiet" if calm >= 4 else f"still busy after {args.quiet_wait:.0f}s"
        print(f"  (waited for other load to settle: {state})", flush=True)


def _noise(run: Run) -> float:
    """CPUs' worth of other work (other processes plus hypervisor steal) during a run."""
    return (run.cpu["others"] + run.cpu["steal"]) / run.seconds


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield None


def report(args: argparse.Namespace, backend: EmbeddedBackend, results: dict[str, list[Run]]) -> None:
    rounds = len(results["direct"])
    print(f"\n{rounds} rounds x {args.max_tokens} tokens, prompt cached, model {backend.served_name}:")
    table(results)
    quiet = [r for r in range(rounds) if all(_noise(runs[r]) < args.quiet for runs in results.values())]
    if 0 < len(quiet) < rounds:
        print(f"\nthe {len(quiet)} quiet rounds only (other load < {args.quiet} CPU during every run of the round):")
        table({name: [runs[r] for r in quiet] for name, runs in results.items()})


def table(results: dict[str, list[Run]]) -> None:
    # The machine is shared: contention only ever slows a run down, so the best run of each path is the
    # cleanest estimate of its speed; the median of per-round ratios compares runs made side by side.
    names = list(results)
    best_direct = max(r.gen_tps for r in results["direct"])
    print(f"{'path':8} {'best gen':>9} {'median gen':>11} {'median e2e':>11} {'best ratio':>11} {'paired ratio':>13}")
    for name in names:
        runs = results[name]
        paired = statistics.median(
            run.gen_tps / direct.gen_tps for run, direct in zip(runs, results["direct"], strict=True)
        )
        print(
            f"{name:8} {max(r.gen_tps for r in runs):9.2f} {statistics.median(r.gen_tps for r in runs):11.2f} "
            f"{statistics.median(r.e2e_tps for r in runs):11.2f} "
            f"{max(r.gen_tps for r in runs) / best_direct:11.3f} {paired:13.3f}"
        )


def cpu_report(results: dict[str, list[Run]]) -> None:
    """Where the CPU went during each path's runs, from /proc (1/CLK_TCK resolution per thread)."""
    labels = {
        "bench": "bench process",
        "bench-model": "  its model + worker threads",
        "daemon": "daemon process",
        "daemon-loop": "  its event loop thread",
        "others": "everything else",
        "steal": "hypervisor steal",
    }
    names = list(results)
    print("\nCPU during the runs, in ms per generated token (CPU-seconds per second of run in brackets):")
    print(f"{'':30}" + "".join(f"{name:>18}" for name in names))
    for key, label in labels.items():
        cells = []
        for name in names:
            runs = results[name]
            if key not in runs[0].cpu:
                cells.append(f"{'-':>18}")
                continue
            used = sum(r.cpu[key] for r in runs)
            per_token = used / sum(r.tokens for r in runs) * 1000
            cells.append(f"{per_token:8.2f} ({used / sum(r.seconds for r in runs):4.2f}/s)")
        print(f"{label:30}" + "".join(cells))
    if "http" in results:
        idle_daemon = sum(r.cpu["daemon"] for n in names if n != "http" for r in results[n])
        idle_bench = sum(r.cpu["bench-model"] for r in results["http"])
        idle_s = sum(r.seconds for n in names if n != "http" for r in results[n])
        print(
            f"idle model check: the daemon used {idle_daemon:.2f} CPU-s in {idle_s:.0f}s of in-process runs; the "
            f"bench's model threads used {idle_bench:.2f} CPU-s in {sum(r.seconds for r in results['http']):.0f}s "
            "of http runs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "ghost-agent" / "models")
    parser.add_argument("--n-ctx", type=int, default=8192, help="both processes (default: the daemon's default)")
    parser.add_argument("--threads", type=int, default=None, help="both processes (default: all usable CPUs)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=0,
        help="keep going until --rounds quiet rounds (other load < --quiet) were made, at most this many rounds",
    )
    parser.add_argument("--paths", default="direct,backend,http", help="comma list; direct is always needed")
    parser.add_argument(
        "--quiet", type=float, default=0.1, help="also report rounds where other load stayed below this many CPUs"
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=0.0, help="before each round, wait up to this long for a quiet machine"
    )
    parser.add_argument("--start-timeout", type=float, default=300.0, help="seconds to wait for the daemon")
    args = parser.parse_args()
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
