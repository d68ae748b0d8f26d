"""The status page's self-play and learned-model endpoints: is practice paying off, are the models any good?

`GET /v1/ghost/selfplay`: per cluster, attempts, passes, the recent pass rate, difficulty, saturation and the
frontier picker's weight (`selfplay/stats.py`), the pass rate per cluster per day (from the turns index), and the
experience bank's size and what showing its examples did. `GET /v1/ghost/models`: the live PRM and router with
their held-out figures and calibration (predicted against realised in bins, with counts), every retrain's gate
verdict (held-out log loss, Brier, accuracy and AUC of the candidate beside the live model — or the neutral 0.5
when none was live), and the router's decisions per day. Both read the home in a worker thread.
"""

from __future__ import annotations

import asyncio

import orjson
from fastapi import APIRouter, Query, Request

from ghost_agent.jsonsafe import JSON
from ghost_agent.selfplay.stats import cluster_stats
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import app_context
from ghost_agent.server.status import live_model_status
from ghost_agent.server.turn_index import per_day
from ghost_agent.watchdog.run_log import History

router = APIRouter()



@router.get("/v1/ghost/selfplay", summary="Self-play per cluster: pass rates over time, frontier weights, the bank",
            responses=error_responses(401))
async def selfplay(request: Request) -> JSON:
    """`clusters`: one row per practice cluster; `history`: {cluster: {day: {passed, failed, unknown}}};
    `bank`: the experience bank's figures (null when it is not open)."""
    ctx = app_context(request)

    def read() -> JSON:
        rows = ctx.turn_index().all_rows(source="self_play")
        bank = ctx.experience
        return {"clusters": cluster_stats(ctx.home, ctx.settings), "history": per_day(rows, "cluster", "outcome"),
                "bank": bank.stats() if bank is not None else None}

    return await asyncio.to_thread(read)


@router.get("/v1/ghost/models", summary="Learned models: live figures, calibration, retrain history, router decisions",
            responses=error_responses(401))
async def models(request: Request, limit: int = Query(100, ge=1, le=1000)) -> JSON:
    """`live`: the PRM and the router as `/v1/ghost/status` shows them (their gate holds the held-out figures and
    `calibration`); `retrains`: the newest `limit` retrain verdicts, oldest first; `router_days`:
    {day: {fast, agent, …}} over chat turns."""
    ctx = app_context(request)

    def read() -> JSON:
        rows = ctx.turn_index().all_rows(source="chat")
        routes = per_day(rows, "source", "route").get("chat", {})
        return {"retrains": History(ctx.home.retrain_history).recent(limit), "router_days": routes}

    found = await asyncio.to_thread(read)
    return {"live": {"prm": live_model_status(ctx.prm_scorer), "router": live_model_status(ctx.router)}, **found}


__all__ = ["router"]


@router.get("/v1/ghost/evals", summary="Eval history: every freeze and compare run, and the frozen baselines",
            responses=error_responses(401))
async def evals(request: Request, limit: int = Query(200, ge=1, le=2000)) -> JSON:
    """`runs`: the newest `limit` `ghost-agent eval freeze|compare` runs, oldest first (suite, pass rate, per
    cluster, the baseline's rate and whether it regressed); `baselines`: the frozen results in
    `system/eval/*.json` (suite, pass rate, clusters, when and how they were made)."""
    ctx = app_context(request)

    def read() -> JSON:
        baselines: list[JSON] = []
        for path in sorted(ctx.home.eval.glob("*.json")):
            try:
                data = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                baselines.append({"file": path.name, "error": "unreadable"})
                continue
            if isinstance(data, dict) and "pass_rate" in data:
                meta = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
                baselines.append({"file": path.name, "suite": data.get("suite"), "pass_rate": data.get("pass_rate"),
                                  "passed": data.get("passed"), "total": data.get("total"),
                                  "clusters": data.get("clusters"), "started_at": meta.get("started_at"),
                                  "runner": meta.get("runner"), "model": meta.get("model")})
        return {"runs": History(ctx.home.eval_history).recent(limit), "baselines": baselines}

    return await asyncio.to_thread(read)
