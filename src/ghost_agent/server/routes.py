"""The small routes: models, health, metrics."""

from __future__ import annotations

import time
from typing import Any, Literal

from fastapi import APIRouter, Request
from starlette.responses import Response

from ghost_agent import __version__
from ghost_agent.server.chat.protocol import BackendStatus, Health, LearnedModelStatus, ModelCard, ModelList
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext

router = APIRouter()


def _ctx(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


@router.get("/v1/models", response_model=ModelList, responses=error_responses(401))
async def list_models(request: Request) -> ModelList:
    """The model name clients should send (the configured one, or what the upstream serves)."""
    ctx = _ctx(request)
    names = [ctx.served_model]
    if not ctx.settings.model and ctx.backend.kind == "http" and ctx.backend_ready.is_set():
        names = await ctx.backend.list_models() or names
    created = int(ctx.started_at)
    return ModelList(data=[ModelCard(id=n, created=created, owned_by="ghost-agent") for n in names])


@router.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness plus backend reachability; `status` is `starting` while the model loads."""
    ctx = _ctx(request)
    if ctx.backend_ready.is_set():
        info = await ctx.backend.health()
        backend = BackendStatus(
            kind=info.kind, reachable=info.reachable, model_loaded=info.model_loaded, detail=info.detail
        )
        status: Literal["ok", "degraded", "starting"] = (
            "ok" if info.reachable and info.model_loaded else "degraded"
        )
    else:
        failed = ctx.backend_error is not None
        backend = BackendStatus(
            kind=ctx.backend.kind, reachable=False, model_loaded=False, detail=ctx.backend_error or "starting"
        )
        status = "degraded" if failed else "starting"
    return Health(
        status=status,
        version=__version__,
        backend=backend,
        model=ctx.served_model,
        uptime_s=round(time.time() - ctx.started_at, 3),
        learned={
            "prm": LearnedModelStatus(
                loaded=ctx.prm_scorer.has_model, model_id=ctx.prm_scorer.model_id, source=ctx.prm_scorer.source
            ),
            "router": LearnedModelStatus(
                loaded=ctx.router.has_model, model_id=ctx.router.model_id, source=ctx.router.source
            ),
        },
        sandbox=_sandbox_status(ctx),
        extra=dict(ctx.health_extra),
    )


def _sandbox_status(ctx: AppContext) -> dict[str, Any]:
    if ctx.sandbox is not None:
        return {"status": "ready", **ctx.sandbox.to_dict()}
    if ctx.sandbox_error is not None:
        return {"status": "unavailable", "error": ctx.sandbox_error}
    return {"status": "probing"}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}, **error_responses(401)},
)
async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    return Response(_ctx(request).metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
