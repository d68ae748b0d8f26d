"""How long a freshly started daemon takes to answer its first "hi".

Starts `python -m ghost_agent serve` as a subprocess on a free loopback port with a temporary GHOST_HOME,
polls `/health` until it says `ok`, then times, non-streaming and one after the other:

  first hi        `{"messages": [{"role": "user", "content": "hi"}]}`, the first request the daemon serves
  second hi       the same request again (same session)
  new session     a different short question in a new session (header `x-ghost-session-id`): does the
                  prompt-prefix reuse carry across sessions and texts?
  agent request   (`--agent-request TEXT`, optional) a request the router sends to the tool loop

For each it prints the wall time, the prompt tokens the model saw, and the route the router took (read from
the daemon's structured log in the temp home). The daemon is stopped (SIGTERM, then SIGKILL) at the end,
whatever happens. Loopback only: the daemon binds 127.0.0.1 and the client talks to nothing else.

    python bench/bench_first_reply.py                          # the defaults: 1.5B, router auto
    python bench/bench_first_reply.py --router always-fast --agent-request "what is 15% of 2340?"
    python bench/bench_first_reply.py --quiet-wait 600 -- --n-threads 1   # extra `serve` flags after --

Other jobs on the machine dominate these figures (a 2-thread llama.cpp on 2 vCPUs collapses when another
process holds a core), so every request line reports the cores other processes used meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

JSON = dict[str, Any]
HOST = "127.0.0.1"
_TICK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _log_events(home: Path) -> list[JSON]:
    path = home / "system" / "logs" / "ghost.jsonl"
    events: list[JSON] = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def _wait_ready(client: httpx.Client, process: subprocess.Popen[bytes], out: Path, timeout: float) -> JSON:
    """Poll /health every 50 ms until `ok`; raise with the daemon's output tail on exit, degraded or timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited with {process.returncode}:\n{_tail(out)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"daemon not ready after {timeout}s:\n{_tail(out)}")
        try:
            health: JSON = client.get("/health").json()
        except httpx.TransportError:
            health = {}
        if health.get("status") == "ok":
            return health
        if health.get("status") == "degraded":
            raise RuntimeError(f"daemon degraded: {health.get('degraded')} (details: GET /v1/ghost/health)")
        time.sleep(0.05)


def _chat(client: httpx.Client, pid: int, text: str, session: str | None = None) -> tuple[float, JSON]:
    headers = {"x-ghost-session-id": session} if session else {}
    body = {"messages": [{"role": "user", "content": text}]}
    machine0, daemon0 = _machine_cpu_s(), _process_cpu_s(pid)
    t0 = time.perf_counter()
    response = client.post("/v1/chat/completions", json=body, headers=headers)
    seconds = time.perf_counter() - t0
    # Other jobs on the machine slow llama.cpp badly: report how many cores they kept busy meanwhile.
    others = (_machine_cpu_s() - machine0) - (_process_cpu_s(pid) - daemon0)
    response.raise_for_status()
    reply: JSON = response.json()
    reply["_trajectory_id"] = response.headers.get("x-ghost-trajectory-id")
    reply["_other_cores"] = max(0.0, others / seconds) if seconds > 0 else 0.0
    return seconds, reply


def wait_until_quiet(max_wait: float, threshold: float = 0.25, window: float = 2.0) -> float:
    """Wait (at most `max_wait` s) until the machine's busy cores over `window` s drop below `threshold`;
    returns the busy cores last seen. llama.cpp's spinning threads collapse when another job holds a core."""
    deadline = time.monotonic() + max_wait
    while True:
        before = _machine_cpu_s()
        time.sleep(window)
        busy = (_machine_cpu_s() - before) / window
        if busy < threshold or time.monotonic() > deadline:
            return busy


def bench(args: argparse.Namespace) -> int:
    """Run the measurement once; returns the process exit code."""
    if args.quiet_wait > 0:
        busy = wait_until_quiet(args.quiet_wait)
        print(f"machine busy before the run: {busy:.2f} cores")
    with tempfile.TemporaryDirectory(prefix="ghost-first-reply-") as tmp:
        home = Path(tmp) / "home"
        out = Path(tmp) / "daemon.out"
        port = _free_port()
        cmd = [
            sys.executable, "-m", "ghost_agent", "serve",
            "--host", HOST, "--port", str(port), "--home", str(home),
            "--local-model", args.model, "--log-level", "info",
        ]  # fmt: skip
        if args.router:
            cmd += ["--router", args.router]
        if args.model_cache_dir:
            cmd += ["--model-cache-dir", str(args.model_cache_dir)]
        cmd += args.extra
        started = time.perf_counter()
        with open(out, "wb") as sink:
            process = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
        rows: list[tuple[str, float, JSON | None]] = []
        try:
            # trust_env=False: no proxy from the environment; the client talks to the loopback daemon only.
            with httpx.Client(
                base_url=f"http://{HOST}:{port}", timeout=args.request_timeout, trust_env=False
            ) as client:
                _wait_ready(client, process, out, args.start_timeout)
                ready_s = time.perf_counter() - started
                rss_mb = _rss_mb(process.pid)
                pid = process.pid
                rows.append(("first hi", *_chat(client, pid, "hi")))
                rows.append(("second hi", *_chat(client, pid, "hi")))
                rows.append(("new session", *_chat(client, pid, args.session_text, session="bench-second-session")))
                if args.agent_request:
                    rows.append(("agent request", *_chat(client, pid, args.agent_request, session="bench-agent")))
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        report(args, ready_s, rss_mb, rows, _log_events(home))
    return 0


def _machine_cpu_s() -> float:
    """CPU-seconds the whole machine has been busy (all cores, /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / _TICK


def _process_cpu_s(pid: int) -> float:
    """CPU-seconds one process (all its threads) has used; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _rss_mb(pid: int) -> float | None:
    """The daemon's resident memory: ~1.3 GB right at ready means the 1.5B's weights are in RAM, not paged
    in lazily by the first generation (the embedded backend reads them instead of mmapping the file)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def report(
    args: argparse.Namespace,
    ready_s: float,
    rss_mb: float | None,
    rows: list[tuple[str, float, JSON | None]],
    events: list[JSON],
) -> None:
    """Print the figures: time to ready, then one line per request."""
    routes = {e.get("trajectory_id"): e for e in events if e.get("event") == "router_decision"}
    by_event = {e.get("event"): e for e in events}
    print(f"model {args.model}, router {args.router or 'default'}")
    print(f"time to ready (spawn -> /health ok): {ready_s:6.2f} s; daemon RSS at ready: {rss_mb or 0:.0f} MB")
    for name in ("model_loaded", "backend_warmup"):
        if name in by_event:
            detail = {k: v for k, v in by_event[name].items() if k.endswith("_s") or k.endswith("_ms") or k == "tokens"}
            print(f"  {name}: {detail}")
    print(f"{'request':<14} {'seconds':>8} {'prompt tok':>10} {'cached':>7} {'out tok':>8} {'others':>6}  "
          "route (reason)")
    for name, seconds, reply in rows:
        usage = (reply or {}).get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", "-")
        decision = routes.get((reply or {}).get("_trajectory_id")) or {}
        route = f"{decision.get('route', '?')} ({decision.get('reason', '?')})"
        print(
            f"{name:<14} {seconds:8.2f} {usage.get('prompt_tokens', '?'):>10} {cached:>7} "
            f"{usage.get('completion_tokens', '?'):>8} {(reply or {}).get('_other_cores', 0):6.2f}  {route}"
        )
    print("cached: prompt tokens llama.cpp reused from its prompt cache (when the reply reports them); "
          "others: cores other processes kept busy meanwhile")


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through bench()'s `finally`, which stops the daemon


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="--local-model for the daemon")
    parser.add_argument("--router", choices=("auto", "always-agent", "always-fast"), default=None)
    parser.add_argument("--model-cache-dir", type=Path, default=None, help="default: the daemon's default")
    parser.add_argument("--session-text", default="What is the capital of France?",
                        help="the first message of the second session")
    parser.add_argument("--agent-request", default=None, help="also time this request (in a third session)")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="wait up to this many seconds for an idle machine before starting")
    parser.add_argument("--start-timeout", type=float, default=600.0)
    parser.add_argument("--request-timeout", type=float, default=600.0)
    parser.add_argument("extra", nargs="*", help="more `serve` arguments, after --")
    raise SystemExit(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
