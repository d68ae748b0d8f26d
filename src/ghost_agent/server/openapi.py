"""OpenAPI details FastAPI cannot infer: our error schema on every error status, SSE framing, bearer auth."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from ghost_agent.server.chat.protocol import ChatCompletionChunk, ErrorResponse
from ghost_agent.server.completions.protocol import CompletionChunk

_DESCRIPTIONS = {
    400: "Malformed request: invalid JSON, a schema violation or a value no JSON writer can send on (a lone "
    "surrogate, nesting past 128 levels; `error.param` names the field), `n` above max_n, a content part or "
    "parameter the model cannot use (`unsupported_content_part`, `unsupported_parameter`), or a bad Content-Length.",
    401: "Missing or wrong `Authorization: Bearer <key>`.",
    403: "The request names a Host that is not this daemon's (`host_not_allowed`: DNS rebinding) or comes from a "
    "web page the daemon does not serve or allow (`origin_not_allowed`); see --allowed-hosts, --cors-allow-origins.",
    404: "Not found: `GET /v1/models/{id}` for a model this daemon does not serve (`model_not_found`), or the "
    "upstream does not know what was asked for (its message is passed through).",
    409: "The upstream refused the request as conflicting; its message is passed through.",
    408: "The request's headers or body took too long to arrive (header_timeout_s, body_timeout_s); the "
    "connection is closed.",
    413: "Request body larger than max_request_bytes (announced by Content-Length, or received), refused before auth.",
    414: "Request target longer than max_request_line_bytes, refused before auth.",
    422: "Well-formed request the backend cannot process.",
    429: "The upstream is rate-limiting (its `Retry-After` is passed through).",
    431: "Request line and headers larger than max_header_bytes, or more than max_headers fields; refused before "
    "auth.",
    500: "A bug in the daemon: the reply says only where to look (the daemon log, by `x-request-id`).",
    501: "Not served by this daemon's backend or turned off (e.g. `--embeddings off`); the message says how to "
    "enable it.",
    502: "The upstream failed or is unreachable (`error.message` carries the upstream's message).",
    503: "The backend is busy or still loading the model, or the daemon is shutting down (see `Retry-After`).",
    504: "The upstream did not answer in time.",
}
# What the HTTP limits, the middleware or the error handlers may answer on any route: a slow head or body, a
# bad Content-Length, a foreign Host or Origin, a body over the cap, a long target or large headers, a bug, a
# request abandoned at shutdown.
EVERY_ROUTE = (400, 403, 408, 413, 414, 431, 500, 503)


SSE_MEDIA_TYPE = "text/event-stream"
_COMPONENT = "#/components/schemas/"


def sse_event_schema(payload_ref: str) -> dict[str, Any]:
    """One server-sent event of a stream of `payload_ref` objects, as OpenAPI describes event streams.

    A stream's media-type schema describes each *event* (`data`, `event`, `id`, `retry`), not the JSON in
    it: `data` is the payload as JSON, an ErrorResponse when the stream fails after it started (the status
    line is already sent), or the literal `[DONE]` that ends every stream.
    """

    def json_string(ref: str) -> dict[str, Any]:
        return {"type": "string", "contentMediaType": "application/json", "contentSchema": {"$ref": ref}}

    return {
        "title": payload_ref.removeprefix(_COMPONENT) + "Event",
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string", "const": "message", "description": "Events are never named."},
            "data": {
                "anyOf": [
                    json_string(payload_ref),
                    json_string(_COMPONENT + "ErrorResponse"),
                    {"type": "string", "const": "[DONE]"},
                ]
            },
        },
    }


def _frame_event_streams(schema: dict[str, Any]) -> None:
    """Routes declare a stream by its payload (`text/event-stream: ChatCompletionChunk`); wrap it in SSE framing."""
    schemas = schema["components"]["schemas"]
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            for response in operation.get("responses", {}).values():
                media = response.get("content", {}).get(SSE_MEDIA_TYPE)
                ref = (media or {}).get("schema", {}).get("$ref", "")
                if not ref.startswith(_COMPONENT) or ref.endswith("Event"):
                    continue
                event = sse_event_schema(ref)
                schemas[event["title"]] = event
                media["schema"] = {"$ref": _COMPONENT + event["title"]}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` entries documenting OpenAI-shaped errors."""
    return {s: {"model": ErrorResponse, "description": _DESCRIPTIONS.get(s, "Error.")} for s in statuses}


def install_openapi(app: FastAPI, *, auth: bool, max_n: int | None = None) -> None:
    """Generate the schema once: FastAPI's default 422 body replaced, the statuses every route may answer
    added, the bearer scheme declared, and `n` bounded by this daemon's `max_n`."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        error_ref = {"$ref": "#/components/schemas/ErrorResponse"}
        components = schema.setdefault("components", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.get("schemas", {}).pop(name, None)
        schemas = components.setdefault("schemas", {})
        for model in (ChatCompletionChunk, CompletionChunk):  # stream payloads no route returns as JSON
            chunk = model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(chunk.pop("$defs", {}))
            schemas[model.__name__] = chunk
        components["securitySchemes"] = {"bearerAuth": {"type": "http", "scheme": "bearer"}}
        _frame_event_streams(schema)
        for request in ("ChatCompletionRequest", "CompletionRequest"):
            n_schema = schemas.get(request, {}).get("properties", {}).get("n", {})
            for branch in n_schema.get("anyOf", [n_schema]):
                if max_n is not None and branch.get("type") == "integer":
                    branch["maximum"] = max_n
        for path, item in schema.get("paths", {}).items():
            for operation in item.values():
                responses = operation.setdefault("responses", {})
                for status in EVERY_ROUTE:
                    responses.setdefault(str(status), {
                        "description": _DESCRIPTIONS[status],
                        "content": {"application/json": {"schema": error_ref}},
                    })
                if "422" in responses:
                    responses["422"] = {
                        "description": _DESCRIPTIONS[422],
                        "content": {"application/json": {"schema": error_ref}},
                    }
                if auth and (path.startswith("/v1/") or path == "/metrics"):
                    operation["security"] = [{"bearerAuth": []}]
        app.openapi_schema = schema
        return schema

    app.openapi = build  # type: ignore[method-assign]
