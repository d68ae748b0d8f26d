"""The OpenAPI document lists every status each route answers, and no page loads anything from off the machine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, make_settings

KEY = "doc-key"
LIMIT = 2048
AUTH = {"authorization": f"Bearer {KEY}"}
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
async def client(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> AsyncIterator[httpx.AsyncClient]:
    settings = make_settings(
        tmp_path, upstream_url=fake_upstream[0], upstream_retries=0, api_key=KEY, max_request_bytes=LIMIT
    )
    async with app_client(settings, make_backend(settings.backend)) as c:
        yield c


async def test_no_page_loads_a_cdn_and_the_schema_stays(client: httpx.AsyncClient) -> None:
    """Swagger UI and ReDoc load their scripts from a CDN: gone. The schema itself is served, self-contained."""
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert (await client.get(path)).status_code == 404, path
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    assert "cdn" not in response.text.lower() and "https://" not in response.text


async def test_every_status_a_route_answers_is_documented(
    client: httpx.AsyncClient, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    upstream = fake_upstream[1]
    seen: set[tuple[str, str, int]] = set()

    async def hit(method: str, path: str, **kwargs: Any) -> None:
        response = await client.request(method, path, **kwargs)
        seen.add((method.lower(), path, response.status_code))

    for method, path in [("GET", "/health"), ("GET", "/v1/models"), ("GET", "/metrics"),
                         ("POST", "/v1/chat/completions")]:
        await hit(method, path, headers={**AUTH, "content-length": "abc"})  # 400
        await hit(method, path, headers=AUTH, content=b"x" * (LIMIT + 1))  # 413
        await hit(method, path)  # 401 on the protected ones
    chat = "/v1/chat/completions"
    await hit("POST", chat, headers=AUTH, json={"messages": []})  # 400: schema
    await hit("POST", chat, headers=AUTH, json={**CHAT, "n": 99})  # 400: above max_n
    for status in (404, 409, 422, 429, 500, 503, 504):  # the upstream's answer, passed through or mapped
        upstream.enqueue(ScriptedReply(error=(status, f"upstream says {status}")))
        await hit("POST", chat, headers=AUTH, json=CHAT)
    await hit("POST", chat, headers=AUTH, json=CHAT)  # 200

    statuses = {s for _, _, s in seen}
    assert {200, 400, 401, 404, 409, 413, 422, 429, 502, 504} <= statuses, statuses
    doc = (await client.get("/openapi.json")).json()
    undocumented = sorted(
        (m, p, s) for m, p, s in seen if str(s) not in doc["paths"][p][m]["responses"]
    )
    assert undocumented == []
    # What no request here could provoke but any route may answer: a bug (500), a request cut by shutdown (503).
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            assert {"400", "413", "500", "503"} <= set(operation["responses"]), (method, path)
