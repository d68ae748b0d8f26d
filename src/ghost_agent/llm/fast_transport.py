"""A lean HTTP/1.1 keep-alive transport for `httpx.AsyncClient`.

Why: httpx's default transport (httpcore + h11 + anyio) costs ~0.9 ms of CPU per request on our 2-core
machines, alone more than the daemon's whole overhead budget. This transport keeps httpx's client API
(timeouts, streaming responses, error types) but speaks HTTP/1.1 itself: an asyncio Protocol per
connection, the `httptools` parser (already installed with uvicorn[standard]), a per-origin idle pool.
It supports what an OpenAI upstream needs: http and https, Content-Length and chunked bodies, streaming.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httptools
import httpx

# Pause reading from the socket when this many body bytes wait unconsumed (a slow client of ours).
_HIGH_WATER = 1 << 20


class _Connection(asyncio.Protocol):
    """One TCP connection; parses responses and hands body chunks to the reader."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.error: Exception | None = None
        self._parser: Any = None
        self._waiter: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.complete = False
        self.keep_alive = True
        # No Content-Length and not chunked: the body ends when the server closes the connection.
        self.until_eof = False
        # Any byte of this response arrived: the server has seen the request, so replaying it is unsafe.
        self.received = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.paused = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment] # uvloop's transports are not subclasses

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self.complete:
            self.error = httpx.RemoteProtocolError("upstream sent bytes with no request outstanding")
            self._close()
            self._wake()
            return
        self.received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.error = httpx.RemoteProtocolError("upstream tried to upgrade the connection")
            self._close()
        except httptools.HttpParserError as exc:
            self.error = httpx.RemoteProtocolError(f"malformed HTTP from upstream: {exc}")
            self._close()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.until_eof and self.head_done and exc is None and self.error is None:
            self.complete = True  # httptools cannot be told about EOF; a clean close ends such a body
        if not self.complete and self.error is None:
            self.error = httpx.RemoteProtocolError("upstream closed the connection mid-response")
            if exc is not None:
                self.error = httpx.ReadError(f"upstream connection lost: {exc!r}")
        self._wake()

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self._parser.get_status_code()
        self.keep_alive = self._parser.should_keep_alive()
        names = {name.lower() for name, _ in self.headers}
        self.until_eof = (
            b"content-length" not in names
            and b"transfer-encoding" not in names
            and self.status >= 200
            and self.status not in (204, 304)
        )
        if self.until_eof:
            self.keep_alive = False
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > _HIGH_WATER and self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        self.complete = True

    # -- used by the transport
    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def _wait(self, timeout: float | None) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._waiter
        except TimeoutError:
            raise httpx.ReadTimeout("upstream read timed out") from None
        finally:
            self._waiter = None

    def start(self, payload: bytes) -> None:
        """Send one request; the connection now expects its response."""
        assert self.transport is not None
        self._reset()
        self._parser = httptools.HttpResponseParser(self)
        self.transport.write(payload)

    async def read_head(self, timeout: float | None) -> None:
        while not self.head_done:
            if self.error is not None:
                raise self.error
            await self._wait(timeout)

    async def read_chunk(self, timeout: float | None) -> bytes | None:
        """The next body chunk, or None at the end of the message."""
        while True:
            if self.chunks:
                chunk = self.chunks.popleft()
                self.buffered -= len(chunk)
                if self.paused and self.buffered < _HIGH_WATER // 2 and self.transport is not None:
                    self.paused = False
                    self.transport.resume_reading()
                return chunk
            if self.complete:
                return None
            if self.error is not None:
                raise self.error
            await self._wait(timeout)

    @property
    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.closed and self.error is None


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(self, transport: FastAsyncTransport, key: tuple[str, str, int], conn: _Connection,
                 timeout: float | None) -> None:
        self._transport = transport
        self._key = key
        self._conn = conn
        self._timeout = timeout
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await self._conn.read_chunk(self._timeout)
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._transport._release(self._key, self._conn)


class FastAsyncTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive transport with a bounded per-process connection count."""

    def __init__(self, *, max_connections: int = 256, ssl_context: ssl.SSLContext | None = None) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._slots = asyncio.Semaphore(max_connections)
        self._ssl = ssl_context
        self._closed = False

    async def _connect(self, key: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        context: ssl.SSLContext | None = None
        if scheme == "https":
            context = self._ssl or ssl.create_default_context()
        try:
            async with asyncio.timeout(timeout):
                _, protocol = await loop.create_connection(_Connection, host, port, ssl=context)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}") from None
        return protocol

    def _checkout(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
        return None

    def _release(self, key: tuple[str, str, int], conn: _Connection) -> None:
        if conn.reusable and not self._closed:
            self._idle.setdefault(key, []).append(conn)
        else:
            conn._close()
        self._slots.release()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.ConnectError("transport is closed")
        url = request.url
        scheme = url.scheme
        key = (scheme, url.host, url.port or (443 if scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()
        target = url.raw_path
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode(), target)]
        has_length = False
        for name, value in request.headers.raw:
            lower = name.lower()
            if lower == b"content-length":
                has_length = True
            elif lower == b"transfer-encoding":
                continue  # the body is already read: always sent with Content-Length
            head.append(name + b": " + value + b"\r\n")
        if not has_length and (body or request.method in ("POST", "PUT", "PATCH")):
            head.append(b"content-length: %d\r\n" % len(body))
        payload = b"".join(head) + b"\r\n" + body

        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no free upstream connection in time") from None
        try:
            conn = self._checkout(key)
            reused = conn is not None
            if conn is None:
                conn = await self._connect(key, timeouts.get("connect"))
            conn.start(payload)
            try:
                await conn.read_head(timeouts.get("read"))
            except (httpx.RemoteProtocolError, httpx.ReadError):
                if not reused or conn.received:
                    raise
                # An idle keep-alive connection the server closed as we reused it, before answering a byte:
                # nothing was processed, so one retry on a fresh connection is safe.
                conn._close()
                conn = await self._connect(key, timeouts.get("connect"))
                conn.start(payload)
                await conn.read_head(timeouts.get("read"))
        except BaseException:
            if "conn" in locals() and conn is not None:
                conn._close()
            self._slots.release()
            raise
        return httpx.Response(
            conn.status,
            headers=conn.headers,
            stream=_ResponseBody(self, key, conn, timeouts.get("read")),
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def aclose(self) -> None:
        self._closed = True
        for conns in self._idle.values():
            for conn in conns:
                conn._close()
        self._idle.clear()
