"""OpenAPI details FastAPI cannot infer: our error schema on every error status, and bearer auth."""

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
