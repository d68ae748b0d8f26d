"""The status page's cost: page weight, time to first render on a big home, and what it adds to chat latency.

    python bench/bench_status_page.py [--trajectories 10000] [--lessons 500] [--chats 300]

1. **Page weight**: bytes over the wire for a cold load of `/ui#now` (the page, its script and stylesheet, the
   Now section's JSON), as the browser's resource timing counts them (target <= 300 KB).
2. **Time to first render** of the Now section in headless chromium, on a home seeded with `--trajectories`
   turns and `--lessons` lessons through the real stores (target <= 1 s): from navigation start to the section
   in the DOM, cold (first load after the daemon started) and warm. The Turns section's first render on the same
   home is printed beside it.
3. **Added chat latency**: p50 / p95 of `--chats` non-streamed chat requests against the scripted backend over
   loopback, alone and then while a poller reads the page's endpoints (now, turns, lessons, runs) every 250 ms
   as an open page does (target: added p50 <= 1 ms). Both runs in one process, alternating blocks of 20 so
   machine noise hits both sides.

Loopback only; nothing is downloaded. Needs chromium and chromedriver (`make browser`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import daemon_on_port, make_settings  # noqa: E402
from tests.server.console_home import turn  # noqa: E402

from ghost_agent.home import GhostHome  # noqa: E402
from ghost_agent.llm.scripted import ScriptedBackend  # noqa: E402
from ghost_agent.memory.store import SkillMemory  # noqa: E402
from ghost_agent.trajectories.collector import TrajectoryCollector  # noqa: E402

ENDPOINTS = ("/v1/ghost/now", "/v1/ghost/turns?limit=50", "/v1/ghost/lessons?limit=100", "/v1/ghost/watchdog/runs")


def seed_big(settings: Any, trajectories: int, lessons: int) -> None:
    home = GhostHome(settings.home).ensure()
    t0 = time.perf_counter()
    with TrajectoryCollector(home.trajectories) as collector:
        for i in range(trajectories):
            collector.append(turn(i, tools=i % 7 == 0))
    with SkillMemory(home.lessons_db) as memory:
        for i in range(lessons):
            memory.learn_lesson(f"requests like: topic {i} alpha{i} beta{i * 7}", "",
                                f"lesson {i}: prefer method m{i} for gamma{i}", session_id=f"client-{i % 5}")
    print(f"seeded {trajectories} trajectories and {lessons} lessons in {time.perf_counter() - t0:.1f} s")


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-proxy-server"):
        options.add_argument(arg)
    options.binary_location = str(shutil.which("chromium"))
    return webdriver.Chrome(service=Service(str(shutil.which("chromedriver"))), options=options)


def first_render(driver: Any, url: str, section: str) -> tuple[float, int]:
    """(ms from navigation start to the section in the DOM, bytes transferred for the load)."""
    driver.get("about:blank")
    driver.get(f"{url}/ui#{section}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done = driver.execute_script("return window.__ghostFirstRender")
        if done is not None:
            size = driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                "return (n ? n.transferSize : 0) + performance.getEntriesByType('resource')"
                ".reduce((a, r) => a + r.transferSize, 0)")
            return float(done), int(size)
        time.sleep(0.01)
    raise RuntimeError(f"{section} never rendered")


def chat_latencies(url: str, n: int, poll: bool) -> list[float]:
    stop = threading.Event()

    def poller() -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            while not stop.is_set():
                for path in ENDPOINTS:
                    client.get(path)
                stop.wait(0.25)

    thread = threading.Thread(target=poller, daemon=True) if poll else None
    if thread:
        thread.start()
    out = []
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(n):
            t0 = time.perf_counter()
            client.post("/v1/chat/completions", json=body).raise_for_status()
            out.append((time.perf_counter() - t0) * 1000.0)
    stop.set()
    if thread:
        thread.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--lessons", type=int, default=500)
    parser.add_argument("--chats", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = make_settings(Path(tmp), watchdog=False)
        seed_big(settings, args.trajectories, args.lessons)
        with daemon_on_port(settings, ScriptedBackend(model="m", default="echo")) as url:
            url = url.rstrip("/")
            driver = browser()
            try:
                cold, weight = first_render(driver, url, "now")
                warm, _ = first_render(driver, url, "now")
                turns_cold, _ = first_render(driver, url, "turns")
                turns_warm, _ = first_render(driver, url, "turns")
            finally:
                driver.quit()
            alone: list[float] = []
            polled: list[float] = []
            for _ in range(max(1, args.chats // 20)):
                alone += chat_latencies(url, 20, poll=False)
                polled += chat_latencies(url, 20, poll=True)
    print(f"page weight, cold load of /ui#now: {weight / 1024:.1f} KB (target <= 300 KB)")
    print(f"first render of Now with {args.trajectories} trajectories, {args.lessons} lessons: cold {cold:.0f} ms, "
          f"warm {warm:.0f} ms (target <= 1000 ms)")
    print(f"first render of Turns (newest 50): cold {turns_cold:.0f} ms, warm {turns_warm:.0f} ms")

    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1]

    print(f"chat latency over loopback, {len(alone)} requests each side, alternating blocks of 20:")
    print(f"  alone:               p50 {statistics.median(alone):.2f} ms  p95 {p(alone, 95):.2f} ms")
    print(f"  page polling 250 ms: p50 {statistics.median(polled):.2f} ms  p95 {p(polled, 95):.2f} ms")
    print(f"  added p50: {statistics.median(polled) - statistics.median(alone):+.2f} ms (target <= 1 ms)")


if __name__ == "__main__":
    main()
