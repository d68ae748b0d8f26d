"""`/health`, `/metrics` (parsed as Prometheus text) and the `/openapi.json` contract."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ghost_agent import __version__
from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.settings import Settings
from tests.conftest import app_client, make_settings

MESSAGES = [{"role": "user", "content": "hello there"}]
CHAT = "/v1/chat/completions"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus exposition, keyed by (name, sorted labels)."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float | None:
    return metrics.get((name, tuple(sorted(labels.items()))))


# ---------------------------------------------------------------------------------------------- /health


PUBLIC_KEYS = {"status", "version", "degraded"}
DETAIL = "/v1/ghost/health"


async def settled_detail(client: httpx.AsyncClient, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """/v1/ghost/health once the startup sandbox probe has finished (so /health's verdict is final)."""
    for _ in range(1500):
        body: dict[str, Any] = (await client.get(DETAIL, headers=headers)).json()
        if body["sandbox"].get("status") != "probing":
            return body
        await asyncio.sleep(0.02)
    raise AssertionError("the sandbox probe did not finish")


async def test_health_with_scripted_backend(client: httpx.AsyncClient) -> None:
    detail = await settled_detail(client)
    response = await client.get("/health")
    assert response.status_code == 200
    body = response.json()
    # what a load balancer needs, and nothing else; a machine without bubblewrap reports its sandbox degraded
    sandbox_degraded = ["sandbox"] if detail["sandbox"]["degraded"] else []
    assert body == {"status": "degraded" if sandbox_degraded else "ok", "version": __version__,
                    "degraded": sandbox_degraded}
    assert detail["status"] == body["status"] and detail["degraded"] == body["degraded"]
    assert detail["version"] == __version__
    assert detail["backend"]["kind"] == "scripted"
    assert detail["backend"]["reachable"] is True
    assert detail["backend"]["model_loaded"] is True
    assert detail["model"] == "scripted-model"
    assert isinstance(detail["uptime_s"], float) and 0 <= detail["uptime_s"] < 60


async def test_health_degraded_when_http_upstream_is_down(tmp_path: Path) -> None:
    # A port nobody listens on: the upstream is down, but the daemon itself is alive and says so.
    settings = make_settings(tmp_path, upstream_url=f"http://127.0.0.1:{free_port()}", model="remote-model")
    async with app_client(settings, make_backend(settings.backend)) as c:
        response = await c.get("/health")
        detail = (await c.get(DETAIL)).json()
        chat = await c.post(CHAT, json={"messages": MESSAGES})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == PUBLIC_KEYS and body["status"] == "degraded" and "backend" in body["degraded"]
    assert body["version"] == __version__
    assert detail["status"] == "degraded"
    assert detail["backend"]["kind"] == "http"
    assert detail["backend"]["reachable"] is False
    assert detail["backend"]["model_loaded"] is False
    assert "unreachable" in detail["backend"]["detail"]
    assert detail["model"] == "remote-model"
    assert chat.status_code == 502
    assert chat.json()["error"]["code"] == "upstream_unreachable"


async def test_health_ok_with_live_http_upstream(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0])
    async with app_client(settings, make_backend(settings.backend)) as c:
        body = await settled_detail(c)
    assert body["status"] == ("degraded" if body["sandbox"]["degraded"] else "ok")
    assert body["backend"] == {
        "kind": "http", "reachable": True, "model_loaded": True, "detail": body["backend"]["detail"]
    }
    assert "200" in body["backend"]["detail"]
    # Without --model, the daemon advertises what the upstream serves.
    assert body["model"] == "upstream-model"


async def test_health_needs_no_api_key_but_its_detail_does(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path, api_key="secret"), scripted) as c:
        assert (await c.get("/health")).status_code == 200
        assert (await c.get("/metrics")).status_code == 401
        denied = await c.get(DETAIL)
        wrong = await c.get(DETAIL, headers={"authorization": "Bearer wrong"})
        allowed = await c.get(DETAIL, headers={"authorization": "Bearer secret"})
    assert denied.status_code == wrong.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
    assert allowed.status_code == 200 and allowed.json()["backend"]["kind"] == "scripted"


async def test_unauthenticated_health_leaks_no_credentials_urls_or_paths(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]
) -> None:
    """Issue 12 item 1: an open /health used to return the upstream URL with its password, the sandbox's mounts,
    cgroup and host paths. Now it says only status, version and which parts are degraded; the detail needs the
    api key and shows the URL with its credentials redacted."""
    password = "hunter2-upstream-pw"
    host_port = fake_upstream[0].split("://", 1)[1]
    settings = make_settings(tmp_path, api_key="the-key", upstream_url=f"http://ghost:{password}@{host_port}",
                             model_cache_dir=tmp_path / "models", sandbox="subprocess")
    async with app_client(settings, make_backend(settings.backend)) as c:
        detail_response = await settled_detail(c, headers={"authorization": "Bearer the-key"})
        public = await c.get("/health")
        wrong_key = await c.get("/health", headers={"authorization": "Bearer nope"})
    body = public.json()
    assert set(body) == PUBLIC_KEYS and body["degraded"] == ["sandbox"]  # subprocess: unisolated by choice
    assert wrong_key.json() == body
    for leak in (password, "ghost:", host_port, str(tmp_path), "/opt/ghost", "cgroup", "/sys/fs", "subprocess",
                 "upstream-model", "python"):
        assert leak not in public.text, leak
    detail_text = json.dumps(detail_response)
    assert password not in detail_text
    assert detail_response["backend"]["kind"] == "http" and detail_response["sandbox"]["backend"] == "subprocess"


# --------------------------------------------------------------------------------------------- /metrics


async def test_metrics_after_traffic(client: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    scripted.enqueue(ScriptedReply(content="one", usage=usage), ScriptedReply(content="two", usage=usage))
    assert (await client.post(CHAT, json={"messages": MESSAGES})).status_code == 200
    assert (await client.post(CHAT, json={"messages": MESSAGES, "stream": True})).status_code == 200
    assert (await client.post(CHAT, json={"messages": []})).status_code == 400
    malformed = await client.post(CHAT, content=b"{not json", headers={"content-type": "application/json"})
    assert malformed.status_code == 400
    assert (await client.get("/no/such/path")).status_code == 404
    assert (await client.get("/v1/nope")).status_code == 404

    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'ghost_requests_total{path="/v1/chat/completions",status="200"} 2.0' in text
    m = samples(text)
    assert value(m, "ghost_requests_total", path=CHAT, status="200") == 2
    assert value(m, "ghost_requests_total", path=CHAT, status="400") == 2
    assert value(m, "ghost_requests_total", path="other", status="404") == 2
    assert not any(dict(labels).get("path") in ("/no/such/path", "/v1/nope") for _, labels in m), (
        "unknown paths must not become label values (unbounded cardinality)"
    )

    # Latency histogram: every bucket present and cumulative, +Inf equal to the count.
    buckets = {
        dict(labels)["le"]: v
        for (name, labels), v in m.items()
        if name == "ghost_request_duration_seconds_bucket" and dict(labels)["path"] == CHAT
    }
    assert len(buckets) > 10
    assert buckets["+Inf"] == 4 == value(m, "ghost_request_duration_seconds_count", path=CHAT)
    ordered = sorted(buckets.items(), key=lambda kv: float(kv[0]))
    assert all(a[1] <= b[1] for a, b in zip(ordered, ordered[1:], strict=False))
    assert (value(m, "ghost_request_duration_seconds_sum", path=CHAT) or 0) > 0

    # Time to first token, one observation per mode; the failed requests never reached the backend.
    assert value(m, "ghost_upstream_ttft_seconds_count", stream="false") == 1
    assert value(m, "ghost_upstream_ttft_seconds_count", stream="true") == 1
    assert value(m, "ghost_upstream_ttft_seconds_bucket", stream="true", le="+Inf") == 1

    assert value(m, "ghost_tokens_total", kind="prompt") == 10
    assert value(m, "ghost_tokens_total", kind="completion") == 4
    assert value(m, "ghost_requests_in_flight") == 1, "the /metrics request itself is in flight"


async def test_metrics_count_auth_failures_and_backend_errors(tmp_path: Path, scripted: ScriptedBackend) -> None:
    scripted.enqueue(ScriptedReply(error=(502, "boom")))
    key = {"authorization": "Bearer k"}
    async with app_client(make_settings(tmp_path, api_key="k"), scripted) as c:
        assert (await c.post(CHAT, json={"messages": MESSAGES})).status_code == 401
        wrong = await c.post(CHAT, json={"messages": MESSAGES}, headers={"authorization": "Bearer x"})
        assert wrong.status_code == 401
        assert (await c.get("/metrics")).status_code == 401
        assert (await c.post(CHAT, json={"messages": MESSAGES}, headers=key)).status_code == 502
        m = samples((await c.get("/metrics", headers=key)).text)
    assert value(m, "ghost_requests_total", path=CHAT, status="401") == 2
    assert value(m, "ghost_requests_total", path="/metrics", status="401") == 1
    assert value(m, "ghost_requests_total", path=CHAT, status="502") == 1
    assert value(m, "ghost_backend_errors_total", status="502") == 1
    assert scripted.requests and len(scripted.requests) == 1, "401s must not reach the backend"


# ----------------------------------------------------------------------------------------- /openapi.json


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"only local refs expected, got {ref}"
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"unresolvable $ref {ref}"
        node = node[part]
    return node


def all_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in all_refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in all_refs(v)]
    return []


async def openapi_document(settings: Settings, backend: ScriptedBackend) -> dict[str, Any]:
    async with app_client(settings, backend) as c:
        response = await c.get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


async def test_openapi_documents_chat_completions(tmp_path: Path, scripted: ScriptedBackend) -> None:
    doc = await openapi_document(make_settings(tmp_path, api_key="k"), scripted)
    assert doc["openapi"].startswith("3.")
    op = doc["paths"][CHAT]["post"]
    body_schema = op["requestBody"]["content"]["application/json"]["schema"]
    request = resolve(doc, body_schema["$ref"])
    assert "messages" in request["required"]
    assert {"messages", "model", "stream", "stream_options", "tools", "temperature"} <= set(request["properties"])

    responses = op["responses"]
    assert set(responses) >= {"200", "400", "401", "413", "422", "502", "503", "504"}
    ok = responses["200"]["content"]
    assert resolve(doc, ok["application/json"]["schema"]["$ref"])["title"] == "ChatCompletion"
    # A stream's schema describes each SSE event: `data` is a JSON chunk, a JSON error, or `[DONE]`.
    event = resolve(doc, ok["text/event-stream"]["schema"]["$ref"])
    assert event["required"] == ["data"]
    data = event["properties"]["data"]["anyOf"]
    payloads = [resolve(doc, d["contentSchema"]["$ref"])["title"] for d in data if "contentSchema" in d]
    assert payloads == ["ChatCompletionChunk", "ErrorResponse"]
    assert all(d["contentMediaType"] == "application/json" for d in data if "contentSchema" in d)
    assert {"type": "string", "const": "[DONE]"} in data
    for status in ("400", "401", "413", "422", "502", "503", "504"):
        schema = responses[status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, status
        assert responses[status]["description"]
    error = resolve(doc, "#/components/schemas/ErrorResponse")
    assert resolve(doc, error["properties"]["error"]["$ref"])["required"] == ["message", "type"]
    # FastAPI's default validation-error schemas are replaced by ours, not left dangling.
    assert "HTTPValidationError" not in doc["components"]["schemas"]

    assert op["security"] == [{"bearerAuth": []}]
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {"type": "http", "scheme": "bearer"}


async def test_openapi_documents_every_route(tmp_path: Path, scripted: ScriptedBackend) -> None:
    doc = await openapi_document(make_settings(tmp_path, api_key="k"), scripted)
    paths = doc["paths"]
    models = paths["/v1/models"]["get"]["responses"]
    assert resolve(doc, models["200"]["content"]["application/json"]["schema"]["$ref"])["title"] == "ModelList"
    assert "401" in models
    health = paths["/health"]["get"]
    assert resolve(doc, health["responses"]["200"]["content"]["application/json"]["schema"]["$ref"])["title"] == (
        "Health"
    )
    assert "security" not in health, "/health is open to probes"
    detail = paths["/v1/ghost/health"]["get"]
    assert resolve(doc, detail["responses"]["200"]["content"]["application/json"]["schema"]["$ref"])["title"] == (
        "HealthDetail"
    )
    assert detail["security"] == [{"bearerAuth": []}] and "401" in detail["responses"]
    metrics = paths["/metrics"]["get"]
    assert "text/plain" in metrics["responses"]["200"]["content"]
    assert metrics["security"] == [{"bearerAuth": []}]


async def test_openapi_has_no_security_without_api_key(settings: Settings, scripted: ScriptedBackend) -> None:
    doc = await openapi_document(settings, scripted)
    assert all("security" not in op for item in doc["paths"].values() for op in item.values())


async def test_every_openapi_ref_resolves(tmp_path: Path, scripted: ScriptedBackend) -> None:
    doc = await openapi_document(make_settings(tmp_path, api_key="k"), scripted)
    refs = all_refs(doc)
    assert len(refs) > 20
    for ref in set(refs):
        target = resolve(doc, ref)
        assert isinstance(target, dict) and target, ref
    # Nothing may point into pydantic's `$defs` (they are hoisted into components).
    assert not [r for r in refs if "$defs" in r]
