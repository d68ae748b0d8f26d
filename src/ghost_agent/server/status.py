"""`GET /v1/ghost/status` (behind the same bearer auth as every /v1 path): the learning loops at a glance."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext
from ghost_agent.watchdog.protocol import GhostStatus

router = APIRouter()


def live_model_status(slot: Any) -> dict[str, Any]:
    """A PRM scorer or router slot: id, source, swaps, and the live model's training metadata (its training
    figures and, for a retrained model, the swap gate's held-out figures that let it go live)."""
    model = slot.model
    meta: dict[str, Any] = dict(getattr(model, "metadata", None) or {}) if model is not None else {}
    metrics = meta.get("metrics")
    n_samples = meta.get("n_samples")
    gate = meta.get("gate")
    return {
        "loaded": bool(slot.has_model),
        "model_id": slot.model_id,
        "source": slot.source,
        "swaps": int(getattr(slot, "swaps", 0)),
        "trained_at": str(meta["trained_at"]) if meta.get("trained_at") else None,
        "n_samples": n_samples if isinstance(n_samples, int) else None,
        "metrics": metrics if isinstance(metrics, dict) else {},
        "gate": gate if isinstance(gate, dict) else {},
    }


async def ghost_status(ctx: AppContext, *, refresh: bool = False) -> dict[str, Any]:
    """The status document (also what `ghost-agent status` prints)."""
    watchdog = ctx.watchdog
    assert watchdog is not None, "build_app always creates the watchdog"
    doc = watchdog.status()
    doc["watchdog"]["idle_time_scale"] = ctx.settings.watchdog.idle_time_scale
    doc["models"] = {"prm": live_model_status(ctx.prm_scorer), "router": live_model_status(ctx.router)}
    doc["counts"] = await watchdog.counts.get(refresh=refresh)
    return doc


@router.get(
    "/v1/ghost/status",
    response_model=GhostStatus,
    summary="Learning-loop status: watchdog phases, live learned models, counts",
    responses=error_responses(401),
)
async def status(
    request: Request,
    refresh: bool = Query(False, description="Recompute the counts now instead of using the cached ones."),
) -> dict[str, Any]:
    """The watchdog's phases (last run, result, next eligible time, skip reason), the live learned models and
    the lesson / candidate / trajectory counts."""
    ctx: AppContext = request.app.state.ctx
    return await ghost_status(ctx, refresh=refresh)


__all__ = ["ghost_status", "live_model_status", "router"]
