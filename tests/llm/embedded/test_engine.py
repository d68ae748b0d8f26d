"""The embedded engine's pieces that need no engine: llama.cpp's error payloads read as BackendErrors (the engine
itself runs under EmbeddedBackend in tests/llm/embedded/test_backend.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ghost_agent.llm.embedded.engine import error_from_payload, is_error

JSON = dict[str, Any]


@pytest.mark.parametrize(
    ("payload", "status", "type_"),
    [
        ({"error": {"code": 400, "message": "bad", "type": "invalid_request_error"}}, 400, "invalid_request_error"),
        ({"error": {"code": 501, "message": "no", "type": "not_supported_error"}}, 400, "invalid_request_error"),
        ({"error": {"code": 503, "message": "loading", "type": "unavailable_error"}}, 503, "server_busy"),
        ({"code": 500, "message": "boom", "type": "server_error"}, 500, "server_error"),
    ],
)
def test_error_payloads_map_to_statuses(payload: JSON, status: int, type_: str) -> None:
    err = error_from_payload(payload)
    assert (err.status, err.type) == (status, type_)


def test_is_error_tells_an_error_from_a_reply() -> None:
    assert is_error({"error": {"code": 500, "message": "boom"}})
    assert is_error({"code": 500, "message": "boom", "type": "server_error"})  # the bare inner dict
    assert not is_error({"choices": [], "usage": {"prompt_tokens": 1}})
