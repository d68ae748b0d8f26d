"""Function calling and structured output on the embedded model: the raw model against the daemon, in one run.

    python bench/bench_tool_calls.py                 # 55 tool-call requests + 50 json_schema requests
    python bench/bench_tool_calls.py --limit 10 --skip-structured
    python bench/bench_tool_calls.py --layer-only    # the contract layer's own added latency (no model)

One embedded Qwen2.5-Coder-1.5B is loaded once; each request is sent (greedy) two ways:
- raw: straight to the embedded backend (llama.cpp with its chat template's tool support), as a client talking
  to the bare model server would; its `tool_calls` are what the client gets;
- daemon: `POST /v1/chat/completions` on the daemon app (in-process ASGI) over the same backend.
Figures: exact-call accuracy over `ghost_agent.eval.suites.toolcalls` (12 functions, 55 requests, 2 parallel),
the share of replies that carry the call as native `tool_calls`, and how many extra model calls the daemon
spent (repair / require rounds); then `json_schema` validity over 50 extraction requests (does the content
parse and validate against the schema). `--layer-only` times the layer's pure work per reply (parsing a call
out of text, validating JSON against a schema) — its added latency on the fast path, without a model.
Slow on 2 cores (~10-20 min); the machine is noisy, compare the two columns of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import structlog

from ghost_agent.agent.compat import structured
from ghost_agent.agent.compat.tool_call_parse import parse_tool_calls
from ghost_agent.eval.suites.toolcalls import FUNCTIONS, TASKS, CallTask, calls_match
from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.factory import make_backend
from ghost_agent.server import build_app
from ghost_agent.settings import Settings

JSON = dict[str, Any]


def native_calls(message: JSON) -> list[tuple[str, JSON]]:
    out = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            args = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            args = None
        out.append((str(function.get("name")), args if isinstance(args, dict) else {}))
    return out


def body_for(task: CallTask) -> JSON:
    return {"model": "m", "messages": [{"role": "user", "content": task.request}], "tools": task.tools,
            "temperature": 0, "max_tokens": 256}


def extraction(task: CallTask) -> tuple[JSON, JSON]:
    """A structured-output request: pull the target function's fields out of the request, as JSON."""
    name = task.expected[0][0]
    params = FUNCTIONS[name]["function"]["parameters"]
    schema = {"type": "object", "properties": params["properties"], "required": list(params["properties"]),
              "additionalProperties": False}
    fields = ", ".join(params["properties"])
    body = {
        "model": "m", "temperature": 0, "max_tokens": 256,
        "messages": [{"role": "user", "content": f"Extract {fields} from this request as JSON: {task.request}"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema}},
    }
    return body, schema


async def run(args: argparse.Namespace) -> None:
    tasks = TASKS[: args.limit] if args.limit else TASKS
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_keys(home=Path(tmp), n_ctx=8192, log_level="warning", trajectory_durability="none",
                                      router="always-fast").validate()
        backend: LLMBackend = make_backend(settings.backend)
        app = build_app(settings, backend, configure_logs=False)
        async with app.router.lifespan_context(app):
            client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost",
                                       timeout=600)
            await tool_calls(tasks, backend, client)
            if not args.skip_structured:
                await structured_output(tasks[:50], backend, client)
            await client.aclose()


async def tool_calls(tasks: list[CallTask], backend: LLMBackend, client: httpx.AsyncClient) -> None:
    rows = []
    totals = {"raw": [0, 0, 0.0], "daemon": [0, 0, 0.0]}  # exact, native, seconds
    for task in tasks:
        t0 = time.perf_counter()
        raw = await backend.complete(body_for(task))
        t_raw = time.perf_counter() - t0
        raw_message = raw["choices"][0]["message"]
        raw_calls = native_calls(raw_message)
        t0 = time.perf_counter()
        response = await client.post("/v1/chat/completions", json=body_for(task))
        t_daemon = time.perf_counter() - t0
        message = response.json()["choices"][0]["message"] if response.status_code == 200 else {}
        calls = native_calls(message)
        parsed_raw = parse_tool_calls(raw_message.get("content") or "", task.tools)
        ok_raw, ok_daemon = calls_match(task, raw_calls), calls_match(task, calls)
        for side, ok, native, seconds in (("raw", ok_raw, bool(raw_calls), t_raw),
                                          ("daemon", ok_daemon, bool(calls), t_daemon)):
            totals[side][0] += ok
            totals[side][1] += native
            totals[side][2] += seconds
        rows.append((task.id, ok_raw, bool(raw_calls), calls_match(task, [(c.name, c.arguments)
                                                                             for c in parsed_raw.calls]),
                     ok_daemon, bool(calls), round(t_raw, 1), round(t_daemon, 1)))
        print(f"  {task.id:12} raw {'ok ' if ok_raw else 'BAD'} native={bool(raw_calls)!s:5} | daemon "
              f"{'ok ' if ok_daemon else 'BAD'} native={bool(calls)!s:5} ({t_raw:.1f}s / {t_daemon:.1f}s)"
              f"{'' if ok_daemon else '  got ' + json.dumps(calls or message.get('content'))[:160]}", flush=True)
    n = len(tasks)
    text_ok = sum(1 for r in rows if r[3])
    print(f"\n# tool calls ({n} requests, {len({t.expected[0][0] for t in tasks})} functions)")
    print(f"{'':8} {'exact':>8} {'native':>8} {'wall s':>8}")
    for side, (exact, native, seconds) in totals.items():
        print(f"{side:8} {exact / n:8.2f} {native / n:8.2f} {seconds:8.1f}")
    print(f"raw model's calls if the client parsed its text itself: {text_ok / n:.2f} exact")


async def structured_output(tasks: list[CallTask], backend: LLMBackend, client: httpx.AsyncClient) -> None:
    valid = {"raw": 0, "daemon": 0}
    for task in tasks:
        body, schema = extraction(task)
        raw = await backend.complete(body)
        raw_text = raw["choices"][0]["message"].get("content") or ""
        response = await client.post("/v1/chat/completions", json=body)
        text = response.json()["choices"][0]["message"].get("content") or "" if response.status_code == 200 else ""
        fmt = body["response_format"]
        ok_raw, ok_daemon = not structured.problems(raw_text, fmt), not structured.problems(text, fmt)
        valid["raw"] += ok_raw
        valid["daemon"] += ok_daemon
        print(f"  {task.id:12} raw {'valid' if ok_raw else 'INVALID'} | daemon {'valid' if ok_daemon else 'INVALID'}"
              f"{'' if ok_daemon else '  ' + text[:120]!r}", flush=True)
    n = len(tasks)
    print(f"\n# json_schema structured output ({n} requests): valid raw {valid['raw'] / n:.2f}, "
          f"daemon {valid['daemon'] / n:.2f}")


def layer_latency(repeat: int = 2000) -> None:
    """The contract layer's pure per-reply work on the fast path (no model, no HTTP)."""
    task = TASKS[0]
    fenced = '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```'
    prose = "It is sunny in Lisbon today, around 21 degrees, with a light breeze from the west."
    body, _ = extraction(task)
    fmt = body["response_format"]
    cases = {
        "tools: call in fenced JSON": lambda: parse_tool_calls(fenced, task.tools),
        "tools: prose reply": lambda: parse_tool_calls(prose, task.tools),
        "json_schema: valid reply": lambda: structured.problems('{"city": "Lisbon", "unit": "celsius"}', fmt),
        "no tools, no format": lambda: structured.kind(None),
    }
    print("# contract layer, added work per reply (fast path)")
    for name, fn in cases.items():
        fn()
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter_ns()
            fn()
            samples.append((time.perf_counter_ns() - t0) / 1e6)
        samples.sort()
        print(f"  {name:30} p50 {statistics.median(samples):.4f} ms  p99 {samples[int(len(samples) * 0.99)]:.4f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--skip-structured", action="store_true")
    parser.add_argument("--layer-only", action="store_true")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    layer_latency()
    if not args.layer_only:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
