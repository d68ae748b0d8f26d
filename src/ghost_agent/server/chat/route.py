"""`POST /v1/chat/completions`: validate, run the turn pipeline, reply as JSON or as SSE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.background import BackgroundTask
from starlette.responses import Response

from ghost_agent.agent.turn import ClientDisconnected, Turn
from ghost_agent.llm import content_parts, wire
from ghost_agent.llm.base import BackendError
from ghost_agent.privacy.redact import session_key
from ghost_agent.server.chat.protocol import ChatCompletion, ChatCompletionRequest
from ghost_agent.server.chat.streaming import SSEResponse, run_until_disconnect
from ghost_agent.server.errors import ApiError
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext

router = APIRouter()

CLIENT_CLOSED = 499  # nginx's convention; the client never sees it, the log and metrics do


def _context(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


def session_id(request: Request, body: dict[str, Any]) -> str:
    """Which conversation a request belongs to: `x-ghost-session-id`, else the OpenAI `user` field.

    The id names a workspace directory and a trajectory file and lands in logs, so one holding a secret is
    replaced by a stable pseudonym (`privacy.redact.session_key`) before anything uses it."""
    value = request.headers.get("x-ghost-session-id") or body.get("user") or "default"
    return session_key(str(value))


def ensure_backend_ready(ctx: AppContext) -> None:
    """503 while the model is still loading, or with the reason it failed to load."""
    if ctx.backend_ready.is_set():
        return
    if ctx.backend_error is not None:
        raise ApiError(503, f"backend unavailable: {ctx.backend_error}", code="backend_unavailable")
    raise ApiError(
        503, "backend is starting (loading the model); retry shortly", code="backend_starting",
        headers={"retry-after": "2"},
    )


def _record_usage(ctx: AppContext, turn: Turn) -> None:
    if "ttft" in turn.timings:
        ctx.metrics.ttft.labels(str(turn.stream).lower()).observe(turn.timings["ttft"] / 1000.0)
    usage = turn.usage or {}
    for kind in ("prompt_tokens", "completion_tokens"):
        value = usage.get(kind)
        if isinstance(value, int) and value > 0:
            ctx.metrics.tokens.labels(kind.removesuffix("_tokens")).inc(value)


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletion,
    summary="Create a chat completion (OpenAI-compatible)",
    responses={
        200: {
            "description": "A `chat.completion`, or with `stream: true` a `text/event-stream` of "
            "`chat.completion.chunk` events ending with `data: [DONE]`.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/ChatCompletionChunk"}}},
        },
        **error_responses(400, 401, 404, 409, 413, 422, 429, 500, 502, 503, 504),
    },
)
async def create_chat_completion(body: ChatCompletionRequest, request: Request) -> Any:
    """Run one turn through the pipeline and answer in OpenAI's wire format."""
    ctx = _context(request)
    raw = body.model_dump(exclude_unset=True)
    n = raw.pop("n", None) or 1  # served as n choices here, never forwarded (see agent/stages/choices.py)
    if n > ctx.settings.server.max_n:
        raise ApiError(
            400, f"n={n} is above this daemon's limit of {ctx.settings.server.max_n} choices per request (max_n): each "
            "choice is a full completion; ask for fewer or raise --max-n", param="n", code="n_too_large",
        )
    ensure_backend_ready(ctx)
    try:  # parts the model cannot read: a 400 naming the part, never silently dropped (llm/content_parts.py)
        content_parts.check(raw.get("messages"), ctx.backend.content_parts, ctx.served_model)
    except BackendError as exc:
        raise ApiError.from_backend(exc) from None
    state = request.scope["state"]
    turn = Turn(body=raw, stream=bool(raw.get("stream")), include_usage=wire.wants_usage(raw), n=n)
    turn.request_id = state["request_id"]
    turn.session_id = session_id(request, raw)
    state["turn"] = turn
    pipeline = ctx.pipeline

    async def first_chunk() -> Any:
        await pipeline.run(turn)
        assert turn.chunks is not None
        try:
            return await anext(turn.chunks)
        except StopAsyncIteration:
            return None

    try:
        # Non-streaming: the whole turn. Streaming: the turn up to its first chunk, so a failure before any
        # byte is still a real HTTP status.
        first = await run_until_disconnect(
            request.receive, first_chunk() if turn.stream else pipeline.run(turn)
        )
    except BackendError as exc:
        ctx.metrics.backend_errors.labels(str(exc.status)).inc()
        state["error"] = exc.message
        await pipeline.finish(turn, exc)
        raise ApiError.from_backend(exc) from None
    except ClientDisconnected as exc:
        state["error"] = "client disconnected"
        await pipeline.finish(turn, exc)
        return Response(status_code=CLIENT_CLOSED)

    headers: dict[str, str] = {}
    if turn.trajectory_id:
        headers["x-ghost-trajectory-id"] = turn.trajectory_id
        if turn.choices:  # one trajectory per choice, in choice order
            headers["x-ghost-trajectory-ids"] = ",".join(c.trajectory_id or "" for c in turn.choices)
    if not turn.stream:
        _record_usage(ctx, turn)
        # The trajectory is written before the reply goes out (a process killed right after cannot lose a turn
        # the client saw succeed); the other finishers (learning hooks) run after it is sent.
        await pipeline.finish(turn, before_delivery=True)
        return Response(
            orjson.dumps(turn.response),
            media_type="application/json",
            headers=headers,
            background=BackgroundTask(pipeline.finish, turn),
        )

    async def on_close(error: BaseException | None) -> None:
        if isinstance(error, BackendError):
            ctx.metrics.backend_errors.labels(str(error.status)).inc()
        _record_usage(ctx, turn)
        await pipeline.finish(turn, error)

    async def recorded(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The chunks, then the trajectory written before `data: [DONE]` goes out."""
        async for item in chunks:
            yield item
        await pipeline.finish(turn, before_delivery=True)

    assert turn.chunks is not None
    return SSEResponse(
        first,
        recorded(turn.chunks),
        include_usage=turn.include_usage,
        extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()],
        on_close=on_close,
        keepalive_s=ctx.settings.server.sse_keepalive_s,
    )
