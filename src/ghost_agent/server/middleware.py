"""One pure-ASGI middleware for what every request needs: request id, Host/Origin check, auth, body cap, metrics
and the log.

Pure ASGI (not BaseHTTPMiddleware) because it sits on the hot path of a proxy whose overhead budget is a
millisecond, and because streaming responses must pass through without buffering.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import request_id as client_request_id
from ghost_agent.server.errors import ApiError, internal_error
from ghost_agent.server.hosts import HostPolicy
from ghost_agent.server.state import AppContext

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = get_logger("server")

_RAW_ID_BYTES = 4096  # of an x-request-id header looked at: only its first 64 safe characters are ever kept


class BodyTooLarge(ApiError):
    """The request body passed `max_request_bytes`."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            413, f"request body exceeds the {limit}-byte limit (max_request_bytes)", code="request_too_large"
        )


def shutting_down() -> ApiError:
    """The answer to a request the daemon had to abandon while shutting down."""
    return ApiError(
        503, "the daemon is shutting down; retry against the restarted daemon", code="shutting_down",
        headers={"retry-after": "5"},
    )


def needs_auth(path: str) -> bool:
    """Paths protected by the api key: the OpenAI API and the metrics."""
    return path.startswith("/v1/") or path == "/metrics"


class GhostMiddleware:
    """Request id, Host/Origin check, bearer auth, body-size cap, Prometheus accounting and one `request` log
    event."""

    def __init__(self, app: ASGIApp, ctx: AppContext) -> None:
        self.app = app
        self.ctx = ctx
        self.hosts = HostPolicy(ctx.settings.server)
        key = ctx.settings.server.api_key
        self._expected = key.encode() if key else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        headers = dict(scope["headers"])
        # The client's id is logged, recorded and echoed: redacted, then reduced to safe characters, then cut.
        raw_id = headers.get(b"x-request-id", b"")[:_RAW_ID_BYTES].decode("latin-1")
        request_id = client_request_id(raw_id) or secrets.token_hex(16)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        path = scope["path"]
        status_box = [500]
        started = [False]
        metrics = self.ctx.metrics

        sent_at = [0.0]  # when the last body byte went out: work after it (recording) is not latency

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                started[0] = True
                status_box[0] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                sent_at[0] = time.perf_counter()

        metrics.in_flight.inc()
        try:
            # Host and Origin first: a page re-resolving its own name to this machine learns nothing, not
            # even whether a key is needed.
            error = self.hosts.check(headers.get(b"host"), headers.get(b"origin")) or self._reject(path, headers)
            if error is not None:
                await _send_error(send_wrapper, error)
            else:
                await self.app(scope, self._capped(receive), send_wrapper)
        except asyncio.CancelledError:
            # uvicorn cancels requests still running when the shutdown grace period ends. Tell the client
            # why, in OpenAI's shape, instead of uvicorn's plain-text 500, and let the task end quietly:
            # it is being torn down either way.
            state["error"] = "cancelled: shutdown grace period exceeded"
            if started[0]:
                status_box[0] = 499 if status_box[0] == 200 else status_box[0]
                return
            status_box[0] = 503
            await _send_error(send_wrapper, shutting_down())
        except Exception as exc:
            # A bug below us. Answered here rather than by Starlette's outermost ServerErrorMiddleware so the
            # 500 carries the request id and is counted; the traceback goes to our log, never to the client.
            log.error("unhandled_error", request_id=request_id, path=path, error=repr(exc), exc_info=exc)
            state["error"] = repr(exc)
            if started[0]:
                raise  # the response already started: the server can only drop the connection
            await _send_error(send_wrapper, internal_error())
        finally:
            metrics.in_flight.dec()
            elapsed = (sent_at[0] or time.perf_counter()) - t0
            label = metrics.path_label(path)
            metrics.requests.labels(label, str(status_box[0])).inc()
            metrics.latency.labels(label).observe(elapsed)
            self._log(scope, state, status_box[0], elapsed * 1000.0)

    def _reject(self, path: str, headers: dict[bytes, bytes]) -> ApiError | None:
        if self._expected is not None and needs_auth(path):
            # The scheme is case-insensitive (RFC 9110); the token is compared in constant time.
            scheme, _, token = headers.get(b"authorization", b"").strip().partition(b" ")
            valid = hmac.compare_digest(token.strip(), self._expected)
            if scheme.lower() != b"bearer" or not valid:
                return ApiError(
                    401,
                    "missing or invalid api key: send 'Authorization: Bearer <key>'",
                    code="invalid_api_key",
                    headers={"www-authenticate": "Bearer"},
                )
        length = headers.get(b"content-length")
        limit = self.ctx.settings.server.max_request_bytes
        if length is not None:
            try:
                if int(length) > limit:
                    return BodyTooLarge(limit)
            except ValueError:
                return ApiError(400, "invalid Content-Length header")
        return None

    def _capped(self, receive: Receive) -> Receive:
        limit = self.ctx.settings.server.max_request_bytes
        seen = 0

        async def capped_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        return capped_receive

    def _log(self, scope: Scope, state: dict[str, Any], status: int, total_ms: float) -> None:
        path = scope["path"]
        if path in ("/health", "/metrics", "/v1/ghost/now") and status < 400:
            return  # probes, and an open status page refreshing every 5 s, would drown the log
        turn = state.get("turn")
        fields: dict[str, Any] = {
            "request_id": state["request_id"],
            "method": scope["method"],
            "path": path,
            "status": status,
            "total_ms": round(total_ms, 3),
        }
        if turn is not None:
            timings = turn.timings
            if status < 400:
                self.ctx.replies.note(ms=total_ms, ttft_ms=timings.get("ttft"), usage=turn.usage, path=path)
            fields.update(
                stream=turn.stream,
                model=turn.body.get("model"),
                queue_ms=round(timings.get("queue", 0.0), 3),
                ttft_ms=round(timings["ttft"], 3) if "ttft" in timings else None,
                finish_reason=turn.finish_reason,
                usage=turn.usage,
            )
        if "error" in state:
            fields["error"] = state["error"]
        (log.warning if status >= 500 else log.info)("request", **fields)


async def _send_error(send: Send, error: ApiError) -> None:
    payload = orjson.dumps(error.body())
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (error.headers or {}).items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": False})
