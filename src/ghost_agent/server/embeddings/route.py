"""`POST /v1/embeddings`: validate, hand to the backend (an upstream, or the embedded model's embeddings engine)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from ghost_agent.agent.turn import ClientDisconnected
from ghost_agent.llm.base import BackendError
from ghost_agent.server.chat.route import CLIENT_CLOSED, ensure_backend_ready
from ghost_agent.server.chat.streaming import run_until_disconnect
from ghost_agent.server.embeddings.protocol import EmbeddingList, EmbeddingRequest
from ghost_agent.server.errors import ApiError
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext

router = APIRouter()


@router.post(
    "/v1/embeddings",
    response_model=EmbeddingList,
    summary="Create embeddings (OpenAI-compatible)",
    responses=error_responses(400, 401, 404, 413, 422, 429, 500, 501, 502, 503, 504),
)
async def create_embeddings(body: EmbeddingRequest, request: Request) -> Any:
    """Embed the inputs: forwarded to an upstream, or computed by the embedded model's embeddings engine (loaded
    on the first request; `--embeddings off` answers 501)."""
    ctx: AppContext = request.app.state.ctx
    if ctx.settings.backend.embeddings == "off":
        raise ApiError(
            501, "embeddings are turned off on this daemon; start it with --embeddings lazy (GHOST_EMBEDDINGS=lazy, "
            "or `embeddings = \"lazy\"` in the config file) to serve them", type="not_supported_error",
            code="embeddings_disabled",
        )
    ensure_backend_ready(ctx)
    raw = body.model_dump(exclude_unset=True)
    model = ctx.models.apply(raw, other_models=True)
    try:
        result = await run_until_disconnect(request.receive, ctx.backend.embeddings(raw))
    except BackendError as exc:
        ctx.metrics.backend_errors.labels(str(exc.status)).inc()
        request.scope["state"]["error"] = exc.message
        raise ApiError.from_backend(exc) from None
    except ClientDisconnected:
        request.scope["state"]["error"] = "client disconnected"
        return Response(status_code=CLIENT_CLOSED)
    result["model"] = model
    tokens = (result.get("usage") or {}).get("prompt_tokens") if isinstance(result.get("usage"), dict) else None
    if isinstance(tokens, int) and tokens > 0:
        ctx.metrics.tokens.labels("prompt").inc(tokens)
    return Response(orjson.dumps(result), media_type="application/json")
