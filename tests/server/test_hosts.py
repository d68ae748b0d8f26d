"""A web page can't drive the daemon: a foreign Host (DNS rebinding) or a foreign Origin is refused before
anything runs, on every route, against a real daemon on a loopback port."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.server.hosts import HostPolicy
from ghost_agent.settings import ServerSettings
from tests.conftest import daemon_on_port, make_settings


def raw_request(url: str, request: bytes) -> tuple[int, bytes]:
    """Send bytes as they are (httpx would set its own Host) and read the status line and body."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def post_chat(url: str, host: bytes, origin: bytes | None = None) -> tuple[int, bytes]:
    body = b'{"messages": [{"role": "user", "content": "hello there"}]}'
    headers = b"Host: " + host + b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
    if origin is not None:
        headers += b"\r\nOrigin: " + origin
    request = b"POST /v1/chat/completions HTTP/1.1\r\n" + headers + b"\r\nConnection: close\r\n\r\n" + body
    return raw_request(url, request)


def test_a_rebinding_page_gets_nothing_and_runs_nothing(tmp_path: Path) -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="ran it")])
    with daemon_on_port(make_settings(tmp_path), backend) as url:
        port = url.rsplit(":", 1)[1].encode()
        # What a page at attacker.example sends once its name resolves to 127.0.0.1.
        status, body = post_chat(url, b"attacker.example:" + port, b"http://attacker.example:" + port)
        assert status == 403 and b"host_not_allowed" in body
        for path in (b"/health", b"/v1/ghost/health", b"/v1/models", b"/metrics", b"/v1/ghost/status"):
            status, _ = raw_request(url, b"GET " + path + b" HTTP/1.1\r\nHost: attacker.example:" + port
                                    + b"\r\nConnection: close\r\n\r\n")
            assert status == 403, path
        assert backend.requests == []
        # The daemon's own names still work, with or without a port, and a same-host page's Origin too.
        for host in (b"127.0.0.1:" + port, b"localhost:" + port, b"[::1]:" + port, b"localhost", b"LOCALHOST."):
            status, _ = raw_request(url, b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            assert status == 200, host
        status, body = post_chat(url, b"127.0.0.1:" + port, b"http://127.0.0.1:" + port)
        assert status == 200 and b"ran it" in body


def test_a_foreign_origin_is_refused_even_with_a_good_host(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    with daemon_on_port(make_settings(tmp_path), backend) as url:
        port = url.rsplit(":", 1)[1].encode()
        for origin in (b"https://evil.example", b"null", b"file://", b"chrome-extension://abc"):
            status, body = post_chat(url, b"127.0.0.1:" + port, origin)
            assert status == 403 and b"origin_not_allowed" in body, origin
        assert backend.requests == []


def test_operator_names_and_the_bound_host_are_allowed(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, allowed_hosts="ghost.lan, Studio.Local")
    with daemon_on_port(settings, ScriptedBackend()) as url:
        for host, expected in ((b"ghost.lan", 200), (b"studio.local:8000", 200), (b"other.lan", 403)):
            status, _ = raw_request(url, b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            assert status == expected, host


@pytest.mark.parametrize(
    ("bind", "host", "allowed"),
    [
        ("127.0.0.1", "127.0.0.2:8000", True),  # all of 127/8 is loopback
        ("127.0.0.1", "10.0.0.5:8000", False),  # not this daemon's address when bound to loopback
        ("0.0.0.0", "10.0.0.5:8000", True),  # bound everywhere: any address literal is its own
        ("0.0.0.0", "[fe80::1]:8000", True),
        ("0.0.0.0", "rebind.example:8000", False),  # but never a name it was not given
        ("ghost.example", "ghost.example", True),  # the bound host by name
        ("127.0.0.1", "app.localhost:8000", True),  # browsers resolve *.localhost to loopback themselves
        ("127.0.0.1", "localhost.attacker.example", False),
        ("127.0.0.1", "", False),
    ],
)
def test_host_policy(bind: str, host: str, allowed: bool) -> None:
    assert HostPolicy(ServerSettings(host=bind)).host_allowed(host.encode()) is allowed


def test_star_turns_the_check_off_and_a_missing_host_passes() -> None:
    assert HostPolicy(ServerSettings(allowed_hosts="*")).host_allowed(b"anything.example")
    assert HostPolicy(ServerSettings(allowed_hosts="*")).origin_allowed(b"https://anything.example")
    assert HostPolicy(ServerSettings()).host_allowed(None)  # HTTP/1.0 without Host: not a browser


def test_cors_allowed_origins_pass_and_others_do_not() -> None:
    policy = HostPolicy(ServerSettings(cors_allow_origins="https://app.example.com"))
    assert policy.origin_allowed(b"https://app.example.com")
    assert policy.origin_allowed(b"http://localhost:3000")  # a page served on this machine
    assert not policy.origin_allowed(b"https://evil.example")


def test_the_check_costs_a_dict_lookup() -> None:
    policy = HostPolicy(ServerSettings())
    host, origin = b"127.0.0.1:8000", b"http://127.0.0.1:8000"
    policy.check(host, origin)
    rounds = 20_000
    start = time.perf_counter()
    for _ in range(rounds):
        policy.check(host, origin)
    per_call_ms = (time.perf_counter() - start) / rounds * 1000
    assert per_call_ms < 0.05, per_call_ms  # the budget; typically ~0.0005 ms


async def test_in_process_clients_name_localhost(tmp_path: Path) -> None:
    # The suite's in-process client (tests/conftest.py) speaks to http://localhost; a foreign base URL is refused.
    from tests.conftest import app_client

    async with app_client(make_settings(tmp_path), ScriptedBackend()) as client:
        assert (await client.get("/health")).status_code == 200
        refused = await client.get("http://ghost.example/health")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "host_not_allowed"
