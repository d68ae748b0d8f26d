"""Run the app under uvicorn with graceful shutdown (SIGTERM: stop accepting, drain, cancel, flush)."""

from __future__ import annotations

import sys

import uvicorn

from ghost_agent.server.app import build_app
from ghost_agent.settings import Settings


def uvicorn_config(settings: Settings, app: object) -> uvicorn.Config:
    """uvicorn settings for the daemon: our log replaces the access log; uvloop/httptools when present."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        lifespan="on",
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=int(settings.shutdown_grace_s) or 1,
        timeout_keep_alive=30,
        server_header=False,
    )


def serve(settings: Settings) -> int:
    """Block serving until a signal stops the daemon; returns the exit code."""
    app = build_app(settings)
    backend = app.state.ctx.backend.kind
    where = settings.upstream_url if backend == "http" else f"embedded {settings.local_model}"
    print(
        f"ghost-agent listening on http://{settings.host}:{settings.port}  (backend: {where}; "
        f"home: {settings.home}; log: {settings.home}/system/logs/ghost.jsonl)",
        file=sys.stderr,
        flush=True,
    )
    server = uvicorn.Server(uvicorn_config(settings, app))
    server.run()
    return 0 if server.started else 1
