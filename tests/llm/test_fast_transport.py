"""FastAsyncTransport against tiny asyncio HTTP servers on 127.0.0.1 whose replies each test writes by hand."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.fast_transport import FastAsyncTransport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "RawServer"], Awaitable[None]]


class RawServer:
    """An asyncio TCP server on a loopback port; `handler(reader, writer, server)` runs per connection.

    It counts accepted connections and keeps every request head it read (via `read_request`).
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []  # (head, body)
        self.url = ""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(reader, writer, self)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a handler cancelled at shutdown must end quietly: asyncio logs cancelled client tasks
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def read_request(self, reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
        """One request (head, Content-Length body), or None when the client closed the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = await reader.readexactly(length) if length else b""
        self.requests.append((head, body))
        return head, body

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()


def ok(body: bytes = b"hello", *, extra: bytes = b"") -> bytes:
    """A complete Content-Length response."""
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def serve_ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
    """Answer every request on the connection with `ok()` (keep-alive)."""
    while await server.read_request(reader) is not None:
        writer.write(ok())
        await writer.drain()


@contextlib.asynccontextmanager
async def fast_client(max_connections: int = 4, timeout: float = 2.0) -> AsyncIterator[httpx.AsyncClient]:
    transport = FastAsyncTransport(max_connections=max_connections)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
        yield client


async def test_content_length_response_and_request_body() -> None:
    async with RawServer(serve_ok) as server, fast_client() as client:
        response = await client.post(f"{server.url}/v1/x?q=1", content=b'{"a": 1}')
        assert response.status_code == 200
        assert response.content == b"hello"
        assert response.headers["content-length"] == "5"
    head, body = server.requests[0]
    assert head.startswith(b"POST /v1/x?q=1 HTTP/1.1\r\n")
    assert b"content-length: 8\r\n" in head.lower()
    assert body == b'{"a": 1}'


async def test_chunked_response() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nX-Test: yes\r\n\r\n")
        writer.write(b"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n")
        await writer.drain()
        await server.read_request(reader)

    async with RawServer(handler) as server, fast_client() as client:
        response = await client.get(f"{server.url}/")
    assert response.status_code == 201
    assert response.headers["x-test"] == "yes"
    assert response.content == b"hello, world"


async def test_response_delimited_by_connection_close() -> None:
    # No Content-Length, not chunked: HTTP/1.1 says the body runs until the server closes the connection
    # (what minimal HTTP/1.0-style SSE servers do).
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nuntil ")
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(b"the end")
        await writer.drain()

    async with RawServer(handler) as server, fast_client() as client:
        response = await client.get(f"{server.url}/")
        assert response.content == b"until the end"
        again = await client.get(f"{server.url}/")  # the closed connection was not pooled
        assert again.content == b"until the end"
    assert server.connections == 2


async def test_keep_alive_reuses_one_connection() -> None:
    async with RawServer(serve_ok) as server, fast_client() as client:
        for _ in range(5):
            response = await client.get(f"{server.url}/")
            assert response.content == b"hello"
    assert server.connections == 1
    assert len(server.requests) == 5


async def test_connection_close_header_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(ok(extra=b"Connection: close\r\n"))
        await writer.drain()

    async with RawServer(handler) as server, fast_client() as client:
        for _ in range(3):
            assert (await client.get(f"{server.url}/")).content == b"hello"
    assert server.connections == 3


async def test_server_closing_idle_connection_between_requests() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(ok())  # keep-alive by default, but the server closes the idle connection right away
        await writer.drain()

    async with RawServer(handler) as server, fast_client() as client:
        assert (await client.get(f"{server.url}/")).content == b"hello"
        await asyncio.sleep(0.05)  # the close reaches the client while the connection sits in the pool
        assert (await client.get(f"{server.url}/")).content == b"hello"
    assert server.connections == 2


async def test_server_closing_reused_connection_without_answering_is_retried_once() -> None:
    # The race the pool cannot see coming: the server drops the idle connection just as it is reused.
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(ok())
        await writer.drain()
        if server.connections == 1:
            await server.read_request(reader)  # read the reused request, then hang up without a byte

    async with RawServer(handler) as server, fast_client() as client:
        assert (await client.get(f"{server.url}/")).content == b"hello"
        assert (await client.get(f"{server.url}/")).content == b"hello"
    assert server.connections == 2
    assert len(server.requests) == 3


async def test_partial_answer_on_reused_connection_is_not_retried() -> None:
    # Once the server sent part of a response it has processed the request: replaying it is unsafe.
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(ok())
        await writer.drain()
        if server.connections == 1:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-")
            await writer.drain()
        else:
            await server.read_request(reader)

    async with RawServer(handler) as server, fast_client() as client:
        assert (await client.get(f"{server.url}/")).content == b"hello"
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(f"{server.url}/")
    assert server.connections == 1
    assert len(server.requests) == 2


async def test_connection_refused_is_connect_error() -> None:
    async with fast_client() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{free_port()}/")


async def test_read_timeout_waiting_for_the_head() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        await asyncio.sleep(10)

    async with RawServer(handler) as server, fast_client(timeout=0.2) as client:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(httpx.ReadTimeout):
            await client.get(f"{server.url}/")
        assert loop.time() - t0 < 1.0


async def test_read_timeout_between_body_chunks() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        await writer.drain()
        await asyncio.sleep(10)

    async with RawServer(handler) as server, fast_client(timeout=0.2) as client:
        async with client.stream("GET", f"{server.url}/") as response:
            assert response.status_code == 200
            parts = []
            with pytest.raises(httpx.ReadTimeout):
                async for part in response.aiter_raw():
                    parts.append(part)
    assert parts == [b"abc"]


async def test_streaming_body_arrives_incrementally() -> None:
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
        await writer.drain()
        await release.wait()  # the second chunk is only sent once the client proved it got the first
        writer.write(b"7\r\nsecond\n\r\n0\r\n\r\n")
        await writer.drain()
        await server.read_request(reader)

    async with RawServer(handler) as server, fast_client() as client:
        async with client.stream("GET", f"{server.url}/") as response:
            lines = response.aiter_lines()
            assert await asyncio.wait_for(anext(lines), 2) == "first"
            release.set()
            assert await asyncio.wait_for(anext(lines), 2) == "second"


async def test_large_body_with_flow_control() -> None:
    body = bytes(range(256)) * (3 * 4096)  # 3 MiB, past the transport's pause-reading mark

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        while await server.read_request(reader) is not None:
            writer.write(ok(body))
            await writer.drain()

    async with RawServer(handler) as server, fast_client() as client:
        async with client.stream("GET", f"{server.url}/") as response:
            await asyncio.sleep(0.1)  # let the server fill our buffer while nobody reads
            received = b"".join([part async for part in response.aiter_raw()])
        assert received == body
        assert (await client.get(f"{server.url}/")).content == body  # the paused connection was reusable
    assert server.connections == 1


@pytest.mark.parametrize(
    "reply",
    [b"garbage\r\n\r\n", b"HTTP/1.1 abc OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"],
    ids=["not-http", "bad-status", "bad-length"],
)
async def test_malformed_http_is_remote_protocol_error(reply: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(reply)
        await writer.drain()
        await server.read_request(reader)

    async with RawServer(handler) as server, fast_client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(f"{server.url}/")


async def test_connection_dropped_mid_body() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()

    async with RawServer(handler) as server, fast_client() as client:
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            await client.get(f"{server.url}/")


async def test_pool_slots_are_released_after_errors() -> None:
    mode = {"fail": True}

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        while await server.read_request(reader) is not None:
            if mode["fail"]:
                writer.write(b"not http at all\r\n\r\n")
                await writer.drain()
                return
            writer.write(ok())
            await writer.drain()

    async def hangs(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.read_request(reader)
        await asyncio.sleep(10)

    timeout = httpx.Timeout(0.2, pool=0.5)
    # generous timeouts where the test only needs success: a loaded CI box must not turn them into failures
    # (a leaked slot still shows, as a PoolTimeout after 2 s)
    relaxed = httpx.Timeout(2.0, pool=2.0)
    async with RawServer(handler) as server, RawServer(hangs) as slow, fast_client(2, 2.0) as client:
        refused = f"http://127.0.0.1:{free_port()}/"
        for _ in range(3):  # each failure kind more often than there are slots
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(f"{server.url}/")
            with pytest.raises(httpx.ConnectError):
                await client.get(refused)
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"{slow.url}/", timeout=timeout)
        mode["fail"] = False
        for _ in range(3):  # a stream abandoned halfway must give its slot back too
            async with client.stream("GET", f"{server.url}/") as response:
                assert response.status_code == 200
        results = await asyncio.gather(*(client.get(f"{server.url}/", timeout=relaxed) for _ in range(6)))
        assert [r.content for r in results] == [b"hello"] * 6


async def test_pool_limit_bounds_concurrent_connections() -> None:
    inside = 0
    peak = 0
    two_inside = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        nonlocal inside, peak
        while await server.read_request(reader) is not None:
            inside += 1
            peak = max(peak, inside)
            if inside == 2:
                two_inside.set()
            with contextlib.suppress(TimeoutError):  # hold each request until the pool is full
                await asyncio.wait_for(two_inside.wait(), 2)
            await asyncio.sleep(0.01)
            inside -= 1
            writer.write(ok())
            await writer.drain()

    async with RawServer(handler) as server, fast_client(max_connections=2) as client:
        results = await asyncio.gather(*(client.get(f"{server.url}/") for _ in range(8)))
    assert all(r.status_code == 200 for r in results)
    assert peak == 2
    assert server.connections == 2


async def test_closed_transport_refuses_requests() -> None:
    async with RawServer(serve_ok) as server:
        transport = FastAsyncTransport()
        client = httpx.AsyncClient(transport=transport)
        assert (await client.get(f"{server.url}/")).status_code == 200
        await client.aclose()
        with pytest.raises(httpx.ConnectError):
            await transport.handle_async_request(httpx.Request("GET", f"{server.url}/"))
