"""The small routes: models, health (open: liveness only; `/v1/ghost/health`: the detail, behind auth), metrics."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from ghost_agent import __version__
from ghost_agent.privacy.redact import redact_url
from ghost_agent.sandbox.detect import FIX
from ghost_agent.server.chat.protocol import (
    BackendStatus,
    Health,
    HealthDetail,
    HealthStatus,
    LearnedModelStatus,
    ModelCard,
    ModelList,
)
from ghost_agent.server.errors import ApiError
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext, app_context

router = APIRouter()



@router.get("/v1/models", response_model=ModelList, responses=error_responses(401))
async def list_models(request: Request) -> ModelList:
    """The model names clients may send: the advertised one (an alias or `--model`), or what the upstream serves."""
    ctx = app_context(request)
    created = int(ctx.started_at)
    return ModelList(data=[ModelCard(id=n, created=created, owned_by="ghost-agent") for n in await _model_ids(ctx)])


@router.get("/v1/models/{model_id:path}", response_model=ModelCard, responses=error_responses(401, 404))
async def retrieve_model(model_id: str, request: Request) -> ModelCard:
    """One model of `/v1/models` (ids may contain `/`); 404 `model_not_found` for any other name."""
    ctx = app_context(request)
    if model_id not in await _model_ids(ctx):
        raise ApiError(
            404, f"the model {model_id!r} does not exist here; GET /v1/models lists the ones this daemon serves",
            type="invalid_request_error", param="model", code="model_not_found",  # OpenAI's own shape
        )
    return ModelCard(id=model_id, created=int(ctx.started_at), owned_by="ghost-agent")


async def _model_ids(ctx: AppContext) -> list[str]:
    names = [ctx.served_model]
    if not ctx.models.pinned and ctx.backend.kind == "http" and ctx.backend_ready.is_set():
        names = await ctx.backend.list_models() or names
    return names


@router.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness for load balancers and probes, open without auth: status, version and which parts are degraded,
    nothing else (no URLs, paths or model facts: those are `GET /v1/ghost/health`, behind the api key)."""
    ctx = app_context(request)
    backend = await _backend_status(ctx)
    status, degraded = _overall(ctx, backend)
    return Health(status=status, version=__version__, degraded=degraded)


@router.get("/v1/ghost/health", response_model=HealthDetail, responses=error_responses(401))
async def health_detail(request: Request) -> HealthDetail:
    """Everything `/health` leaves out, behind the same bearer auth as every /v1 path (open when no api key is
    set, which the daemon allows only on a loopback bind unless --insecure-no-auth): the backend with its URL's
    credentials redacted, the served model, uptime, the learned models and the sandbox (mounts, cgroup and host
    paths, probes, and any warning such as code running unisolated or its packages out of reach)."""
    ctx = app_context(request)
    backend = await _backend_status(ctx)
    status, degraded = _overall(ctx, backend)
    backend.detail = redact_url(backend.detail)
    return HealthDetail(
        status=status,
        version=__version__,
        degraded=degraded,
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
        sandbox=sandbox_status(ctx),
        extra=dict(ctx.health_extra),
    )


async def _backend_status(ctx: AppContext) -> BackendStatus:
    if ctx.backend_ready.is_set():
        info = await ctx.backend.health()
        return BackendStatus(kind=info.kind, reachable=info.reachable, model_loaded=info.model_loaded,
                             detail=info.detail)
    return BackendStatus(kind=ctx.backend.kind, reachable=False, model_loaded=False,
                         detail=ctx.backend_error or "starting")


def _overall(ctx: AppContext, backend: BackendStatus) -> tuple[HealthStatus, list[Any]]:
    """(status, degraded parts): `starting` while the backend loads, `degraded` when any part is, else `ok`."""
    starting = not ctx.backend_ready.is_set() and ctx.backend_error is None
    degraded: list[Any] = []
    if not starting and not (backend.reachable and backend.model_loaded):
        degraded.append("backend")
    if sandbox_degraded(ctx):
        degraded.append("sandbox")
    status: HealthStatus = "starting" if starting else "degraded" if degraded else "ok"
    return status, degraded


def sandbox_degraded(ctx: AppContext) -> bool:
    """Code tools refused or unavailable, or code running with a warning (unisolated, packages out of reach).
    While the startup probe runs, nothing is known yet: not degraded."""
    if ctx.sandbox_error is not None:
        return True
    return ctx.sandbox is not None and bool(ctx.sandbox.warnings())


def sandbox_status(ctx: AppContext) -> dict[str, Any]:
    """The `sandbox` section of /v1/ghost/health."""
    if ctx.sandbox is not None:
        return {"status": "ready", "code_tools": "enabled", **ctx.sandbox.to_dict()}
    if ctx.sandbox_error is not None:
        return {
            "status": "refused" if ctx.sandbox_refused else "unavailable",
            "code_tools": "disabled",
            "degraded": True,
            "error": ctx.sandbox_error,
            "fix": f"{FIX}, then restart the daemon",
        }
    return {"status": "probing"}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}, **error_responses(401)},
)
async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    return Response(app_context(request).metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
