"""HTTP limits (issue 20): what oversized headers and slow clients cost the daemon, with the limits and with
uvicorn's plain httptools protocol (the previous default) side by side in one run.

    python bench/bench_http_limits.py [--conns 20] [--header-mb 32] [--slow 100] [--trickle 20] [--window 35]

(a) RSS of a daemon process while `--conns` connections each send an unfinished `--header-mb` MB header (and
    hold the connection open); target: growth no more than the header limit x connections (plus one read each).
(b) `--slow` connections sending a header line every 5 s and `--trickle` connections sending a body one byte
    every 5 s: how many are still open after `--window` seconds (target: none, with the limits).
(c) The added cost of the checks per request: `data_received` of a typical 300-byte request on the limited
    protocol vs uvicorn's, in process (p50; target <= 0.05 ms added).

Each variant runs the real app (scripted backend, fast path) under uvicorn in a child process on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from ghost_agent.llm.fake_server import free_port

VARIANTS = ("uvicorn-httptools", "limits")


def serve(port: int, variant: str, home: str) -> None:
    """Child process: the daemon's app under uvicorn with the variant's HTTP protocol."""
    import uvicorn

    from ghost_agent.llm.scripted import ScriptedBackend
    from ghost_agent.server import build_app
    from ghost_agent.server.runner import http_protocol
    from ghost_agent.settings import Settings

    settings = Settings.from_keys(home=Path(home), router="always-fast", port=port).validate()
    app = build_app(settings, ScriptedBackend())
    http: Any = http_protocol(settings, app) if variant == "limits" else "httptools"
    uvicorn.run(app, host="127.0.0.1", port=port, http=http, log_level="error", lifespan="on")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start(variant: str, home: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), variant, home])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, port
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{variant} did not come up")


def hold_big_headers(port: int, conns: int, header_mb: int) -> list[socket.socket]:
    """Each connection sends an unfinished header of `header_mb` MB (or until the server stops reading)."""
    socks = []
    chunk = b"a" * 65536

    def one() -> None:
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
        socks.append(s)
        try:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
            for _ in range(header_mb * 16):
                s.sendall(chunk)
        except OSError:
            pass  # refused (reset) or the server stopped reading (timeout)

    threads = [threading.Thread(target=one) for _ in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return socks


def memory(variant: str, conns: int, header_mb: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        proc, port = start(variant, home)
        try:
            time.sleep(0.5)
            before = rss_mb(proc.pid)
            socks = hold_big_headers(port, conns, header_mb)
            time.sleep(1.0)
            after = rss_mb(proc.pid)
            for s in socks:
                s.close()
            return before, after
        finally:
            proc.kill()
            proc.wait()


def still_open(s: socket.socket) -> bool:
    """Still waiting on the server: no reply and no close (a reply, a reset or an EOF means it was refused)."""
    s.setblocking(False)
    try:
        s.recv(65536)  # a reply (408) or b"" (closed)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def slow_clients(variant: str, slow: int, trickle: int, window: float) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as home:
        proc, port = start(variant, home)
        try:
            heads, bodies = [], []
            for _ in range(slow):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
                heads.append(s)
            for _ in range(trickle):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
                          b"\r\nContent-Length: 100000\r\n\r\n")
                bodies.append(s)
            t0 = time.monotonic()
            i = 0
            while time.monotonic() - t0 < window:
                time.sleep(5)
                i += 1
                for s in heads:
                    try:
                        s.sendall(b"X-Line-%d: 1\r\n" % i)
                    except OSError:
                        pass
                for s in bodies:
                    try:
                        s.sendall(b" ")
                    except OSError:
                        pass
            open_heads = sum(still_open(s) for s in heads)
            open_bodies = sum(still_open(s) for s in bodies)
            for s in heads + bodies:
                s.close()
            return open_heads, open_bodies
        finally:
            proc.kill()
            proc.wait()


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: Any) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def check_cost(n: int) -> dict[str, float]:
    """p50 of data_received for one keep-alive request, limited vs uvicorn's protocol, in µs."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.server import ServerState

    from ghost_agent.server.http_limits import HttpLimits, limited_protocol

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost:8000\r\nUser-Agent: OpenAI/Python 1.50\r\n"
               b"Accept: application/json\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-test-xyz\r\n"
               b"Content-Length: 40\r\n\r\n" + b'{"messages":[{"role":"user","content":1}]}'[:40])
    out: dict[str, float] = {}

    async def run() -> None:
        config = uvicorn.Config(app, log_level="error")
        config.load()
        classes = {"uvicorn-httptools": HttpToolsProtocol, "limits": limited_protocol(HttpLimits())}
        samples: dict[str, list[float]] = {k: [] for k in classes}
        protos = {}
        for name, cls in classes.items():
            proto = cls(config=config, server_state=ServerState(), app_state={})  # type: ignore[call-arg]
            proto.connection_made(_Transport())
            protos[name] = proto
        for _ in range(n):  # interleaved, so machine noise hits both alike
            for name, proto in protos.items():
                t0 = time.perf_counter()
                proto.data_received(request)
                samples[name].append(time.perf_counter() - t0)
                await asyncio.sleep(0)  # the app's task answers; the connection is ready for the next one
                await asyncio.sleep(0)
        for name, xs in samples.items():
            out[name] = statistics.median(xs) * 1e6

    asyncio.run(run())
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conns", type=int, default=20)
    parser.add_argument("--header-mb", type=int, default=32)
    parser.add_argument("--slow", type=int, default=100)
    parser.add_argument("--trickle", type=int, default=20)
    parser.add_argument("--window", type=float, default=35.0)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--skip-slow", action="store_true", help="skip (b), which takes about 2 x window")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cpus; numbers are noisy, compare within a line")

    print(f"\n(a) RSS with {args.conns} connections each sending an unfinished {args.header_mb} MB header")
    for variant in VARIANTS:
        before, after = memory(variant, args.conns, args.header_mb)
        print(f"  {variant:18s} {before:7.1f} MB -> {after:7.1f} MB  (+{after - before:.1f} MB)")
    print(f"  limit x connections = {32 * args.conns / 1024:.2f} MB (plus one 256 KiB read each)")

    if not args.skip_slow:
        print(f"\n(b) {args.slow} slow-header and {args.trickle} trickled-body connections, still open after "
              f"{args.window:g} s")
        for variant in VARIANTS:
            heads, bodies = slow_clients(variant, args.slow, args.trickle, args.window)
            print(f"  {variant:18s} slow headers open {heads:3d}/{args.slow}   trickled bodies open "
                  f"{bodies:3d}/{args.trickle}")

    print(f"\n(c) data_received per request, p50 over {args.requests} (in process)")
    cost = check_cost(args.requests)
    for variant in VARIANTS:
        print(f"  {variant:18s} {cost[variant]:6.2f} µs")
    print(f"  added by the checks: {cost['limits'] - cost['uvicorn-httptools']:+.2f} µs")


if __name__ == "__main__":
    main()
