"""`ghost-agent status`: ask the running daemon for `GET /v1/ghost/status` and print it (or `--json`).

The daemon is found the way it was configured (`--host`/`--port`, GHOST_* env, `--config`), or at `--url`;
the api key comes from `--api-key`, GHOST_API_KEY or the config. Exit 0 on success, 1 when the daemon is
unreachable or refuses (401: say which key to send), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

import httpx
import orjson

from ghost_agent.cli.args import home_config_parent, positive_float
from ghost_agent.jsonsafe import JSON
from ghost_agent.settings import Settings, SettingsError, load_settings


def add_subparser(sub: Any) -> None:
    """Register `status` on the `ghost-agent` subcommands."""
    parser = sub.add_parser(
        "status", parents=[home_config_parent()],
        help="the running daemon's learning loops: watchdog phases, live models, lesson/trajectory counts",
    )
    parser.add_argument("--url", help="daemon base URL (default: http://HOST:PORT from the settings)")
    parser.add_argument("--host", help="daemon host (default: the settings' host)")
    parser.add_argument("--port", type=int, help="daemon port (default: the settings' port)")
    parser.add_argument("--api-key", dest="api_key", help="bearer key (default: GHOST_API_KEY / the config)")
    parser.add_argument("--json", action="store_true", help="print the raw status document")
    parser.add_argument("--refresh", action="store_true", help="recount lessons and trajectories now")
    parser.add_argument("--timeout", type=positive_float, default=10.0, help="seconds to wait (default 10)")
    parser.set_defaults(func=cmd_status, parser=parser)


def daemon_url(settings: Settings) -> str:
    """Where the daemon configured by `settings` listens (a wildcard bind is reached over loopback)."""
    host = settings.server.host
    if host in ("0.0.0.0", "", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.server.port}"


def fetch_status(url: str, api_key: str | None, *, refresh: bool = False, timeout: float = 10.0) -> JSON:
    """GET /v1/ghost/status; raises httpx errors (HTTPStatusError for a non-2xx answer)."""
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    # trust_env=False: a proxy configured for the outside world must not see a loopback request or its key.
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        response = client.get(f"{url.rstrip('/')}/v1/ghost/status", headers=headers,
                              params={"refresh": "true"} if refresh else None)
        response.raise_for_status()
        doc: JSON = response.json()
        return doc


def cmd_status(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the daemon's status."""
    given = {k: v for k, v in vars(args).items() if k in ("home", "config", "host", "port", "api_key") and v}
    try:
        settings = load_settings(cli=given)
    except SettingsError as exc:
        parser.error(str(exc))
    url = args.url or daemon_url(settings)
    try:
        doc = fetch_status(url, settings.server.api_key, refresh=args.refresh, timeout=args.timeout)
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        hint = " (send the daemon's key: --api-key or GHOST_API_KEY)" if status == 401 else ""
        print(f"ghost-agent status: {url} answered {status}{hint}", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"ghost-agent status: cannot reach the daemon at {url}: {exc!r}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render(doc, sys.stdout, url=url)
    return 0


def _secs(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 3600 and value % 3600 == 0:
        return f"{value / 3600:g}h"
    if value >= 60 and value % 60 == 0:
        return f"{value / 60:g}m"
    return f"{value:g}s"


def _window(window: JSON) -> str:
    lo, hi = window.get("min_idle_s"), window.get("max_idle_s")
    return f">{_secs(lo)}" if hi is None else f"{_secs(lo)}-{_secs(hi)}"


def _result(phase: JSON) -> str:
    result = phase.get("last_result")
    if phase.get("running"):
        return "running"
    if not result:
        return "-"
    detail = result.get("detail") or ""
    data = ", ".join(f"{k} {v}" for k, v in (result.get("data") or {}).items() if not isinstance(v, (dict, list)))
    text = str(result["status"]) + (f": {detail}" if detail else "")
    return text + (f" ({data})" if data and result["status"] in ("ok", "yielded") else "")


def _next(phase: JSON) -> str:
    if phase.get("next_eligible_in_s") is None:
        return "after next request"
    return "now" if phase["next_eligible_in_s"] <= 0 else f"in {phase['next_eligible_in_s']:.0f}s"


def _counts_line(name: str, counts: JSON) -> str:
    if "error" in counts:
        return f"  {name}: error: {counts['error']}"
    if counts.get("available") is False:
        return f"  {name}: {counts.get('reason') or 'unavailable'}"
    parts = [f"  {name} {counts.get('total', 0)}"]
    for key in ("by_status", "by_outcome", "by_source"):
        groups = counts.get(key)
        if groups:
            parts.append(f"{key.removeprefix('by_')}: " + ", ".join(f"{k} {v}" for k, v in groups.items()))
    return " — ".join(parts) if len(parts) > 1 else parts[0]


def render(doc: JSON, out: IO[str], *, url: str = "") -> None:
    """The status document as a short human-readable report."""
    wd = doc["watchdog"]
    state = "running" if wd["running"] else ("enabled, not running" if wd["enabled"] else "disabled")
    out.write(f"ghost-agent status{' — ' + url if url else ''}\n")
    out.write(f"watchdog: {state}; tick {_secs(wd['tick_s'])} (time scale {wd['idle_time_scale']:g}); "
              f"idle {wd['idle_s']:.0f}s; user requests in flight {wd['user_requests_in_flight']}\n")
    rows = [("phase", "name", "window", "cooldown", "runs", "last end", "result", "next", "skip reason")]
    for p in doc["phases"]:
        name = p["name"] + ("" if p.get("built", True) else " (not built)")
        rows.append((p["key"], name, _window(p["window"]), _secs(p["cooldown_s"]), str(p["runs"]),
                     p.get("last_end") or "-", _result(p), _next(p), p.get("skip_reason") or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        out.write("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] + "\n")
    out.write("models:\n")
    for name, m in doc.get("models", {}).items():
        if not m.get("loaded"):
            out.write(f"  {name}: no model (neutral)\n")
            continue
        metrics = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in (m.get("metrics") or {}).items() if isinstance(v, (int, float)))
        out.write(f"  {name}: {m.get('model_id')} from {m.get('source') or '?'}; swaps {m.get('swaps', 0)}; "
                  f"trained {m.get('trained_at') or '?'}; samples {m.get('n_samples') or '?'}"
                  + (f"; {metrics}" if metrics else "") + "\n")
        gate = m.get("gate") or {}
        ours, theirs = (gate.get("candidate") or {}).get("log_loss"), (gate.get("live") or {}).get("log_loss")
        if isinstance(ours, (int, float)) and isinstance(theirs, (int, float)):
            out.write(f"    swap gate: held-out log loss {ours:.4f} vs {theirs:.4f} ({gate.get('live_id')}), "
                      f"{gate.get('holdout_samples')} newest samples\n")
    counts = doc.get("counts") or {}
    out.write("counts:\n")
    for name in ("lessons", "candidates", "trajectories"):
        if isinstance(counts.get(name), dict):
            out.write(_counts_line(name, counts[name]) + "\n")


__all__ = ["add_subparser", "cmd_status", "daemon_url", "fetch_status", "render"]
