"""Run the app under uvicorn with graceful shutdown (SIGTERM: stop accepting, drain, cancel, flush)."""

from __future__ import annotations

import contextlib
import errno
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from ghost_agent.home import GhostHome
from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import redact_url
from ghost_agent.server.app import build_app
from ghost_agent.server.http_limits import HttpLimits, LimitedHttpProtocol, limited_protocol
from ghost_agent.settings import Settings

log = get_logger("server")


class GhostServer(uvicorn.Server):
    """uvicorn's server, except that the signal which stopped it is not re-raised after a clean shutdown.

    uvicorn re-delivers a captured SIGTERM/SIGINT once it has drained and shut down, so the process dies
    *by* the signal (exit status -15) even though every request finished and the log was flushed. A daemon
    that stopped gracefully exits 0; a second Ctrl+C still forces the exit (uvicorn's `handle_exit`).
    """

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's startup (lifespan, then the sockets start accepting); then `on_started`, once serving."""
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit and self._on_started is not None:
            self._on_started()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals can only be handled on the main thread (tests run servers in threads)
            return
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def http_protocol(settings: Settings, app: Any) -> type[LimitedHttpProtocol]:
    """uvicorn's HTTP protocol with the request limits of `settings.server`; each refusal is counted and
    logged (`http_refused`)."""
    metrics = app.state.ctx.metrics

    def refused(reason: str, status: int, request_id: str) -> None:
        metrics.http_refused.labels(reason).inc()
        log.warning("http_refused", reason=reason, status=status, request_id=request_id or None)

    return limited_protocol(HttpLimits.from_settings(settings.server), refused)


def uvicorn_config(settings: Settings, app: Any) -> uvicorn.Config:
    """uvicorn settings for the daemon: our log replaces the access log; uvloop/httptools when present."""
    return uvicorn.Config(
        app,
        host=settings.server.host,
        port=settings.server.port,
        lifespan="on",
        http=http_protocol(settings, app),
        access_log=False,
        log_level="warning",
        # uvicorn annotates an int but awaits with asyncio.wait_for: a fractional grace is honoured as given.
        timeout_graceful_shutdown=settings.server.shutdown_grace_s,  # type: ignore[arg-type]
        timeout_keep_alive=30,
        server_header=False,
    )


# Exit codes of `ghost-agent serve` (docs/operations.md lists them).
EXIT_OK = 0  # stopped gracefully (SIGTERM / SIGINT)
EXIT_ERROR = 1  # stopped before it served, or an unexpected error
EXIT_USAGE = 2  # a bad flag, environment variable or config file value (argparse's usage error)
EXIT_STARTUP = STARTUP_FAILURE  # 3: the app's startup failed (e.g. GHOST_HOME cannot be created)
EXIT_BIND = 4  # the address cannot be bound: port in use, a privileged port, a host that is not this machine's

_BIND_HINTS = {
    errno.EADDRINUSE: "the address is already in use: another process listens there (pick another --port / "
    "GHOST_PORT, or stop that process)",
    errno.EACCES: "permission denied (ports below 1024 need privileges: pick --port 1024 or higher)",
    errno.EADDRNOTAVAIL: "that address is not one of this machine's (check --host / GHOST_HOST)",
}


def bind_sockets(host: str, port: int) -> list[socket.socket]:
    """Bind (not yet listen on) every address `host` resolves to, as asyncio's `create_server` would.

    Done before the app is built, so a port in use fails in milliseconds, before any model loads. Raises
    OSError (socket.gaierror for a host that does not resolve); nothing stays open on failure.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    socks: list[socket.socket] = []
    seen: set[Any] = set()
    try:
        for family, kind, proto, _, sockaddr in infos:
            if sockaddr in seen:
                continue
            seen.add(sockaddr)
            sock = socket.socket(family, kind, proto)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(sockaddr)
    except OSError:
        for sock in socks:
            sock.close()
        raise
    return socks


def bind_error_message(host: str, port: int, exc: OSError) -> str:
    """One line saying which address could not be bound, why, and what to do."""
    if isinstance(exc, socket.gaierror):
        why = f"the host does not resolve ({exc.strerror or exc})"
    else:
        why = _BIND_HINTS.get(exc.errno or 0, exc.strerror or str(exc))
    return f"ghost-agent: cannot listen on {host}:{port}: {why}"


def listen_urls(sockets: list[socket.socket]) -> list[str]:
    """`http://host:port` of each bound socket (the real port when 0 was asked for)."""
    urls = []
    for sock in sockets:
        host, port = sock.getsockname()[:2]
        urls.append(f"http://[{host}]:{port}" if sock.family == socket.AF_INET6 else f"http://{host}:{port}")
    return urls


def serve(settings: Settings) -> int:
    """Bind, build the app, serve until a signal stops the daemon; returns the exit code (EXIT_*).

    The "listening" banner is printed (and a `listening` event logged) only once uvicorn's startup is
    complete: the lifespan ran and the sockets accept connections.
    """
    try:
        sockets = bind_sockets(settings.server.host, settings.server.port)
    except OSError as exc:
        print(bind_error_message(settings.server.host, settings.server.port, exc), file=sys.stderr, flush=True)
        return EXIT_BIND
    try:
        app = build_app(settings)
        backend = app.state.ctx.backend.kind
        # The banner is read over shoulders and lands in journals: never the url's user:password.
        where = (
            redact_url(settings.backend.upstream_url or "") if backend == "http"
            else f"embedded {settings.backend.local_model}"
        )
        log_file = GhostHome(settings.home).log_file

        def banner() -> None:
            urls = listen_urls(sockets)
            print(
                f"ghost-agent listening on {' '.join(urls)}  (backend: {where}; home: {settings.home}; "
                f"log: {log_file})",
                file=sys.stderr,
                flush=True,
            )
            log.info("listening", urls=urls)

        server = GhostServer(uvicorn_config(settings, app), on_started=banner)
        try:
            server.run(sockets=sockets)
        except SystemExit as exc:
            if exc.code != STARTUP_FAILURE:
                raise
            print(
                f"ghost-agent: startup failed (the error is above; log: {log_file}); exit {EXIT_STARTUP}",
                file=sys.stderr,
                flush=True,
            )
            return EXIT_STARTUP
    finally:
        for sock in sockets:
            sock.close()
    return EXIT_OK if server.started else EXIT_ERROR
