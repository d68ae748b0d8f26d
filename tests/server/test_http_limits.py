"""A huge or slow request can't exhaust the daemon: header size and count, request-line length, body size and
the head's and body's arrival times are limited before auth, answered 431 / 414 / 413 / 408, against a real
daemon on a loopback port with raw sockets (httpx would not send such requests)."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import daemon_on_port, make_settings

KEY = "a-long-enough-test-key"


@contextmanager
def connect(url: str) -> Iterator[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        yield conn


def read_reply(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read until the server closes; the status, headers and body of the (first) reply. (0, {}, b"") when the
    server closed without a word."""
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    if not data:
        return 0, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, body


def send_all(conn: socket.socket, data: bytes) -> None:
    """Send, tolerating the server closing first (it refuses as soon as a limit is passed)."""
    try:
        conn.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def error_code(body: bytes) -> str:
    return str(orjson.loads(body)["error"]["code"])


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[str, ScriptedBackend]]:
    backend = ScriptedBackend(replies=[ScriptedReply(content="fine") for _ in range(4)])
    settings = make_settings(tmp_path, api_key=KEY, header_timeout_s=0.5, body_timeout_s=0.5)
    with daemon_on_port(settings, backend) as url:
        yield url, backend


def test_an_oversized_header_is_refused_before_auth(keyed: tuple[str, ScriptedBackend]) -> None:
    url, backend = keyed
    with connect(url) as conn:
        # No key, and a 40 KB cookie: the limit (32 KiB) answers, not auth, and the daemon stops reading.
        send_all(conn, b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\nCookie: " + b"a" * 40_000 + b"\r\n\r\n")
        status, headers, body = read_reply(conn)
    assert status == 431 and error_code(body) == "headers_too_large"
    assert headers["connection"] == "close"
    assert orjson.loads(body)["error"]["type"] == "invalid_request_error"
    # A header that never ends: the 431 comes back while the client is still sending (the daemon stopped
    # keeping what it reads at the limit; the bench measures the memory).
    with connect(url) as conn:
        send_all(conn, b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
        reply = b""
        for _ in range(400):  # up to 25 MB, in 64 KB writes
            try:
                conn.sendall(b"b" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                break
            if select.select([conn], [], [], 0)[0]:
                reply = conn.recv(65536)
                break
    assert reply.startswith(b"HTTP/1.1 431")
    assert backend.requests == []


def test_too_many_headers_and_a_long_request_line(keyed: tuple[str, ScriptedBackend]) -> None:
    url, _ = keyed
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(150))
    with connect(url) as conn:
        send_all(conn, b"GET /health HTTP/1.1\r\nHost: localhost\r\n" + fields + b"\r\n")
        status, _, body = read_reply(conn)
    assert status == 431 and error_code(body) == "too_many_headers"
    with connect(url) as conn:
        send_all(conn, b"GET /health?q=" + b"x" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, _, body = read_reply(conn)
    assert status == 414 and error_code(body) == "uri_too_long"


def test_an_announced_or_streamed_oversized_body_is_refused_before_auth(keyed: tuple[str, ScriptedBackend]) -> None:
    url, backend = keyed
    with connect(url) as conn:
        send_all(conn, b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 5000000\r\n\r\n{")
        status, _, body = read_reply(conn)
    assert status == 413 and error_code(body) == "request_too_large"
    # Chunked, so no length is announced: the bytes themselves pass the 4 MiB limit.
    with connect(url) as conn:
        send_all(conn, b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY.encode()
                 + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
        for _ in range(80):  # 5 MiB
            send_all(conn, chunk)
        status, _, body = read_reply(conn)
    assert status == 413 and error_code(body) == "request_too_large"
    assert backend.requests == []


def test_a_slow_head_a_silent_connection_and_a_trickled_body_are_closed(keyed: tuple[str, ScriptedBackend]) -> None:
    url, backend = keyed
    started = time.monotonic()
    with connect(url) as conn:  # slowloris: a header line every 0.2 s, never the blank line
        send_all(conn, b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
        status = None
        for i in range(50):
            time.sleep(0.2)
            try:
                conn.sendall(b"X-Slow-%d: 1\r\n" % i)
            except (BrokenPipeError, ConnectionResetError):
                break
        status, _, body = read_reply(conn)
    assert status == 408 and error_code(body) == "header_timeout"
    assert time.monotonic() - started < 5
    with connect(url) as conn:  # connects and sends nothing: closed without a reply
        status, _, _ = read_reply(conn)
    assert status == 0
    with connect(url) as conn:  # a body trickled one byte every 0.2 s
        send_all(conn, b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY.encode()
                 + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
        for _ in range(50):
            time.sleep(0.2)
            try:
                conn.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                break
        status, _, body = read_reply(conn)
    assert status == 408 and error_code(body) == "body_timeout"
    assert backend.requests == []


def test_ordinary_requests_and_keep_alive_are_untouched(keyed: tuple[str, ScriptedBackend]) -> None:
    url, backend = keyed
    payload = orjson.dumps({"messages": [{"role": "user", "content": "hello " * 1000}]})
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY.encode()
               + b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(payload)).encode()
               + b"\r\n\r\n" + payload)
    with connect(url) as conn:
        conn.sendall(request)
        first = conn.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        # Idle on a kept-alive connection for longer than the head timeout: the clock starts at the next
        # request's first byte, not when the reply ended.
        time.sleep(1.0)
        conn.sendall(b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY.encode()
                     + b"\r\nConnection: close\r\n\r\n")
        status, _, _ = read_reply(conn)
    assert status == 200
    assert len(backend.requests) == 1


def test_refusals_are_counted(keyed: tuple[str, ScriptedBackend]) -> None:
    url, _ = keyed
    with connect(url) as conn:
        send_all(conn, b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 40_000 + b"\r\n\r\n")
        assert read_reply(conn)[0] == 431
    with connect(url) as conn:
        send_all(conn, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY.encode()
                 + b"\r\nConnection: close\r\n\r\n")
        status, _, body = read_reply(conn)
    assert status == 200
    assert b'ghost_http_refused_total{reason="headers_too_large"} 1.0' in body
