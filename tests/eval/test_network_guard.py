"""The egress guard: loopback works, everything else is refused - from any thread, nested, restored on exit.

Safety: no test here can send a packet off the machine even if the guard were broken. Every in-process attempt
at a forbidden destination runs with a `Sentinel` installed *underneath* the guard (the guard wraps whatever the
socket module holds when it is entered, so a call that slipped past the guard reaches the sentinel, which records
it and raises before the real socket layer is touched). The one test without a sentinel runs its attempts in a
subprocess inside `unshare --net`, a network namespace with no route out. Targets are documentation addresses
only (192.0.2.1 TEST-NET-1, 2001:db8::1) and the reserved name example.com.
"""

from __future__ import annotations

import asyncio
import http.server
import ipaddress
import json
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.eval.network_guard import (
    NetworkEgressError,
    guard_active,
    is_loopback_address,
    no_external_network,
)

TEST_NET = "192.0.2.1"  # RFC 5737 documentation address
TEST_NET6 = "2001:db8::1"  # RFC 3849 documentation address
NAME = "example.com"  # RFC 2606 reserved name

_ABSENT = object()
_MODULE_FUNCS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo",
                 "create_connection")
_METHODS = ("connect", "connect_ex", "sendto", "sendmsg")


def snapshot() -> dict[str, Any]:
    """The socket module's own attributes the guard touches (absent ones included, by a marker)."""
    out = {f"socket.{n}": vars(socket).get(n, _ABSENT) for n in _MODULE_FUNCS}
    out.update({f"socket.socket.{n}": vars(socket.socket).get(n, _ABSENT) for n in _METHODS})
    return out


# --- the sentinel ---------------------------------------------------------------------------------------------


class SentinelTripped(AssertionError):
    """A non-loopback attempt got past the guard (it never reaches the real socket layer)."""


def _plainly_loopback(host: Any) -> bool:
    """The sentinel's own, deliberately simple notion of loopback (independent of the code under test)."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return isinstance(host, str) and (host == "localhost" or host.startswith("127.") or host == "::1")


def _numeric(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class Sentinel:
    """Wraps the same socket entry points as the guard, *below* it: anything non-loopback that reaches it is
    recorded and refused with SentinelTripped. Numeric lookups pass (libc parses them; no query is sent)."""

    def __init__(self) -> None:
        self.tripped: list[tuple[str, Any]] = []
        self.lookups: list[Any] = []  # every host a resolver function was asked about
        self._saved: list[tuple[Any, str, Any]] = []

    def _trip(self, op: str, target: Any) -> SentinelTripped:
        self.tripped.append((op, target))
        return SentinelTripped(f"{op} {target!r} got past the guard")

    def _lookup(self, op: str, real: Callable[..., Any], *, reverse: bool = False) -> Callable[..., Any]:
        def wrapper(host: Any, *args: Any, **kwargs: Any) -> Any:
            self.lookups.append(host)
            if host is not None and not _plainly_loopback(host) and (reverse or not _numeric(host)):
                raise self._trip(op, host)
            return real(host, *args, **kwargs)
        return wrapper

    def _getnameinfo(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(sockaddr: Any, flags: int) -> Any:
            self.lookups.append(sockaddr)
            if not (flags & socket.NI_NUMERICHOST) and not _plainly_loopback(sockaddr[0]):
                raise self._trip("getnameinfo", sockaddr)
            return real(sockaddr, flags)
        return wrapper

    def _create_connection(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(address: Any, *args: Any, **kwargs: Any) -> Any:
            if not _plainly_loopback(address[0]):
                raise self._trip("create_connection", address)
            return real(address, *args, **kwargs)
        return wrapper

    def _method(self, op: str, real: Callable[..., Any], address_at: int) -> Callable[..., Any]:
        def wrapper(sock: socket.socket, *args: Any) -> Any:
            if address_at == -1:  # sendto(data, address) / sendto(data, flags, address)
                address = args[-1] if len(args) >= 2 else None
            else:
                address = args[address_at] if len(args) > address_at else None
            if address is not None and sock.family != socket.AF_UNIX and not _plainly_loopback(address[0]):
                raise self._trip(op, address)
            return real(sock, *args)
        return wrapper

    def install(self) -> None:
        plan: list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
            (socket, "getaddrinfo", lambda r: self._lookup("getaddrinfo", r)),
            (socket, "gethostbyname", lambda r: self._lookup("gethostbyname", r)),
            (socket, "gethostbyname_ex", lambda r: self._lookup("gethostbyname_ex", r)),
            (socket, "gethostbyaddr", lambda r: self._lookup("gethostbyaddr", r, reverse=True)),
            (socket, "getnameinfo", self._getnameinfo),
            (socket, "create_connection", self._create_connection),
            (socket.socket, "connect", lambda r: self._method("connect", r, 0)),
            (socket.socket, "connect_ex", lambda r: self._method("connect_ex", r, 0)),
            (socket.socket, "sendto", lambda r: self._method("sendto", r, -1)),  # (data, [flags,] address)
            (socket.socket, "sendmsg", lambda r: self._method("sendmsg", r, 3)),  # (buffers, anc, flags, address)
        ]
        for owner, name, wrap in plan:
            self._saved.append((owner, name, vars(owner).get(name, _ABSENT)))
            setattr(owner, name, wrap(getattr(owner, name)))

    def uninstall(self) -> None:
        for owner, name, previous in reversed(self._saved):
            if previous is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, previous)
        self._saved.clear()


@pytest.fixture
def sentinel() -> Iterator[Sentinel]:
    assert not guard_active(), "a guard leaked from an earlier test"
    before = snapshot()
    s = Sentinel()
    s.install()
    try:
        yield s
    finally:
        s.uninstall()
    assert snapshot() == before
    assert s.tripped == [], f"non-loopback attempts got past the guard: {s.tripped}"


# --- loopback servers -----------------------------------------------------------------------------------------


class _Greeter(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"hello\n")


class _Server4(socketserver.ThreadingTCPServer):
    daemon_threads = True


class _Server6(_Server4):
    address_family = socket.AF_INET6


class EchoServer:
    """TCP on 127.0.0.1 (or ::1): greets each connection."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.server = (_Server6 if ":" in host else _Server4)((host, 0), _Greeter)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    yield server
    server.close()


@pytest.fixture
def http_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"local ok"
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def greet(address: tuple[Any, ...], family: int = socket.AF_INET) -> bytes:
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(address)
        return s.recv(16)


# --- is_loopback_address --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "expected"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("::ffff:127.0.0.1", True),
    ("localhost", True), ("LOCALHOST.", True), (b"127.0.0.1", True),
    ("", False), ("0.0.0.0", False), ("::", False), (TEST_NET, False), (TEST_NET6, False), ("10.0.0.1", False),
    ("::ffff:192.0.2.1", False), ("localhost.example.com", False), ("foo.localhost", False), (NAME, False),
    ("127.1", False), (None, False), (2130706433, False), ("<broadcast>", False),
])
def test_is_loopback_address(host: Any, expected: bool) -> None:
    assert is_loopback_address(host) is expected


def test_the_error_is_not_an_os_error() -> None:
    # HTTP clients map OSError to retryable connection errors; a refusal must surface as itself.
    assert issubclass(NetworkEgressError, RuntimeError) and not issubclass(NetworkEgressError, OSError)


# --- behaviour inside the guard -------------------------------------------------------------------------------


def test_loopback_keeps_working(sentinel: Sentinel, echo: EchoServer, tmp_path: Path) -> None:
    with no_external_network():
        assert greet(("127.0.0.1", echo.port)) == b"hello\n"
        assert greet(("localhost", echo.port)) == b"hello\n"
        with socket.create_connection(("127.0.0.1", echo.port), timeout=5) as s:
            assert s.recv(16) == b"hello\n"
        with socket.create_connection(("localhost", echo.port), timeout=5) as s:
            assert s.recv(16) == b"hello\n"
        with socket.socket() as s:
            s.settimeout(5)
            assert s.connect_ex(("127.0.0.1", echo.port)) == 0
        infos = socket.getaddrinfo("localhost", echo.port, type=socket.SOCK_STREAM)
        assert infos and all(is_loopback_address(i[4][0]) for i in infos)
        assert socket.gethostbyname("localhost").startswith("127.")
        # UDP to loopback
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, socket.socket(socket.AF_INET,
                                                                                   socket.SOCK_DGRAM) as tx:
            rx.bind(("127.0.0.1", 0))
            rx.settimeout(5)
            tx.sendto(b"ping", rx.getsockname())
            tx.sendmsg([b"pong"], [], 0, rx.getsockname())
            assert rx.recv(8) == b"ping" and rx.recv(8) == b"pong"
        # unix sockets are local by nature
        path = str(tmp_path / "u.sock")
        with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
            server.bind(path)
            server.listen(1)
            client.connect(path)
            conn, _ = server.accept()
            conn.sendall(b"unix")
            assert client.recv(8) == b"unix"
            conn.close()


def test_ipv6_loopback_keeps_working(sentinel: Sentinel) -> None:
    try:
        server = EchoServer("::1")
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        with no_external_network():
            assert greet(("::1", server.port, 0, 0), socket.AF_INET6) == b"hello\n"
    finally:
        server.close()


def _attempts() -> list[tuple[str, Callable[[], Any]]]:
    def udp(fn: Callable[[socket.socket], Any], family: int = socket.AF_INET) -> Callable[[], Any]:
        def run() -> Any:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                return fn(s)
        return run

    def tcp(fn: Callable[[socket.socket], Any], family: int = socket.AF_INET) -> Callable[[], Any]:
        def run() -> Any:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(1)
                return fn(s)
        return run

    return [
        ("connect", tcp(lambda s: s.connect((TEST_NET, 80)))),
        ("connect_ex", tcp(lambda s: s.connect_ex((TEST_NET, 80)))),
        ("connect by name", tcp(lambda s: s.connect((NAME, 80)))),
        ("connect ipv6", tcp(lambda s: s.connect((TEST_NET6, 80, 0, 0)), socket.AF_INET6)),
        ("connect 0.0.0.0", tcp(lambda s: s.connect(("0.0.0.0", 80)))),
        ("connect mapped", tcp(lambda s: s.connect(("::ffff:192.0.2.1", 80, 0, 0)), socket.AF_INET6)),
        ("udp connect", udp(lambda s: s.connect((TEST_NET, 53)))),
        ("sendto", udp(lambda s: s.sendto(b"x", (TEST_NET, 53)))),
        ("sendto with flags", udp(lambda s: s.sendto(b"x", 0, (TEST_NET, 53)))),
        ("sendto broadcast", udp(lambda s: s.sendto(b"x", ("<broadcast>", 53)))),
        ("sendto by name", udp(lambda s: s.sendto(b"x", (NAME, 53)))),
        ("sendmsg", udp(lambda s: s.sendmsg([b"x"], [], 0, (TEST_NET, 53)))),
        ("create_connection", lambda: socket.create_connection((TEST_NET, 80), timeout=1)),
        ("create_connection by name", lambda: socket.create_connection((NAME, 80), timeout=1)),
        ("getaddrinfo", lambda: socket.getaddrinfo(NAME, 80)),
        ("getaddrinfo bytes", lambda: socket.getaddrinfo(NAME.encode(), 80)),
        ("gethostbyname", lambda: socket.gethostbyname(NAME)),
        ("gethostbyname_ex", lambda: socket.gethostbyname_ex(NAME)),
        ("gethostbyaddr", lambda: socket.gethostbyaddr(TEST_NET)),
        ("getnameinfo", lambda: socket.getnameinfo((TEST_NET, 80), 0)),
        ("getfqdn", lambda: socket.getfqdn(NAME)),
    ]


@pytest.mark.parametrize(("label", "attempt"), _attempts(), ids=[a[0] for a in _attempts()])
def test_non_loopback_is_refused(sentinel: Sentinel, label: str, attempt: Callable[[], Any]) -> None:
    with no_external_network():
        with pytest.raises(NetworkEgressError, match="egress refused"):
            attempt()
    assert sentinel.tripped == []


def test_a_hostname_is_refused_before_any_lookup(sentinel: Sentinel) -> None:
    with no_external_network():
        for fn in (lambda: socket.getaddrinfo(NAME, 443), lambda: socket.gethostbyname(NAME),
                   lambda: socket.create_connection((NAME, 443))):
            with pytest.raises(NetworkEgressError):
                fn()
        # Literal addresses resolve locally (no query exists to send) - connecting to them is what is refused.
        assert socket.getaddrinfo(TEST_NET, 80, type=socket.SOCK_STREAM)[0][4] == (TEST_NET, 80)
        assert socket.getnameinfo((TEST_NET, 80), socket.NI_NUMERICHOST | socket.NI_NUMERICSERV) == (TEST_NET, "80")
    assert NAME not in sentinel.lookups and NAME.encode() not in sentinel.lookups  # the resolver never heard of it


def test_refused_from_other_threads(sentinel: Sentinel) -> None:
    outcomes: list[str] = []

    def worker() -> None:
        for _, attempt in _attempts():
            try:
                attempt()
            except NetworkEgressError:
                outcomes.append("refused")
            except BaseException as exc:  # noqa: BLE001 - anything else is the failure this test reports
                outcomes.append(f"{type(exc).__name__}: {exc}")
            else:
                outcomes.append("ALLOWED")

    with no_external_network():
        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert outcomes == ["refused"] * (3 * len(_attempts()))


async def test_refused_on_the_event_loop_and_its_executor(sentinel: Sentinel) -> None:
    loop = asyncio.get_running_loop()
    with no_external_network():
        with pytest.raises(NetworkEgressError):
            await loop.getaddrinfo(NAME, 80)  # runs socket.getaddrinfo in the default executor's thread
        with pytest.raises(NetworkEgressError):
            await asyncio.wait_for(asyncio.open_connection(TEST_NET, 80), 5)
        with pytest.raises(NetworkEgressError):
            await asyncio.wait_for(asyncio.open_connection(NAME, 80), 5)


def test_httpx_reaches_a_loopback_server_and_nothing_else(sentinel: Sentinel, http_server: str) -> None:
    with no_external_network(), httpx.Client(trust_env=False, timeout=5) as client:
        assert client.get(f"http://{http_server}/").text == "local ok"
        port = http_server.split(":")[1]
        assert client.get(f"http://localhost:{port}/").text == "local ok"
        with pytest.raises(NetworkEgressError):
            client.get(f"http://{NAME}/")
        with pytest.raises(NetworkEgressError):
            client.get(f"http://{TEST_NET}/")


async def test_async_httpx_reaches_a_loopback_server(sentinel: Sentinel, http_server: str) -> None:
    with no_external_network():
        async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
            assert (await client.get(f"http://{http_server}/")).text == "local ok"
            with pytest.raises(NetworkEgressError):
                await client.get(f"http://{NAME}/")
            # anyio connects inside a task group: a literal address's refusal arrives wrapped in an ExceptionGroup
            with pytest.raises((NetworkEgressError, ExceptionGroup)) as caught:
                await client.get(f"http://{TEST_NET}/")
            if isinstance(caught.value, ExceptionGroup):
                assert caught.value.subgroup(NetworkEgressError) is not None


# --- lifetime: nesting, threads, restoration ------------------------------------------------------------------


def test_nesting_keeps_the_guard_until_the_outermost_exit(sentinel: Sentinel) -> None:
    installed_by_sentinel = snapshot()
    with no_external_network():
        with no_external_network():
            assert guard_active()
        assert guard_active()
        with pytest.raises(NetworkEgressError):
            socket.getaddrinfo(NAME, 80)
    assert not guard_active()
    assert snapshot() == installed_by_sentinel  # what was there before - here, the sentinel's own wrappers
    with pytest.raises(SentinelTripped):  # the guard is really gone: the sentinel is what stops this now
        socket.getaddrinfo(NAME, 80)
    sentinel.tripped.clear()


def test_the_original_functions_are_restored_even_after_an_exception(echo: EchoServer) -> None:
    before = snapshot()
    assert before["socket.socket.connect"] is _ABSENT  # inherited from _socket.socket, not set on the class
    real_getaddrinfo = socket.getaddrinfo
    with pytest.raises(ZeroDivisionError):
        with no_external_network():
            assert socket.getaddrinfo is not real_getaddrinfo
            assert "connect" in vars(socket.socket)
            assert greet(("127.0.0.1", echo.port)) == b"hello\n"
            1 / 0  # noqa: B018
    assert not guard_active()
    assert snapshot() == before
    assert socket.getaddrinfo is real_getaddrinfo and "connect" not in vars(socket.socket)
    assert socket.socket.connect is socket.SocketType.connect  # the C method again


def test_concurrent_guards_from_many_threads_share_one_installation(sentinel: Sentinel) -> None:
    before = snapshot()
    errors: list[str] = []
    barrier = threading.Barrier(6)

    def worker(i: int) -> None:
        try:
            barrier.wait(10)
            for _ in range(40):
                with no_external_network():
                    if i % 2:
                        with no_external_network():
                            pass
                    try:
                        socket.getaddrinfo(NAME, 80)
                        errors.append("allowed")
                    except NetworkEgressError:
                        pass
        except BaseException as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert not guard_active() and snapshot() == before


# --- a network namespace: no route out, whatever the guard does -----------------------------------------------

_NETNS_SCRIPT = textwrap.dedent(f"""
    import json, socket
    from ghost_agent.eval.network_guard import NetworkEgressError, guard_active, no_external_network

    out = {{}}
    s = socket.socket()
    try:
        s.connect(({TEST_NET!r}, 80))
        out["namespace"] = "ROUTED"
    except OSError as exc:
        out["namespace"] = exc.errno
    finally:
        s.close()
    before = (socket.getaddrinfo, socket.create_connection, "connect" in vars(socket.socket))
    with no_external_network():
        for name, fn in [
            ("connect", lambda: socket.socket().connect(({TEST_NET!r}, 80))),
            ("sendto", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ({TEST_NET!r}, 53))),
            ("getaddrinfo", lambda: socket.getaddrinfo({NAME!r}, 80)),
            ("create_connection", lambda: socket.create_connection(({NAME!r}, 80))),
        ]:
            try:
                fn()
                out[name] = "ALLOWED"
            except NetworkEgressError:
                out[name] = "refused"
            except Exception as exc:
                out[name] = type(exc).__name__
    after = (socket.getaddrinfo, socket.create_connection, "connect" in vars(socket.socket))
    out["restored"] = before == after and not after[2] and not guard_active()
    print(json.dumps(out))
""")


def test_inside_a_network_namespace_without_a_sentinel() -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run([unshare, "--net", "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip()[:200]}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([unshare, "--net", sys.executable, "-c", _NETNS_SCRIPT], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["namespace"] != "ROUTED"  # the namespace really has no way out (ENETUNREACH)
    assert out == {"namespace": out["namespace"], "connect": "refused", "sendto": "refused",
                   "getaddrinfo": "refused", "create_connection": "refused", "restored": True}
