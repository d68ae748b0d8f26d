"""The OpenAI contract on the embedded Qwen2.5-Coder-1.5B (slow: loads the model): a `json_schema` reply parses
and validates, and a request with `tools` comes back as native `tool_calls`, streamed or not."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import orjson
import pytest

from ghost_agent.agent.compat.structured import problems
from tests.conftest import daemon_on_port, make_settings, sse_events
from tests.server.test_embedded_daemon import MODEL_CACHE, wait_ready

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "answer": {"type": "string"}},
    "required": ["city", "days", "answer"],
    "additionalProperties": False,
}
FORMAT = {"type": "json_schema", "json_schema": {"name": "trip", "schema": SCHEMA}}
TRIP = "I am going to Lisbon for 4 days. Describe the trip as JSON with the city, the days and a one-line answer."
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def test_embedded_json_schema_and_native_tool_calls(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, model_cache_dir=MODEL_CACHE, n_ctx=4096, agent_max_tokens=512)
    with daemon_on_port(settings) as url:
        assert wait_ready(url)["status"] == "ok"
        # The default route a fresh install takes (the untrained router's prior).
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "m", "temperature": 0, "max_tokens": 200, "response_format": FORMAT,
                  "messages": [{"role": "user", "content": TRIP}]},
            timeout=600,
        )
        assert response.status_code == 200, response.text
        content = response.json()["choices"][0]["message"]["content"]
        assert problems(content, FORMAT) == [], content
        assert json.loads(content)["city"].lower() == "lisbon"

        ask = {"model": "m", "temperature": 0, "max_tokens": 200, "tools": [WEATHER],
               "messages": [{"role": "user", "content": "What's the weather in Oslo right now?"}]}
        response = httpx.post(f"{url}/v1/chat/completions", json=ask, timeout=600)
        choice = response.json()["choices"][0]
        assert choice["finish_reason"] == "tool_calls", choice
        (call,) = choice["message"]["tool_calls"]
        assert call["function"]["name"] == "get_weather"
        assert json.loads(call["function"]["arguments"])["city"].lower() == "oslo"

        response = httpx.post(f"{url}/v1/chat/completions", json={**ask, "stream": True}, timeout=600)
        chunks = [orjson.loads(e) for e in sse_events(response.text)[:-1]]
        deltas = [d for c in chunks if c["choices"] for d in c["choices"][0]["delta"].get("tool_calls") or []]
        assert [d["function"]["name"] for d in deltas] == ["get_weather"]
