"""Which `Host` and `Origin` a request may carry: the daemon answers only to names that are its own.

DNS rebinding: a web page the user visits re-resolves its own name (attacker.example) to 127.0.0.1 and then
talks to the daemon as a same-origin page — its requests carry `Host: attacker.example:PORT`. Checking the Host
stops it, whatever the page does: a browser always sends the name it resolved. Allowed: loopback addresses
(127.0.0.0/8, ::1), `localhost` and `*.localhost` (browsers resolve those to loopback themselves), the bound
host, and the names the operator adds (`--allowed-hosts`; `*` turns the check off). A daemon bound to every
interface (0.0.0.0, ::) also answers to any IP literal: those are its own addresses, and a rebinding page can
only ever send a name. A request without a Host (HTTP/1.0) is not a browser's and passes.

`Origin` says which page sent a request. A cross-site page's simple POST reaches the server even when CORS lets
it read nothing, so with CORS off a foreign Origin is refused outright; a page served by the daemon itself (an
allowed host) is not foreign. With CORS on, the CORS allow-list is accepted too. `Origin: null` (sandboxed
frames, files) is foreign.

Both checks run first, before auth, on every route; decisions are cached per header value, so a request pays a
dict lookup.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from urllib.parse import urlsplit

from ghost_agent.server.errors import ApiError
from ghost_agent.settings import ServerSettings

WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
_CACHE_MAX = 256  # distinct header values remembered; a flood of random Hosts only costs the parse


def _host_of(value: str) -> str:
    """The host part of a Host header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lowercased."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") > 1:  # a bare IPv6 literal (not valid in Host, but unambiguous)
        return value
    return value.rpartition(":")[0] if ":" in value else value


class HostPolicy:
    """The Host allow-list and the Origin rule of one server configuration."""

    def __init__(self, server: ServerSettings) -> None:
        extra = server.extra_hosts
        self.disabled = "*" in extra
        bound = server.host.strip().strip("[]").lower()
        self.any_ip = bound in WILDCARD_BINDS
        self.names = frozenset({"localhost", *extra} | ({bound} if bound not in WILDCARD_BINDS else set()))
        self.cors_origins = frozenset(o.lower() for o in server.cors_origins)
        self._hosts: dict[bytes, bool] = {}
        self._origins: dict[bytes, bool] = {}

    def name_allowed(self, host: str) -> bool:
        """Whether a bare host name or address (no port) is one of the daemon's own."""
        host = host.rstrip(".")
        if self.disabled or host in self.names or host.endswith(".localhost"):
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return address.is_loopback or self.any_ip

    def host_allowed(self, raw: bytes | None) -> bool:
        """Whether a request's Host header names this daemon (absent: yes, it is not a browser's request)."""
        return self._decide(self._hosts, raw, lambda value: self.name_allowed(_host_of(value)))

    def origin_allowed(self, raw: bytes | None) -> bool:
        """Whether a request's Origin is the daemon's own page or a CORS-allowed one (absent: yes)."""
        return self._decide(self._origins, raw, lambda value: self._origin_allowed(value.strip()))

    def _decide(self, cache: dict[bytes, bool], raw: bytes | None, decide: Callable[[str], bool]) -> bool:
        """`decide` on a header value, remembered per value (a bounded cache: a flood only costs the parse)."""
        if raw is None or self.disabled:
            return True
        allowed = cache.get(raw)
        if allowed is None:
            allowed = decide(raw.decode("latin-1"))
            if len(cache) < _CACHE_MAX:
                cache[raw] = allowed
        return allowed

    def _origin_allowed(self, origin: str) -> bool:
        lowered = origin.lower().rstrip("/")
        if "*" in self.cors_origins or lowered in self.cors_origins:
            return True
        try:
            parts = urlsplit(lowered)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null", file://, extensions: never the daemon's own page
        return self.name_allowed(parts.hostname)

    def check(self, host: bytes | None, origin: bytes | None) -> ApiError | None:
        """The refusal for a request with a foreign Host or Origin, or None."""
        if not self.host_allowed(host):
            name = _host_of((host or b"").decode("latin-1"))[:100]
            return ApiError(
                403,
                f"Host {name!r} is not one of this daemon's names: requests must name it by a loopback address, "
                "localhost or the bound host (a web page re-resolving its own name to this machine is refused); "
                "add a name with --allowed-hosts",
                code="host_not_allowed",
            )
        if not self.origin_allowed(origin):
            shown = (origin or b"").decode("latin-1")[:100]
            return ApiError(
                403,
                f"requests from the web page at {shown!r} are refused: only the daemon's own pages"
                + (" and the --cors-allow-origins list" if self.cors_origins else "")
                + " may call it from a browser (allow a page with --cors-allow-origins)",
                code="origin_not_allowed",
            )
        return None


__all__ = ["HostPolicy", "WILDCARD_BINDS"]
