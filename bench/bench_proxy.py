"""Proxy overhead: the daemon in front of the scripted fake upstream vs the fake upstream called directly.

Both servers run as separate processes on loopback; one load generator alternates blocks between the two
targets so machine noise hits both sides alike. Prints p50/p99 latency (c=1), time to first content byte
(streaming, c=1), throughput at c=64 and the daemon's RSS growth over many requests.

    python bench/bench_proxy.py [--rounds 10] [--block 200] [--memory-requests 20000]

Targets (issue 2): added p50 <= 1.5 ms, p99 <= 5 ms; added TTFB <= 2 ms; c=64 throughput >= 0.5x direct;
RSS growth <= 20 MB after 20,000 requests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loadgen import percentile, run_load  # noqa: E402

from ghost_agent.llm.fake_server import free_port  # noqa: E402

BODY = b'{"model":"m","messages":[{"role":"user","content":"Say hello to the benchmark, briefly please."}]}'
STREAM_BODY = (
    b'{"model":"m","stream":true,"messages":[{"role":"user","content":"Say hello to the benchmark, briefly."}]}'
)
MARKER = b'"content":"S'  # the first chunk with real text (the echo starts with "Say")


def wait_up(url: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def process(cmd: list[str], health_url: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_up(health_url)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def alternate(direct: str, proxied: str, body: bytes, rounds: int, block: int, conc: int,
                    marker: bytes | None = None) -> dict[str, list]:
    out: dict[str, list] = {"direct": [], "proxied": [], "direct_rps": [], "proxied_rps": []}
    for _ in range(rounds):
        for name, url in (("direct", direct), ("proxied", proxied)):
            res = await run_load(url, body, requests=block, concurrency=conc, content_marker=marker)
            out[name].extend(res.samples)
            out[f"{name}_rps"].append(res.rps)
    return out


def summarize(samples: list, first_byte: bool = False) -> tuple[float, float]:
    values = sorted((s.first_byte_s if first_byte else s.total_s) * 1000 for s in samples)
    return percentile(values, 0.5), percentile(values, 0.99)


async def main_async(args: argparse.Namespace) -> None:
    fake_port, daemon_port = free_port(), free_port()
    fake = f"http://127.0.0.1:{fake_port}"
    daemon = f"http://127.0.0.1:{daemon_port}"
    home = tempfile.mkdtemp(prefix="ghost-bench-")
    py = sys.executable
    with process([py, "-m", "ghost_agent.llm.fake_server", "--port", str(fake_port)], f"{fake}/health"), \
         process([py, "-m", "ghost_agent", "serve", "--port", str(daemon_port), "--upstream-url", fake,
                  "--home", home, "--log-level", "warning", *args.daemon_arg], f"{daemon}/health") as dproc:
        direct_url, proxy_url = f"{fake}/v1/chat/completions", f"{daemon}/v1/chat/completions"
        # warm up both (connection pools, imports, JITs of the branch predictor...)
        await alternate(direct_url, proxy_url, BODY, 2, 200, 1)

        print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; rounds={args.rounds} "
              f"block={args.block}; daemon flags: {' '.join(args.daemon_arg) or '(defaults)'}")
        r = await alternate(direct_url, proxy_url, BODY, args.rounds, args.block, 1)
        d50, d99 = summarize(r["direct"])
        p50, p99 = summarize(r["proxied"])
        print(f"non-streaming c=1   direct p50 {d50:.3f} ms p99 {d99:.3f} ms | via daemon p50 {p50:.3f} ms "
              f"p99 {p99:.3f} ms | added p50 {p50 - d50:+.3f} ms (target <= 1.5) p99 {p99 - d99:+.3f} ms "
              f"(target <= 5)")

        r = await alternate(direct_url, proxy_url, STREAM_BODY, args.rounds, args.block, 1, MARKER)
        d50, _ = summarize(r["direct"], first_byte=True)
        p50, _ = summarize(r["proxied"], first_byte=True)
        print(f"streaming c=1       direct first-content p50 {d50:.3f} ms | via daemon {p50:.3f} ms | "
              f"added {p50 - d50:+.3f} ms (target <= 2)")

        r = await alternate(direct_url, proxy_url, BODY, max(3, args.rounds // 2), args.block * 5, 64)
        drps = sorted(r["direct_rps"])[len(r["direct_rps"]) // 2]
        prps = sorted(r["proxied_rps"])[len(r["proxied_rps"]) // 2]
        print(f"non-streaming c=64  direct {drps:.0f} req/s | via daemon {prps:.0f} req/s | ratio "
              f"{prps / drps:.2f} (target >= 0.5)")

        if args.memory_requests:
            before = rss_mb(dproc.pid)
            half = args.memory_requests // 2
            await run_load(proxy_url, BODY, requests=half, concurrency=16)
            await run_load(proxy_url, STREAM_BODY, requests=args.memory_requests - half, concurrency=16)
            after = rss_mb(dproc.pid)
            print(f"memory              daemon RSS {before:.1f} MB -> {after:.1f} MB after "
                  f"{args.memory_requests} requests: growth {after - before:+.1f} MB (target <= 20)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=200)
    parser.add_argument("--memory-requests", type=int, default=20000)
    parser.add_argument("--daemon-arg", action="append", default=[],
                        help="extra flag for the daemon, e.g. --daemon-arg=--no-record-trajectories")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
