"""`POST /v1/completions` (legacy text completions): validate, one backend call, reply as JSON or SSE.

No agent turn and no trajectory: the prompt is raw text for the model to continue, which the agent's tools and
checks have no say in. Model names, auth, errors, streaming framing and cancellation are the chat route's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from ghost_agent.agent.turn import ClientDisconnected
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError
from ghost_agent.llm.model_names import renamed
from ghost_agent.server.chat.route import CLIENT_CLOSED, ensure_backend_ready
from ghost_agent.server.chat.streaming import SSEResponse, run_until_disconnect
from ghost_agent.server.completions.protocol import Completion, CompletionRequest
from ghost_agent.server.errors import ApiError
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext

router = APIRouter()


def _count_usage(ctx: AppContext, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for kind in ("prompt_tokens", "completion_tokens"):
        value = usage.get(kind)
        if isinstance(value, int) and value > 0:
            ctx.metrics.tokens.labels(kind.removesuffix("_tokens")).inc(value)


@router.post(
    "/v1/completions",
    response_model=Completion,
    summary="Create a legacy text completion (OpenAI-compatible)",
    responses={
        200: {
            "description": "A `text_completion`, or with `stream: true` a `text/event-stream` of `text_completion` "
            "events ending with `data: [DONE]`.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/CompletionChunk"}}},
        },
        **error_responses(400, 401, 404, 409, 413, 422, 429, 500, 501, 502, 503, 504),
    },
)
async def create_completion(body: CompletionRequest, request: Request) -> Any:
    """Continue the prompt(s) with one backend call: forwarded to an upstream, or run on the embedded model."""
    ctx: AppContext = request.app.state.ctx
    raw = body.model_dump(exclude_unset=True)
    n = raw.get("n") or 1
    if n > ctx.settings.server.max_n:
        raise ApiError(
            400, f"n={n} is above this daemon's limit of {ctx.settings.server.max_n} choices per request (max_n); "
            "ask for fewer or raise --max-n", param="n", code="n_too_large",
        )
    ensure_backend_ready(ctx)
    model = ctx.models.apply(raw)
    state = request.scope["state"]
    backend = ctx.backend
    wire.bound_max_tokens(raw, backend.context_limit(raw.get("model")))
    try:
        if not raw.get("stream"):
            result = await run_until_disconnect(request.receive, backend.text_completion(raw))
        else:
            chunks = renamed(backend.text_completion_stream(raw), model)
            first = await run_until_disconnect(request.receive, _first(chunks))
    except BackendError as exc:
        ctx.metrics.backend_errors.labels(str(exc.status)).inc()
        state["error"] = exc.message
        raise ApiError.from_backend(exc) from None
    except ClientDisconnected:
        state["error"] = "client disconnected"
        return Response(status_code=CLIENT_CLOSED)
    if not raw.get("stream"):
        result["model"] = model
        _count_usage(ctx, result.get("usage"))
        return Response(orjson.dumps(result), media_type="application/json")

    async def on_close(error: BaseException | None) -> None:
        if isinstance(error, BackendError):
            ctx.metrics.backend_errors.labels(str(error.status)).inc()

    return SSEResponse(
        first, chunks, include_usage=wire.wants_usage(raw), extra_headers=[], on_close=on_close,
        keepalive_s=ctx.settings.server.sse_keepalive_s,
    )


async def _first(chunks: AsyncIterator[dict[str, Any]]) -> dict[str, Any] | None:
    """The first event, pulled before the response starts so a failure is still a real HTTP status."""
    try:
        return await anext(chunks)
    except StopAsyncIteration:
        return None
