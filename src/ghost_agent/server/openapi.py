"""OpenAPI details FastAPI cannot infer: our error schema on every error status, SSE framing, bearer auth."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from ghost_agent.server.chat.protocol import ChatCompletionChunk, ErrorResponse

_DESCRIPTIONS = {
    400: "Invalid JSON or a schema violation (`error.param` names the field).",
    401: "Missing or wrong `Authorization: Bearer <key>`.",
    413: "Request body larger than max_request_bytes.",
    422: "Well-formed request the backend cannot process.",
    502: "The upstream failed or is unreachable (`error.message` carries the upstream's message).",
    503: "The backend is busy or still loading the model (see `Retry-After`).",
    504: "The upstream did not answer in time.",
}


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


def install_openapi(app: FastAPI, *, auth: bool) -> None:
    """Generate the schema once, fixing FastAPI's default 422 body and declaring the bearer scheme."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        error_ref = {"$ref": "#/components/schemas/ErrorResponse"}
        components = schema.setdefault("components", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.get("schemas", {}).pop(name, None)
        schemas = components.setdefault("schemas", {})
        chunk = ChatCompletionChunk.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(chunk.pop("$defs", {}))
        schemas["ChatCompletionChunk"] = chunk
        components["securitySchemes"] = {"bearerAuth": {"type": "http", "scheme": "bearer"}}
        _frame_event_streams(schema)
        for path, item in schema.get("paths", {}).items():
            for operation in item.values():
                responses = operation.get("responses", {})
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
