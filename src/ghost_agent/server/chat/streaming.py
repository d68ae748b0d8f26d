"""Server-sent events for streamed completions, and cancelling work when the client goes away."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, MutableMapping
from typing import Any, TypeVar

import orjson
from starlette.responses import Response

from ghost_agent.agent.turn import ClientDisconnected
from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger
from ghost_agent.server.errors import error_body, internal_error

T = TypeVar("T")
Message = dict[str, Any]
# ASGI's own types, as Starlette spells them.
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
DONE = b"data: [DONE]\n\n"
KEEPALIVE = b": keep-alive\n\n"

log = get_logger("server")


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def run_until_disconnect(receive: Receive, coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro`, cancelling it (and raising ClientDisconnected) if the client disconnects first."""
    work = asyncio.ensure_future(coro)
    watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
    try:
        await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        # Wait for the work to unwind, so that whoever cleans up next (closing the chunk source) does not
        # find it still running.
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        raise
    finally:
        watcher.cancel()
    if work.done():
        return work.result()
    work.cancel()
    await asyncio.gather(work, return_exceptions=True)
    raise ClientDisconnected


def sse_event(obj: Any) -> bytes:
    """One `data:` event."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"


class SSEResponse(Response):
    """An ASGI response streaming chat chunks as OpenAI does, ending with `data: [DONE]`.

    The first chunk was pulled before the response started, so errors before any byte become real HTTP
    statuses. A disconnect cancels the chunk source at once (not at the next write), which closes the
    upstream request. `on_close(error)` runs exactly once after the stream ends, however it ends. While the
    source has nothing to send for `keepalive_s` (an agent turn running its checks), an SSE comment goes out
    so proxies and client read timeouts keep the connection; clients ignore comments.
    """

    def __init__(
        self,
        first: Message | None,
        rest: AsyncIterator[Message],
        *,
        include_usage: bool,
        extra_headers: list[tuple[bytes, bytes]],
        on_close: Callable[[BaseException | None], Awaitable[None]],
        keepalive_s: float = 0.0,
    ) -> None:
        # Response.__init__ would render a body; this response writes its own messages instead.
        self.status_code = 200
        self.background = None
        self.first = first
        self.rest = rest
        self.include_usage = include_usage
        self.extra_headers = extra_headers
        self.on_close = on_close
        self.keepalive_s = keepalive_s
        self._context: contextvars.Context | None = None

    def _client_view(self, item: Message) -> Message | None:
        """Withhold usage the client did not ask for (the backend is always asked, for our metrics)."""
        if self.include_usage or "usage" not in item:
            return item
        if not item.get("choices"):
            return None
        return {k: v for k, v in item.items() if k != "usage"}

    async def _send_item(self, send: Send, item: Message) -> None:
        view = self._client_view(item)
        if view is not None:
            await send({"type": "http.response.body", "body": sse_event(view), "more_body": True})

    async def _pump(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *self.extra_headers]})
        if self.first is not None:
            await self._send_item(send, self.first)
            while True:
                # Only failures of the chunk source are reported in-band; a failing send means the client left.
                try:
                    item = await self._next(send)
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    # Headers are out: the failure can only be reported in-band, as OpenAI does.
                    if isinstance(exc, BackendError):
                        body = error_body(exc.message, exc.type, exc.param, exc.code)
                    else:
                        body = internal_error().body()  # a bug of ours: no details to the client
                    await send({"type": "http.response.body", "body": sse_event(body), "more_body": False})
                    raise
                await self._send_item(send, item)
        await send({"type": "http.response.body", "body": DONE, "more_body": False})

    async def _pull(self) -> Message:
        return await anext(self.rest)

    async def _next(self, send: Send) -> Message:
        """The next chunk, sending keep-alive comments while it takes longer than `keepalive_s`."""
        if self.keepalive_s <= 0:
            return await anext(self.rest)
        # Each pull runs as its own task (so the wait can time out without cancelling it), all in one context,
        # so context variables the chunk source sets persist from one pull to the next.
        if self._context is None:
            self._context = contextvars.copy_context()
        pending = asyncio.get_running_loop().create_task(self._pull(), context=self._context)
        try:
            while True:
                done, _ = await asyncio.wait({pending}, timeout=self.keepalive_s)
                if done:
                    return pending.result()
                await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
        finally:
            if not pending.done():
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        error: BaseException | None = None
        state = scope.setdefault("state", {})
        try:
            await run_until_disconnect(receive, self._pump(send))
        except BackendError as exc:
            error = exc
            state["error"] = exc.message
        except (ClientDisconnected, OSError) as exc:
            error = ClientDisconnected() if isinstance(exc, OSError) else exc
            state["error"] = "client disconnected"
        except asyncio.CancelledError as exc:
            error = exc
            raise
        except Exception as exc:
            # Already reported in-band and the response is complete: log it rather than make the server
            # drop the connection.
            error = exc
            state["error"] = repr(exc)
            log.error("unhandled_error", request_id=state.get("request_id"), error=repr(exc), exc_info=exc)
        finally:
            aclose = getattr(self.rest, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except (BackendError, RuntimeError):
                    pass
            await self.on_close(error)
