"""Agent-turn overhead (scripted model, zero latency) and the cost of search on the embedded model.

    python bench/bench_agent.py [--turns 200] [--embedded] [--prompts 5]

Overhead targets (issue 6), through the real app (ASGI in-process, real sandbox, real trajectory and lesson
stores) with a scripted backend that answers instantly, so what is measured is our own work: the fast path
<= 3 ms p50; a 3-step tool turn (three sandboxed python runs + the verifier call) <= 150 ms p50.

`--embedded` runs a 5-prompt tool-use set on the embedded Qwen2.5-Coder-1.5B three ways — MCTS off
(single-shot), MCTS on with LLM simulation, MCTS on with the PRM fast path (a checkpoint trained on
bench/synth_prm.py trajectories) — and prints wall time, model calls and tokens per configuration and whether
each answer is right. Slow (minutes). Figures are from one noisy shared machine; compare rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_prm import make_corpus  # noqa: E402

from ghost_agent.llm.base import LLMBackend  # noqa: E402
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply  # noqa: E402
from ghost_agent.prm.trainer import PRMTrainer  # noqa: E402
from ghost_agent.server import build_app  # noqa: E402
from ghost_agent.settings import Settings  # noqa: E402

PROMPTS = (
    ("use python to compute the sum of the squares of 1..100", "338350"),
    ("use python to count the primes below 1000", "168"),
    ("with python, what is 2 to the power 64?", "18446744073709551616"),
    ("use python to compute the 30th Fibonacci number (fib(1) = fib(2) = 1)", "832040"),
    ("use bash to count the characters in the string 'ghost agent'", "11"),
)


def settings_for(home: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"home": home, "log_level": "warning", "trajectory_durability": "none"}
    values.update(overrides)
    return Settings.from_keys(**values).validate()


async def timed_turns(settings: Settings, backend: LLMBackend, script: Any, turns: int, content: str) -> list[float]:
    """Median-friendly per-turn wall times (ms) through the app, `script()` enqueueing each turn's replies."""
    app = build_app(settings, backend, configure_logs=False)
    times: list[float] = []
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost", timeout=60) as client:
            await asyncio.sleep(0.5)  # let the sandbox probe finish
            body = {"model": "m", "messages": [{"role": "user", "content": content}]}
            for i in range(turns + 5):
                script()
                t0 = time.perf_counter()
                response = await client.post("/v1/chat/completions", json=body)
                elapsed = (time.perf_counter() - t0) * 1000
                if response.status_code != 200:
                    raise SystemExit(f"turn failed: {response.status_code} {response.text[:300]}")
                if i >= 5:  # warm-up turns are not counted
                    times.append(elapsed)
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def overhead(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        fast = ScriptedBackend(model="m")
        fast_times = await timed_turns(
            settings_for(home / "fast", router="always-fast"), fast, lambda: fast.enqueue(ScriptedReply("hi")),
            turns, "hello",
        )
        agent = ScriptedBackend(model="m", default="error")

        def three_steps() -> None:
            agent.enqueue(
                *(ScriptedReply(json.dumps({"tool": "python", "args": {"code": f"print({k} * {k})"}}))
                  for k in range(3)),
                ScriptedReply("0, 1 and 4."),
                ScriptedReply(json.dumps({"verdict": "CONFIRMED", "confidence": 0.9, "note": "ok"})),
            )

        agent_times = await timed_turns(
            settings_for(home / "agent", router="always-agent", mcts=False), agent, three_steps,
            max(20, turns // 4), "square 0, 1 and 2 with python",
        )
    print("# agent-turn overhead (scripted model answering instantly; in-process ASGI; noisy shared machine)")
    for label, times, target in (
        ("fast path turn", fast_times, "(target p50 <= 3 ms)"),
        ("3-step tool turn", agent_times, "(target p50 <= 150 ms; 3 sandboxed python runs + verifier)"),
    ):
        print(f"{label:23s}: p50 {statistics.median(times):7.2f} ms  p99 {percentile(times, .99):7.2f} ms   {target}")


async def embedded(n_prompts: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        trainer = PRMTrainer(make_corpus(600, 7), checkpoint_path=home / "prm.json")
        report = trainer.run()
        if not report.fit_succeeded:
            raise SystemExit(f"PRM did not fit: {report.bail_reason}")
        configs = (
            ("MCTS off (single-shot)", {"mcts": False}),
            ("MCTS on, LLM simulation", {"mcts": True, "mcts_simulate": True}),
            ("MCTS on, PRM fast path", {"mcts": True, "prm_model": home / "prm.json"}),
        )
        print(f"# embedded qwen2.5-coder-1.5b, {n_prompts} tool-use prompts per configuration")
        for label, overrides in configs:
            settings = settings_for(home / label.split()[0] / label.split()[-1], router="always-agent",
                                    n_ctx=4096, agent_max_tokens=512, **overrides)
            app = build_app(settings, configure_logs=False)
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://localhost", timeout=900) as client:
                    while (await client.get("/health")).json()["status"] == "starting":
                        await asyncio.sleep(0.5)
                    walls, tokens, right = [], 0, 0
                    for prompt, expected in PROMPTS[:n_prompts]:
                        body = {"model": "m", "temperature": 0, "messages": [{"role": "user", "content": prompt}]}
                        t0 = time.perf_counter()
                        response = await client.post("/v1/chat/completions", json=body)
                        walls.append(time.perf_counter() - t0)
                        data = response.json()
                        text = data["choices"][0]["message"]["content"] if response.status_code == 200 else ""
                        right += expected in text.replace(",", "")
                        tokens += (data.get("usage") or {}).get("total_tokens", 0)
            print(f"{label:26s}: {sum(walls):6.1f} s total, median {statistics.median(walls):5.1f} s/turn, "
                  f"{tokens:6d} loop tokens, {right}/{n_prompts} right")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--prompts", type=int, default=5)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    asyncio.run(overhead(args.turns))
    if args.embedded:
        asyncio.run(embedded(args.prompts))


if __name__ == "__main__":
    main()
