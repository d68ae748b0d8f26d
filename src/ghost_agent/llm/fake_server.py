"""A scripted OpenAI-compatible server on a loopback port: the fake upstream for tests and benchmarks.

It is a bare ASGI app (no framework) so that, as the "direct" side of the proxy-overhead benchmark, it
costs as little as a fast real server would. Control endpoints let a test in another process script it:
`POST /_script` (a JSON list of ScriptedReply objects), `GET /_requests`, `POST /_reset`.

    python -m ghost_agent.llm.fake_server --port 8080 [--script replies.json] [--default echo|error]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import orjson

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_JSON_HEADERS = [(b"content-type", b"application/json")]
_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


class FakeOpenAIServer:
    """ASGI app serving `/v1/chat/completions`, `/v1/completions`, `/v1/embeddings` and `/v1/models` from a
    ScriptedBackend (every request recorded in `backend.requests`)."""

    def __init__(self, backend: ScriptedBackend | None = None) -> None:
        self.backend = backend or ScriptedBackend()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        body = await _read_body(receive)
        if path == "/v1/chat/completions" and method == "POST":
            await self._chat(body, receive, send)
        elif path == "/v1/completions" and method == "POST":
            await self._chat(body, receive, send, legacy=True)
        elif path == "/v1/embeddings" and method == "POST":
            await self._embeddings(body, send)
        elif path == "/v1/models":
            entry: dict[str, Any] = {"id": self.backend.model, "object": "model", "created": 0, "owned_by": "fake"}
            if self.backend.context_tokens is not None:
                entry["max_model_len"] = self.backend.context_tokens  # as vLLM reports it
            data = [entry]
            await _json(send, 200, {"object": "list", "data": data})
        elif path == "/health":
            await _json(send, 200, {"status": "ok"})
        elif path == "/_script" and method == "POST":
            try:
                replies = [ScriptedReply.from_dict(r) for r in orjson.loads(body)]
            except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
                await _json(send, 400, _error(f"bad script: {exc}"))
                return
            self.backend.enqueue(*replies)
            await _json(send, 200, {"pending": self.backend.pending})
        elif path == "/_requests":
            await _json(send, 200, self.backend.requests)
        elif path == "/_reset" and method == "POST":
            self.backend.reset()
            await _json(send, 200, {"pending": 0})
        else:
            await _json(send, 404, _error(f"no route {method} {path}"))

    async def _embeddings(self, raw: bytes, send: Send) -> None:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            await _json(send, 400, _error("invalid JSON body"))
            return
        try:
            result = await self.backend.embeddings(body)
        except BackendError as exc:
            await _backend_error(send, exc)
            return
        await _json(send, 200, result)

    async def _chat(self, raw: bytes, receive: Receive, send: Send, *, legacy: bool = False) -> None:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            await _json(send, 400, _error("invalid JSON body"))
            return
        if not isinstance(body, dict):
            await _json(send, 400, _error("the body must be a JSON object"))
            return
        # Like a real server, stop generating when the client goes away, whether it waits for a whole
        # completion or for the next chunk (the daemon must make that happen).
        work = asyncio.ensure_future(self._reply(body, send, legacy=legacy))
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            work.cancel()
            await asyncio.gather(work, watcher, return_exceptions=True)
        error = None if work.cancelled() else work.exception()
        if error is not None:
            raise error  # a bug of ours: let uvicorn log it

    async def _reply(self, body: dict[str, Any], send: Send, *, legacy: bool = False) -> None:
        backend = self.backend
        if not body.get("stream"):
            try:
                result = await (backend.text_completion(body) if legacy else backend.complete(body))
            except BackendError as exc:
                await _backend_error(send, exc)
                return
            await _json(send, 200, result)
            return
        chunks = backend.text_completion_stream(body) if legacy else backend.stream(body)
        try:
            try:
                first: dict[str, Any] | None = await anext(chunks)
            except BackendError as exc:
                await _backend_error(send, exc)
                return
            except StopAsyncIteration:
                first = None
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            try:
                if first is not None:
                    await _event(send, first)
                    async for item in chunks:
                        await _event(send, item)
                await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})
            except BackendError as exc:
                # A real server reports a mid-stream failure as an error event, then ends the response.
                await _event(send, _error(exc.message))
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_upstream_error", "param": None, "code": None}}


async def _backend_error(send: Send, exc: BackendError) -> None:
    headers = {"retry-after": str(max(1, round(exc.retry_after)))} if exc.retry_after is not None else None
    await _json(send, exc.status, _error(exc.message), headers)


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _read_body(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(parts)


async def _json(send: Send, status: int, obj: Any, extra_headers: dict[str, str] | None = None) -> None:
    payload = orjson.dumps(obj)
    headers = [*_JSON_HEADERS, (b"content-length", str(len(payload)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra_headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": False})


async def _event(send: Send, obj: Any) -> None:
    await send({"type": "http.response.body", "body": b"data: " + orjson.dumps(obj) + b"\n\n", "more_body": True})


def free_port() -> int:
    """An unused loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, port: int | None = None, **uvicorn_kwargs: Any) -> Iterator[str]:
    """Run an ASGI app under a real uvicorn on 127.0.0.1 in a background thread; yields its base URL."""
    import uvicorn

    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **uvicorn_kwargs
    )
    server = uvicorn.Server(config)
    # uvicorn installs signal handlers only when running on the main thread, so a thread is safe.
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"server on port {port} failed to start")
            threading.Event().wait(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main(argv: list[str] | None = None) -> int:
    """Run the fake upstream until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m ghost_agent.llm.fake_server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--script", help="JSON file: a list of ScriptedReply objects")
    parser.add_argument("--default", choices=("echo", "error"), default="echo")
    parser.add_argument("--model", default="scripted")
    args = parser.parse_args(argv)
    backend = ScriptedBackend(default=args.default, model=args.model)
    if args.script:
        with open(args.script, "rb") as fh:
            backend.enqueue(*(ScriptedReply.from_dict(r) for r in orjson.loads(fh.read())))
    import uvicorn

    print(f"fake upstream listening on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    uvicorn.run(
        FakeOpenAIServer(backend), host=args.host, port=args.port, log_level="warning", access_log=False
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
