"""Sandbox overhead and throughput.

    python bench/bench_sandbox.py [--runs 30] [--throughput 200] [--concurrency 2] [--sandbox auto]

Targets (issue 5): sandboxed `python -c pass` <= 3x bare and <= 60 ms median on this machine (both measured in
the same run, interleaved, so machine noise hits both alike); 200 short executions at concurrency 2 complete
with 0 failures (executions/s reported). The fallback backend is measured too when bubblewrap is the default,
so the price of isolation is visible.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import time

import structlog

from ghost_agent.sandbox import ExecLimits, SandboxBackend, get_sandbox
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox
from ghost_agent.settings import Settings


def bare_ms() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - t0) * 1000


def sandboxed_ms(backend: SandboxBackend, limits: ExecLimits) -> float:
    t0 = time.perf_counter()
    result = backend.run_sync("python", "pass", limits=limits)
    if not result.ok:
        raise SystemExit(f"sandboxed run failed: {result.to_dict()}")
    return (time.perf_counter() - t0) * 1000


async def throughput(backend: SandboxBackend, n: int, concurrency: int, limits: ExecLimits) -> tuple[float, int]:
    backend.concurrency = concurrency
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(backend.run("python", f"print({i} * {i})", limits=limits) for i in range(n))
    )
    elapsed = time.perf_counter() - t0
    failures = sum(1 for i, r in enumerate(results) if not r.ok or r.stdout.strip() != str(i * i))
    return n / elapsed, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--throughput", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "subprocess"))
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # figures only

    backend = get_sandbox(Settings.from_keys(sandbox=args.sandbox))
    limits = ExecLimits(timeout_s=20)
    backends: list[tuple[str, SandboxBackend]] = [(backend.name, backend)]
    if backend.name != "subprocess":
        backends.append(("subprocess (unisolated fallback)", RestrictedSubprocessSandbox()))

    timings: dict[str, list[float]] = {"bare": []}
    for label, _ in backends:
        timings[label] = []
    bare_ms(), [sandboxed_ms(b, limits) for _, b in backends]  # warm caches
    for _ in range(args.runs):  # interleaved: noise hits every variant alike
        timings["bare"].append(bare_ms())
        for label, b in backends:
            timings[label].append(sandboxed_ms(b, limits))

    print(f"# sandbox benchmark ({args.runs} interleaved runs each; medians; noisy shared machine)")
    bare = statistics.median(timings["bare"])
    print(f"bare `python -c pass`                : {bare:6.1f} ms")
    for label, _ in backends:
        med = statistics.median(timings[label])
        target = "   (target <= 3x bare and <= 60 ms)" if label == backend.name else ""
        print(f"{label:37s}: {med:6.1f} ms  = {med / bare:4.2f}x bare{target}")
    rate, failures = asyncio.run(throughput(backend, args.throughput, args.concurrency, limits))
    print(f"throughput, {args.throughput} x `print(i*i)` at concurrency {args.concurrency} ({backend.name}): "
          f"{rate:5.1f} executions/s, {failures} failures   (target 0 failures)")
    print(f"isolation: {backend.isolation.to_dict()}")


if __name__ == "__main__":
    main()
