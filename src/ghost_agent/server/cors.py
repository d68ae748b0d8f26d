"""CORS: off unless `--cors-allow-origins` lists the browser origins allowed to call the API.

Off means no `Access-Control-*` header on any reply, so a web page the user visits cannot read what the daemon
answers (a drive-by request to localhost learns nothing). On, Starlette's CORSMiddleware wraps everything, auth
included: a preflight (`OPTIONS` with `Access-Control-Request-Method`) carries no api key and is answered before
the key is checked, and error replies carry the headers too so a page can show them.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from ghost_agent.settings import ServerSettings

# What a browser client sends besides the CORS-safelisted headers, and what it may read back.
ALLOW_HEADERS = ["authorization", "content-type", "x-request-id", "x-ghost-session-id"]
EXPOSE_HEADERS = ["x-request-id", "x-ghost-trajectory-id", "x-ghost-trajectory-ids", "retry-after"]


def install_cors(app: FastAPI, settings: ServerSettings) -> bool:
    """Add CORSMiddleware when the allow-list is non-empty; returns whether it was added. Call it last, so it is
    the outermost middleware."""
    origins = settings.cors_origins
    if not origins:
        return False
    app.add_middleware(
        CORSMiddleware,
        allow_origins=origins,
        allow_methods=["GET", "POST"],
        allow_headers=ALLOW_HEADERS,
        expose_headers=EXPOSE_HEADERS,
        # The api key travels in Authorization, not cookies: no credentialed mode (it would also rule out `*`).
        allow_credentials=False,
        max_age=600,
    )
    return True


__all__ = ["install_cors"]
