"""Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, never a traceback."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from ghost_agent.llm.base import BackendError
from ghost_agent.logging import get_logger

log = get_logger("server")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "invalid_request_error",
    413: "request_too_large",
    414: "invalid_request_error",
    422: "invalid_request_error",
    431: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "upstream_error",
    503: "server_busy",
    504: "upstream_timeout",
}


class ApiError(StarletteHTTPException):
    """Raise from a route (or a middleware's receive) to answer with an OpenAI-shaped error.

    It is an HTTPException so frameworks re-raise it untouched while reading the body.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=status, detail=message, headers=headers)
        self.status = status
        self.message = message
        self.type = type or _TYPES.get(status, "server_error")
        self.param = param
        self.code = code
        self.headers = headers or {}

    @classmethod
    def from_backend(cls, exc: BackendError) -> ApiError:
        """Map a backend failure to its HTTP answer (503 carries Retry-After)."""
        headers = {}
        if exc.retry_after is not None:
            headers["retry-after"] = str(max(1, round(exc.retry_after)))
        return cls(exc.status, exc.message, type=exc.type, param=exc.param, code=exc.code, headers=headers)

    def body(self) -> dict[str, Any]:
        """The JSON error object."""
        return error_body(self.message, self.type, self.param, self.code)


def error_body(message: str, type: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    """The OpenAI error envelope."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def internal_error() -> ApiError:
    """What the client learns about a bug of ours: nothing but where to look."""
    return ApiError(500, "internal error; see the daemon log", code="internal_error")


def error_response(exc: ApiError) -> Response:
    """A JSON response for an ApiError."""
    return Response(
        orjson.dumps(exc.body()), status_code=exc.status, media_type="application/json", headers=exc.headers
    )


def install_error_handlers(app: FastAPI) -> None:
    """Make every failure path answer in OpenAI's error shape."""

    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def on_backend_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BackendError)
        return error_response(ApiError.from_backend(exc))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(ApiError(exc.status_code, str(exc.detail), headers=dict(exc.headers or {})))

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        # The deepest location is the most specific: for a union field pydantic reports every branch, and
        # `content: [{"type": "bogus"}]` should name the bad part, not complain that a list is not a str.
        first = max(errors, key=lambda e: len(e.get("loc") or ())) if errors else {}
        if first.get("type") == "json_invalid":
            detail = (first.get("ctx") or {}).get("error", "malformed")
            return error_response(ApiError(400, f"invalid JSON body: {detail} (at byte {first['loc'][-1]})"))
        # Checks over the whole body (`ChatCompletionRequest._writable`) name the field in their context.
        param = (first.get("ctx") or {}).get("param") or loc_to_param(first.get("loc", ()))
        return error_response(ApiError(400, str(first.get("msg", "invalid request")), param=param))

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        # GhostMiddleware answers route bugs itself (with the request id); this catches what escapes it.
        log.error("unhandled_error", path=request.url.path, error=repr(exc), exc_info=exc)
        return error_response(internal_error())

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(BackendError, on_backend_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(Exception, on_unexpected)


# Pydantic names the branch of a union it tried inside the location (`content.str`,
# `content.list[tagged-union[TextPart,ImagePart]].0`); those are types, not fields the client wrote.
_UNION_BRANCHES = frozenset({"str", "int", "float", "bool", "bytes", "none", "dict", "list"})


def loc_to_param(loc: Any) -> str | None:
    """Pydantic's error location as OpenAI's dotted `param` (`messages.0.role`), dropping 'body'."""
    parts = [
        str(p)
        for p in (loc or ())
        if p != "body" and not (isinstance(p, str) and (p in _UNION_BRANCHES or "[" in p))
    ]
    return ".".join(parts) or None
