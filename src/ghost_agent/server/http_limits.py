"""Limits on what a connection may send before the app sees it: request-line length, header bytes and count,
body size, and how long the head and the body may take to arrive.

uvicorn's httptools protocol buffers a header of any size and waits forever for a slow client: one request
with a 64 MB header, or a hundred connections sending a header line every few seconds (slowloris), cost the
daemon memory and sockets before auth could say no. `limited_protocol` builds a subclass of that protocol
which counts as the parser goes and answers, before any middleware runs:

- 414 when the request target passes `max_request_line_bytes`;
- 431 when the request line and headers together pass `max_header_bytes`, or there are more than
  `max_headers` header fields;
- 413 when `Content-Length` announces, or the bytes received prove, a body over `max_request_bytes`;
- 408 when the head has not arrived within `header_timeout_s` of its first byte (a connection that sent
  nothing at all is closed without a reply), or the body has not within `body_timeout_s` of the head's end.

Each answer is OpenAI-shaped JSON with `connection: close`, and the connection is closed. Memory held per
connection is bounded by the limit plus one read (asyncio reads at most 256 KiB at a time): the count is
checked after every read, never after the whole head.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ghost_agent.server.errors import ApiError
from ghost_agent.settings.sections import ServerSettings

# After a refusal the daemon stops answering but keeps reading, and drops what it reads, for up to this long
# (a lingering close, as nginx does): closing a socket with unread bytes sends a reset, which can destroy the
# reply before the client reads it. A client still sending when it ends gets the reset.
LINGER_S = 2.0

# Called once per refused connection with (reason, status, request id); the runner counts and logs it.
RefusalHook = Callable[[str, int, str], None]

@dataclass(frozen=True)
class HttpLimits:
    """What one request may send, and how slowly."""

    max_request_line_bytes: int = 8 * 1024
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    max_request_bytes: int = 4 * 1024 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0

    @classmethod
    def from_settings(cls, server: ServerSettings) -> HttpLimits:
        """The limits the operator configured."""
        return cls(
            max_request_line_bytes=server.max_request_line_bytes,
            max_header_bytes=server.max_header_bytes,
            max_headers=server.max_headers,
            max_request_bytes=server.max_request_bytes,
            header_timeout_s=server.header_timeout_s,
            body_timeout_s=server.body_timeout_s,
        )


class Refused(Exception):
    """Raised from a parser callback: the request passed a limit; `data_received` answers it."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message


def refusal_bytes(status: int, reason: str, message: str, request_id: str) -> bytes:
    """The whole HTTP response for a refusal: OpenAI's error shape with an `x-request-id` as every reply has
    (the `http_refused` log event names it), and the connection closes."""
    body = orjson.dumps(ApiError(status, message, code=reason).body())
    head = b"".join([
        STATUS_LINE[status],
        b"content-type: application/json\r\n",
        b"content-length: ", str(len(body)).encode(), b"\r\n",
        b"x-request-id: ", request_id.encode(), b"\r\n",
        b"connection: close\r\n\r\n",
    ])
    return head + body


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of `HttpLimits` enforced as bytes arrive."""

    limits: ClassVar[HttpLimits] = HttpLimits()
    on_refuse: ClassVar[RefusalHook | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = False  # between the first byte of a request and the end of its headers
        self._head_bytes = 0  # an upper bound of the head's bytes so far (request line + headers)
        self._line_bytes = 0  # of the request target
        self._field_bytes = 0  # of the completed header fields
        self._fields = 0
        self._began_in_chunk = False
        self._body_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self._has_cycle = False  # self.cycle is this request's (else it is the previous request's, or None)

    # Connection events

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A connection that never sends a byte is closed too: the head's clock starts when it opens.
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # lingering after a refusal: dropped
        self._unset_keepalive_if_required()
        self._began_in_chunk = False
        was_in_head = self._in_head
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            refusal = exc.__context__
            if isinstance(refusal, Refused):
                self._refuse(refusal.status, refusal.reason, refusal.message)
                return
            raise
        except httptools.HttpParserError:
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        if self._in_head:
            # The head is still arriving. A read that continued it counts whole; a read that began it also
            # held the end of the previous message, so only what the parser reported counts (the header
            # being read is then under-counted by at most this one read).
            known = self._line_bytes + self._field_bytes
            if was_in_head and not self._began_in_chunk:
                self._head_bytes = max(self._head_bytes + len(data), known)
            else:
                self._head_bytes = known
            if self._head_bytes > self.limits.max_header_bytes:
                self._refuse(431, "headers_too_large", self._headers_too_large())

    # Parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._began_in_chunk = True
        self._head_bytes = self._line_bytes = self._field_bytes = self._fields = self._body_bytes = 0
        self._has_cycle = False
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def on_url(self, url: bytes) -> None:
        self._line_bytes += len(url)
        if self._line_bytes > self.limits.max_request_line_bytes:
            raise Refused(
                414, "uri_too_long",
                f"the request target is longer than {self.limits.max_request_line_bytes} bytes "
                "(max_request_line_bytes)",
            )
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields += 1
        self._field_bytes += len(name) + len(value) + 4  # ": " and CRLF
        if self._fields > self.limits.max_headers:
            raise Refused(
                431, "too_many_headers", f"more than {self.limits.max_headers} header fields (max_headers)"
            )
        if self._line_bytes + self._field_bytes > self.limits.max_header_bytes:
            raise Refused(431, "headers_too_large", self._headers_too_large())
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        length = self._content_length()
        if length is not None and length > self.limits.max_request_bytes:
            raise Refused(413, "request_too_large", self._body_too_large())
        super().on_headers_complete()
        self._has_cycle = True
        if length != 0 and not self._refused:  # a body follows (a length, or chunked)
            self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_timed_out)

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > self.limits.max_request_bytes:
            cycle = self.cycle
            if cycle is None or not cycle.response_started:
                raise Refused(413, "request_too_large", self._body_too_large())
            self.transport.close()  # the app already answered; what is left of the body is not read
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        super().on_message_complete()

    # Refusals

    def _content_length(self) -> int | None:
        for name, value in self.headers:
            if name == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return None  # the parser rejects a malformed length itself
        return None

    def _headers_too_large(self) -> str:
        return f"the request line and headers are larger than {self.limits.max_header_bytes} bytes (max_header_bytes)"

    def _body_too_large(self) -> str:
        return f"request body exceeds the {self.limits.max_request_bytes}-byte limit (max_request_bytes)"

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._refused or self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # A pipelined head is late while an earlier reply is still being written: finish that reply,
            # then close, instead of writing a 408 into the middle of it.
            cycle.keep_alive = False
            self.flow.pause_reading()
            return
        if not self._in_head:  # nothing was sent: close without a reply
            self._refused = True
            self._report("idle_connection", 408)
            self.transport.close()
            return
        self._refuse(408, "header_timeout",
                     f"the request headers took longer than {self.limits.header_timeout_s:g} s (header_timeout_s)")

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self._refused or self.transport.is_closing():
            return
        if self.flow.read_paused:  # our own back-pressure (the app has not read yet), not a slow client
            self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_timed_out)
            return
        cycle = self.cycle
        if cycle is not None and cycle.response_started:
            self._refused = True
            self._report("body_timeout", 408)
            self.transport.close()
            return
        self._refuse(408, "body_timeout",
                     f"the request body took longer than {self.limits.body_timeout_s:g} s (body_timeout_s)")

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """Answer `status` (unless a reply already started), stop reading, close."""
        self._refused = True
        self._cancel_timers()
        cycle = self.cycle
        reply = True
        if cycle is not None and not cycle.response_complete:
            # This request's app has not answered yet: it gets http.disconnect and its send() is dropped.
            # An earlier pipelined request still being answered is cut off, and nothing is written into it.
            reply = self._has_cycle and not cycle.response_started
            cycle.disconnected = True
            cycle.message_event.set()
        request_id = secrets.token_hex(16)
        self._report(reason, status, request_id)
        if not reply:
            self.transport.close()
            return
        self.transport.write(refusal_bytes(status, reason, message, request_id))
        self._linger()

    def _linger(self) -> None:
        """Half-close after the reply and drop what still arrives, until the client closes (the transport
        then closes itself) or LINGER_S."""
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.flow.resume_reading()
        self._linger_timer = self.loop.call_later(LINGER_S, self.transport.close)

    def _report(self, reason: str, status: int, request_id: str = "") -> None:
        hook = type(self).on_refuse
        if hook is not None:
            hook(reason, status, request_id)

    def _cancel_timers(self) -> None:
        for timer in (self._head_timer, self._body_timer, self._linger_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = self._linger_timer = None


def limited_protocol(limits: HttpLimits, on_refuse: RefusalHook | None = None) -> type[LimitedHttpProtocol]:
    """A protocol class for `uvicorn.Config(http=...)` enforcing `limits`, reporting each refusal."""
    return type("LimitedHttpProtocol", (LimitedHttpProtocol,), {"limits": limits, "on_refuse": on_refuse})
