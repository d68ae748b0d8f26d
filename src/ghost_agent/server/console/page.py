"""`GET /ui`: the status page, served by the daemon itself from files in the package (no CDN, works offline).

The page is a shell (HTML, one stylesheet, one script, ~30 KB in all); everything it shows it reads from the same
`/v1/ghost/...` JSON endpoints a script would, with the api key as a bearer header when the daemon has one (the
page asks for it once and keeps it in the tab's `sessionStorage`: never in a URL, gone with the tab). Plots are
SVG drawn by the script: no chart library to ship or trust.

The shell holds no data, so it is served without the key — but not to another machine when the daemon has no
key at all (`--insecure-no-auth` on a public bind): such a page would be an open window on the home, and it is
refused like the API would be. Every response carries a strict Content-Security-Policy (scripts and styles only
from the daemon, no inline code, no frames), so even text that slipped through as markup could not run; the
script never assigns model- or user-written text as HTML in the first place.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from importlib import resources

from fastapi import APIRouter, Request, Response

from ghost_agent.server.errors import ApiError
from ghost_agent.server.state import app_context

router = APIRouter()

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
FILES = {"ui.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
         "app.css": "text/css; charset=utf-8"}


@cache
def asset(name: str) -> bytes:
    """A static file of the page, read once from the package."""
    return (resources.files("ghost_agent.server.console") / "static" / name).read_bytes()


def _loopback(request: Request) -> bool:
    client = request.client
    if client is None:
        return False
    try:
        return ipaddress.ip_address(client.host).is_loopback
    except ValueError:
        return False


def _serve(request: Request, name: str) -> Response:
    ctx = app_context(request)
    if not ctx.settings.server.api_key and not _loopback(request):
        raise ApiError(403, "the status page is served off this machine only when the daemon has an api key "
                       "(--api-key); without one it is open to loopback clients only", code="ui_needs_api_key")
    return Response(asset(name), media_type=FILES[name], headers=HEADERS)


@router.get("/ui", include_in_schema=False)
async def page(request: Request) -> Response:
    return _serve(request, "ui.html")


@router.get("/ui/app.js", include_in_schema=False)
async def script(request: Request) -> Response:
    return _serve(request, "app.js")


@router.get("/ui/app.css", include_in_schema=False)
async def stylesheet(request: Request) -> Response:
    return _serve(request, "app.css")


__all__ = ["CSP", "asset", "router"]
