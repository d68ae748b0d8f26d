"""The egress guard: while `no_external_network()` is active, this process talks to loopback only.

The eval run is wrapped in it (seed 001, "Privacy guarantees"): any attempt from any thread to connect, send a
datagram to, or look up a non-loopback destination raises `NetworkEgressError` before a packet is built. It
works by patching the `socket` module's resolver functions and `socket.socket`'s connect/send-to methods
process-wide while at least one guard is active (a counter makes it reentrant and thread-safe); the last exit
restores the exact previous attributes, also when the body raised.

Allowed: 127.0.0.0/8, ::1 (also IPv4-mapped), the name "localhost" (resolved by the system's hosts file; every
address it yields must be loopback), unix and netlink sockets. Any other hostname is refused *before* a DNS
query is made; literal IPs may be resolved (no query is needed) but not connected to. `connect_ex` raises too
rather than returning an errno a caller could ignore. The error is a RuntimeError, not an OSError, so HTTP
clients do not turn it into a retryable connection error.

Not covered (by design): child processes (model-written code runs in the sandbox, which has its own network
isolation), C extensions with their own sockets, and sockets already connected before the guard was entered.
A module that captured `socket.getaddrinfo` before entry resolves unguarded, but its connect is still checked.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ghost_agent.logging import get_logger

log = get_logger("eval.network_guard")


class NetworkEgressError(RuntimeError):
    """A non-loopback connect, send or lookup was attempted while `no_external_network()` was active."""


def _host_text(host: Any) -> str | None:
    if isinstance(host, bytes):
        try:
            host = host.decode("ascii")
        except UnicodeDecodeError:
            return None
    if not isinstance(host, str):
        return None
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text


def _is_localhost_name(host: Any) -> bool:
    text = _host_text(host)
    return text is not None and text.rstrip(".") == "localhost" and text not in ("", ".")


def _literal_ip(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = _host_text(host)
    if not text:
        return None
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_loopback_address(host: Any) -> bool:
    """True for "localhost" (any case, optional trailing dot) and literal loopback IPs: 127.0.0.0/8, ::1,
    ::ffff:127.x.y.z, bracketed IPv6 ("[::1]"). False for everything else, including "" and 0.0.0.0."""
    if _is_localhost_name(host):
        return True
    ip = _literal_ip(host)
    return ip is not None and ip.is_loopback


_lock = threading.Lock()
_depth = 0
_installed: list[tuple[Any, str, Any, Any]] = []  # (owner, attribute, previous own value or _ABSENT, wrapper)
_ABSENT = object()


def guard_active() -> bool:
    """Whether a `no_external_network()` block is active anywhere in the process."""
    return _depth > 0


def _refuse(op: str, target: Any) -> NetworkEgressError:
    log.warning("egress_refused", op=op, target=repr(target)[:200], thread=threading.current_thread().name)
    return NetworkEgressError(
        f"egress refused: {op}({target!r}); only loopback (127.0.0.0/8, ::1, localhost) is allowed while "
        "no_external_network() is active"
    )


def _check_host(op: str, host: Any, target: Any = None) -> None:
    if not is_loopback_address(host):
        raise _refuse(op, host if target is None else target)


_LOCAL_FAMILIES = {f for f in (getattr(socket, "AF_UNIX", None), getattr(socket, "AF_NETLINK", None)) if f is not None}
_IP_FAMILIES = {socket.AF_INET, getattr(socket, "AF_INET6", socket.AF_INET)}


def _check_sockaddr(op: str, sock: socket.socket, address: Any) -> None:
    family = sock.family
    if family in _LOCAL_FAMILIES:
        return
    if family in _IP_FAMILIES and isinstance(address, tuple) and address:
        _check_host(op, address[0], address)
        return
    raise _refuse(op, address)


def _check_resolved(op: str, host: Any, infos: Any) -> Any:
    """`localhost` must resolve to loopback only (a hosts file could say otherwise)."""
    addresses = [info[4][0] for info in infos] if op == "getaddrinfo" else infos
    for address in addresses:
        if not is_loopback_address(address):
            raise _refuse(op, f"{host} -> {address}")
    return infos


def _wrap_getaddrinfo(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if _depth > 0 and host is not None and _literal_ip(host) is None:
            if not _is_localhost_name(host):
                raise _refuse("getaddrinfo", host)
            return _check_resolved("getaddrinfo", host, original(host, port, *args, **kwargs))
        return original(host, port, *args, **kwargs)

    return getaddrinfo


def _wrap_gethostbyname(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def gethostbyname(host: Any) -> Any:
        if _depth > 0 and _literal_ip(host) is None:
            if not _is_localhost_name(host):
                raise _refuse("gethostbyname", host)
            return _check_resolved("gethostbyname", host, [original(host)])[0]
        return original(host)

    return gethostbyname


def _wrap_gethostbyname_ex(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def gethostbyname_ex(host: Any) -> Any:
        if _depth > 0 and _literal_ip(host) is None:
            if not _is_localhost_name(host):
                raise _refuse("gethostbyname_ex", host)
            result = original(host)
            _check_resolved("gethostbyname_ex", host, result[2])
            return result
        return original(host)

    return gethostbyname_ex


def _wrap_gethostbyaddr(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def gethostbyaddr(host: Any) -> Any:
        if _depth > 0:  # a reverse lookup of anything but loopback is a DNS query
            _check_host("gethostbyaddr", host)
        return original(host)

    return gethostbyaddr


def _wrap_getnameinfo(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def getnameinfo(sockaddr: Any, flags: int) -> Any:
        if _depth > 0 and not (flags & socket.NI_NUMERICHOST):
            host = sockaddr[0] if isinstance(sockaddr, tuple) and sockaddr else sockaddr
            _check_host("getnameinfo", host, sockaddr)
        return original(sockaddr, flags)

    return getnameinfo


def _wrap_create_connection(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        if _depth > 0:
            host = address[0] if isinstance(address, tuple) and address else address
            _check_host("create_connection", host, address)
        return original(address, *args, **kwargs)

    return create_connection


def _wrap_connect(original: Callable[..., Any], op: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def connect(self: socket.socket, address: Any) -> Any:
        if _depth > 0:
            _check_sockaddr(op, self, address)
        return original(self, address)

    return connect


def _wrap_sendto(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def sendto(self: socket.socket, data: Any, *args: Any) -> Any:
        if _depth > 0 and args:  # sendto(data, address) or sendto(data, flags, address)
            _check_sockaddr("sendto", self, args[-1])
        return original(self, data, *args)

    return sendto


def _wrap_sendmsg(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> Any:
        if _depth > 0 and len(args) >= 3 and args[2] is not None:  # (ancdata, flags, address)
            _check_sockaddr("sendmsg", self, args[2])
        return original(self, buffers, *args)

    return sendmsg


_TARGETS: list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
    (socket, "getaddrinfo", _wrap_getaddrinfo),
    (socket, "gethostbyname", _wrap_gethostbyname),
    (socket, "gethostbyname_ex", _wrap_gethostbyname_ex),
    (socket, "gethostbyaddr", _wrap_gethostbyaddr),
    (socket, "getnameinfo", _wrap_getnameinfo),
    (socket, "create_connection", _wrap_create_connection),
    (socket.socket, "connect", lambda f: _wrap_connect(f, "connect")),
    (socket.socket, "connect_ex", lambda f: _wrap_connect(f, "connect_ex")),
    (socket.socket, "sendto", _wrap_sendto),
]
if hasattr(socket.socket, "sendmsg"):
    _TARGETS.append((socket.socket, "sendmsg", _wrap_sendmsg))


def _install() -> None:
    try:
        for owner, name, wrap in _TARGETS:
            previous = vars(owner).get(name, _ABSENT)  # _ABSENT: inherited (socket.socket.connect is _socket's)
            wrapper = wrap(getattr(owner, name))
            setattr(owner, name, wrapper)
            _installed.append((owner, name, previous, wrapper))
    except BaseException:
        _restore()
        raise


def _restore() -> None:
    while _installed:
        owner, name, previous, wrapper = _installed.pop()
        if vars(owner).get(name) is not wrapper:
            # Someone patched over us meanwhile; our wrapper stays reachable through theirs but is inert now.
            log.warning("egress_guard_restore_skipped", attribute=f"{getattr(owner, '__name__', owner)}.{name}")
            continue
        if previous is _ABSENT:
            delattr(owner, name)
        else:
            setattr(owner, name, previous)


@contextlib.contextmanager
def no_external_network() -> Iterator[None]:
    """Refuse every non-loopback connect / connect_ex / sendto / sendmsg / create_connection and every lookup of
    a hostname other than localhost, from any thread, until the block ends (NetworkEgressError).

    Reentrant and thread-safe: nested or concurrent blocks share one installation, removed when the last one
    exits (on an exception too), leaving the socket module's attributes exactly as they were.
    """
    global _depth
    with _lock:
        if _depth == 0:
            _install()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _restore()


__all__ = ["NetworkEgressError", "guard_active", "is_loopback_address", "no_external_network"]
