"""Compressed-time demo of the learning loop (issue 13): a turn, its correction, idle time, and the log showing
reflection -> lesson -> the idle phases (retrain) -> the next similar turn shown the lesson.

    python -m scripts.demo_learning                        # the embedded model (default), idle time x0.05
    python -m scripts.demo_learning --upstream-url http://127.0.0.1:8080 --idle-time-scale 0.01

It starts its own daemon (`ghost-agent serve`) on a free loopback port with a fresh home (or `--home`) and
`--idle-time-scale`, follows the daemon's JSON log with `ghost-agent logs --follow` (lines marked `log |`),
and talks to it like a client, in one session:

1. a request of one correction-transfer family (`--family`, default `money`), answered the model's way;
2. the user's correction ("No, wrong format. ...") -> the daemon marks turn 1 FAILED and reflects on it;
3. waits for the lesson in the store, then stays idle until the watchdog's `retrain` phase has run (every
   window is compressed by the scale: at 0.05 the retrain window opens after 45 s idle);
4. a new request of the same family -> its trajectory's `lessons_shown` holds the lesson.

Exit 0 when the lesson was stored and shown to turn 3 (whether the model then follows it is the model's
business, printed but not judged), 1 otherwise, 2 when the daemon cannot be started. The daemon and the log
follower are this script's children and are stopped at the end (SIGTERM, then SIGKILL after 30 s); the home
is kept for a look afterwards (`ghost-agent trajectories ls --home ...`, `ghost-agent lessons ls --home ...`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ghost_agent.eval.conventions import get_check
from ghost_agent.eval.suites.transfer import Family, families, family_ids
from ghost_agent.eval.transfer_client import HomeStore, TransferClient
from ghost_agent.llm.fake_server import free_port

LOG_EVENTS = ("watchdog_started", "user_correction_promoted", "post_turn_reflection", "reflection", "lesson_learned",
              "lessons_retracted", "phase", "lessons_shown", "preferences_applied")
SESSION = "demo-learning"


def say(out: IO[str], text: str = "") -> None:
    out.write(text + "\n")
    out.flush()


class Children:
    """The daemon and the log follower: started here, stopped here (by their own process ids)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.threads: list[threading.Thread] = []

    def start(self, argv: list[str], *, out: IO[str] | None = None, log_path: Path | None = None,
              quiet_gating: bool = True) -> Any:
        if out is not None:  # stream its lines to `out`, marked as the log
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            thread = threading.Thread(target=self._pump, args=(proc, out, quiet_gating), daemon=True)
            thread.start()
            self.threads.append(thread)
        else:
            assert log_path is not None
            with log_path.open("ab") as sink:
                proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    @staticmethod
    def _pump(proc: subprocess.Popen[bytes], out: IO[str], quiet_gating: bool) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip()
            # "phase action=skip ... kind=idle_below_window": the watchdog saying why a phase waits, at every
            # change; the story is in the runs (start/end), so these are left out unless asked for
            if quiet_gating and " action=skip " in line and " kind=" in line:
                continue
            say(out, "  log | " + line)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for thread in self.threads:
            thread.join(timeout=5)
        for proc in self.procs:
            if proc.stdout is not None:
                proc.stdout.close()


async def wait_healthy(client: TransferClient, timeout_s: float, daemon: Any) -> None:
    """Until `/health` answers and no longer says `starting` (the embedded model loads first)."""
    import httpx

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=client.base_url, trust_env=False, timeout=5) as http:
        while True:
            if daemon.poll() is not None:
                raise RuntimeError(f"the daemon exited with code {daemon.returncode} (see its output file)")
            try:
                response = await http.get("/health")
                if response.status_code == 200 and response.json().get("status") != "starting":
                    return
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the daemon did not become healthy within {timeout_s:g}s")
            await asyncio.sleep(0.25)


def _phase(doc: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    phases = (doc or {}).get("phases")
    return next((p for p in phases if isinstance(p, dict) and p.get("name") == name), None) if isinstance(
        phases, list) else None


async def demo(args: argparse.Namespace, family: Family, home: Path, out: IO[str]) -> int:
    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}"
    ghost = [sys.executable, "-m", "ghost_agent"]
    serve = [*ghost, "serve", "--home", str(home), "--host", "127.0.0.1", "--port", str(port),
             "--idle-time-scale", str(args.idle_time_scale)]
    if args.upstream_url:
        serve += ["--upstream-url", args.upstream_url]
    children = Children()
    client = TransferClient(url, api_key=os.environ.get("GHOST_API_KEY") or None, timeout_s=args.timeout)
    store = HomeStore(home)
    try:
        say(out, f"== starting the daemon: {' '.join(serve[2:])}")
        say(out, f"   home {home} (daemon output: {home / 'demo-daemon.out'})")
        daemon = children.start(serve, log_path=home / "demo-daemon.out")
        try:
            await wait_healthy(client, args.startup_timeout, daemon)
        except RuntimeError as exc:
            say(out, f"!! {exc}")
            return 2
        follow = [*ghost, "logs", "--home", str(home), "--follow", *[a for e in LOG_EVENTS for a in ("--event", e)]]
        children.start(follow, out=out, quiet_gating=not args.all_phase_events)
        check = get_check(family.check)

        say(out, f"\n== 1. a turn ({family.id}: the user wants {family.convention}, but has not said so)")
        say(out, f"   user : {family.teach.prompt}")
        first = await client.chat(SESSION, [{"role": "user", "content": family.teach.prompt}])
        if first.error:
            say(out, f"!! turn 1 failed: {first.error}")
            return 1
        say(out, f"   ghost: {first.text.strip()[:400]}")
        say(out, f"   (follows the convention: {'yes' if check(first.text, family.teach.expected).passed else 'no'})")
        for _ in range(100):  # a user reads the reply before correcting it; the daemon records the turn meanwhile
            if await asyncio.to_thread(store.has_trajectory, first.trajectory_id or ""):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)

        say(out, "\n== 2. the correction")
        say(out, f"   user : {family.correction}")
        before = _phase(await client.status(), "retrain")
        retrain_runs = int((before or {}).get("runs") or 0)
        t_correction = time.monotonic()
        second = await client.chat(SESSION, [{"role": "user", "content": family.teach.prompt},
                                             {"role": "assistant", "content": first.text},
                                             {"role": "user", "content": family.correction}])
        say(out, f"   ghost: {(second.text or second.error or '').strip()[:400]}")

        say(out, "\n== 3. idle: reflection -> lesson")
        lesson = None
        while time.monotonic() - t_correction < args.lesson_timeout:
            lesson = await asyncio.to_thread(store.lesson_from, first.trajectory_id or "")
            if lesson is not None:
                break
            await asyncio.sleep(0.5)
        if lesson is None:
            say(out, f"!! no lesson within {args.lesson_timeout:g}s (see the reflection events above)")
        else:
            say(out, f"   lesson {lesson[0][:12]} stored {time.monotonic() - t_correction:.1f}s after the correction:")
            say(out, f"   {lesson[1][:300]}")

        say(out, "\n== 4. idle: the watchdog's phases (retrain)")
        retrained = None
        if before is None:
            say(out, "   (the daemon reports no retrain phase)")
        else:
            window = (before.get("window") or {}).get("min_idle_s")
            say(out, f"   retrain window opens after {window}s idle; waiting up to {args.retrain_timeout:g}s")
            deadline = time.monotonic() + args.retrain_timeout
            while time.monotonic() < deadline:
                phase = _phase(await client.status(), "retrain")
                if phase is not None and int(phase.get("runs") or 0) > retrain_runs and not phase.get("running"):
                    retrained = phase.get("last_result") or {}
                    break
                await asyncio.sleep(0.5)
            if retrained is None:
                say(out, "!! the retrain phase did not run in time")
            else:
                say(out, f"   retrain ran: {retrained.get('status')} {retrained.get('detail') or ''} "
                         f"{retrained.get('data') or ''}".rstrip())

        probe = family.probes[0]
        say(out, "\n== 5. the next similar turn")
        say(out, f"   user : {probe.prompt}")
        third = await client.chat(SESSION, [{"role": "user", "content": probe.prompt}])
        say(out, f"   ghost: {(third.text or third.error or '').strip()[:400]}")
        shown: list[str] | None = None
        for _ in range(50):  # the turn is recorded just after its reply
            shown = await asyncio.to_thread(store.shown_ids, third.trajectory_id or "")
            if shown is not None:
                break
            await asyncio.sleep(0.1)
        used = lesson is not None and shown is not None and lesson[0] in shown
        say(out, f"   trajectory {third.trajectory_id}: lessons_shown {shown}")
        say(out, f"   (follows the convention: {'yes' if check(third.text, probe.expected).passed else 'no'})")
        await asyncio.sleep(1.0)  # let the log follower print the last events

        say(out, "\n== summary")
        say(out, f"   correction -> lesson stored: {'yes' if lesson else 'no'}")
        say(out, f"   retrain phase ran while idle: {'yes' if retrained is not None else 'no'}")
        say(out, f"   the next similar turn was shown the lesson: {'yes' if used else 'no'}")
        say(out, f"   home kept at {home}")
        return 0 if used else 1
    finally:
        await client.aclose()
        children.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts.demo_learning", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream-url", default=None,
                        help="an OpenAI-compatible upstream on loopback (default: the embedded model)")
    parser.add_argument("--idle-time-scale", type=float, default=0.05,
                        help="compress every idle window and cooldown by this factor (default 0.05)")
    parser.add_argument("--family", choices=family_ids(), default="money", help="which convention to teach")
    parser.add_argument("--home", type=Path, default=None, help="the daemon's home (default: a fresh temp dir)")
    parser.add_argument("--port", type=int, default=None, help="loopback port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per chat request (default 600)")
    parser.add_argument("--all-phase-events", action="store_true",
                        help="also show the watchdog's gating skips (why a phase waits), not only its runs")
    parser.add_argument("--startup-timeout", type=float, default=900.0,
                        help="seconds for the daemon to become healthy (the embedded model loads; default 900)")
    parser.add_argument("--lesson-timeout", type=float, default=300.0,
                        help="seconds to wait for the lesson after the correction (default 300)")
    parser.add_argument("--retrain-timeout", type=float, default=600.0,
                        help="seconds to wait for the retrain phase to run (default 600)")
    return parser


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    if not args.idle_time_scale > 0:
        say(out, "--idle-time-scale must be positive")
        return 2
    home = args.home or Path(tempfile.mkdtemp(prefix="ghost-demo-"))
    home.mkdir(parents=True, exist_ok=True)
    [family] = families([args.family])
    return asyncio.run(demo(args, family, home, out))


if __name__ == "__main__":
    sys.exit(main())
