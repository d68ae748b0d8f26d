"""Run the app under uvicorn with graceful shutdown (SIGTERM: stop accepting, drain, cancel, flush)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from ghost_agent.server.app import build_app
from ghost_agent.settings import Settings


class GhostServer(uvicorn.Server):
    """uvicorn's server, except that the signal which stopped it is not re-raised after a clean shutdown.

    uvicorn re-delivers a captured SIGTERM/SIGINT once it has drained and shut down, so the process dies
    *by* the signal (exit status -15) even though every request finished and the log was flushed. A daemon
    that stopped gracefully exits 0; a second Ctrl+C still forces the exit (uvicorn's `handle_exit`).
    """

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


def uvicorn_config(settings: Settings, app: Any) -> uvicorn.Config:
    """uvicorn settings for the daemon: our log replaces the access log; uvloop/httptools when present."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        lifespan="on",
        access_log=False,
        log_level="warning",
        # uvicorn annotates an int but awaits with asyncio.wait_for: a fractional grace is honoured as given.
        timeout_graceful_shutdown=settings.shutdown_grace_s,  # type: ignore[arg-type]
        timeout_keep_alive=30,
        server_header=False,
    )


def serve(settings: Settings) -> int:
    """Block serving until a signal stops the daemon; returns the exit code (0 after a graceful stop)."""
    app = build_app(settings)
    backend = app.state.ctx.backend.kind
    where = settings.upstream_url if backend == "http" else f"embedded {settings.local_model}"
    print(
        f"ghost-agent listening on http://{settings.host}:{settings.port}  (backend: {where}; "
        f"home: {settings.home}; log: {settings.home}/system/logs/ghost.jsonl)",
        file=sys.stderr,
        flush=True,
    )
    server = GhostServer(uvicorn_config(settings, app))
    server.run()
    return 0 if server.started else 1
