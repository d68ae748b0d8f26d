"""`n > 1`: n independent choices, each one backend call (or agent turn) and one trajectory; capped by max_n."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam

from ghost_agent.llm import wire
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, daemon_on_port, make_settings, sse_events, wait_until
from tests.server.test_errors import assert_openai_error

MESSAGES = [{"role": "user", "content": "name a colour"}]
SDK_MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "name a colour"}]


def records(home: Path) -> list[dict[str, Any]]:
    """Every trajectory recorded under `home`, ordered by choice index."""
    files = home.glob("system/trajectories/*/*.jsonl")
    found = [orjson.loads(line) for f in files for line in f.read_bytes().splitlines()]
    return sorted(found, key=lambda r: (r["extra"].get("choice") or {}).get("index", -1))


async def recorded(home: Path, count: int) -> list[dict[str, Any]]:
    """Wait for the finishers (they run after the reply) to write `count` records."""
    await wait_until(lambda: len(records(home)) >= count)
    return records(home)


async def test_n_choices_are_n_calls_merged_into_one_completion(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path)
    colours = ["red", "green", "blue"]
    scripted.enqueue(*(ScriptedReply(content=c, usage=wire.usage(10, k)) for k, c in enumerate(colours)))
    async with app_client(settings, scripted) as client:
        response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": 3, "seed": 7})
        assert response.status_code == 200, response.text
        body = response.json()
        rows = await recorded(settings.home, 3)
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    assert [c["message"]["content"] for c in body["choices"]] == ["red", "green", "blue"]
    assert all(c["finish_reason"] == "stop" for c in body["choices"])
    # Three ordinary calls: `n` is never forwarded, the seed differs per choice (reproducibly).
    assert len(scripted.requests) == 3
    assert all("n" not in r for r in scripted.requests)
    assert [r["seed"] for r in scripted.requests] == [7, 6, 5]
    assert body["usage"] == wire.usage(30, 0 + 1 + 2)  # the calls' usage, summed: each processed the prompt
    # One trajectory per choice; choice 0's is the one the single-id header names.
    ids = response.headers["x-ghost-trajectory-ids"].split(",")
    assert ids[0] == response.headers["x-ghost-trajectory-id"] and len(set(ids)) == 3
    assert [r["id"] for r in rows] == ids
    assert [r["final_response"] for r in rows] == ["red", "green", "blue"]
    assert [r["extra"]["choice"] for r in rows] == [{"index": i, "n": 3, "trajectory_ids": ids} for i in range(3)]


async def test_streamed_choices_carry_their_index(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path)
    scripted.enqueue(ScriptedReply(content="crimson red", chunk_size=3), ScriptedReply(content="teal", chunk_size=2))
    async with app_client(settings, scripted) as client:
        response = await client.post(
            "/v1/chat/completions",
            json={"messages": MESSAGES, "n": 2, "stream": True, "stream_options": {"include_usage": True}},
        )
        assert response.status_code == 200, response.text
        rows = await recorded(settings.home, 2)
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    assert len({c["id"] for c in chunks}) == 1
    texts: dict[int, str] = defaultdict(str)
    finished: list[int] = []
    order: list[int] = []
    for chunk in chunks[:-1]:
        (choice,) = chunk["choices"]
        texts[choice["index"]] += choice["delta"].get("content") or ""
        order.append(choice["index"])
        if choice["finish_reason"]:
            finished.append(choice["index"])
    assert dict(texts) == {0: "crimson red", 1: "teal"}
    assert finished == [0, 1]
    assert order == sorted(order)  # one choice after the other
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3 + 1
    assert [r["final_response"] for r in rows] == ["crimson red", "teal"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_agent_turns_run_once_per_choice(tmp_path: Path, scripted: ScriptedBackend, stream: bool) -> None:
    settings = make_settings(tmp_path, router="always-agent", agent_strategy="answer-first", check_compute=False)
    async with app_client(settings, scripted) as client:
        response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": 2, "stream": stream})
        assert response.status_code == 200, response.text
        rows = await recorded(settings.home, 2)
    if stream:
        indexes = {orjson.loads(e)["choices"][0]["index"] for e in sse_events(response.text)[:-1]
                   if orjson.loads(e)["choices"]}
        assert indexes == {0, 1}
    else:
        assert [c["index"] for c in response.json()["choices"]] == [0, 1]
    assert [r["router"]["decision"] for r in rows] == ["agent", "agent"]
    assert [r["extra"]["choice"]["index"] for r in rows] == [0, 1]
    assert all(r["final_response"] == "name a colour" for r in rows)  # the scripted model echoes


@pytest.mark.parametrize(("max_n", "n"), [(4, 5), (1, 2), (4, 16)])
async def test_n_above_max_n_is_400(tmp_path: Path, scripted: ScriptedBackend, max_n: int, n: int) -> None:
    async with app_client(make_settings(tmp_path, max_n=max_n), scripted) as client:
        response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": n})
        error = assert_openai_error(response, 400, param="n")
        assert error["code"] == "n_too_large" and str(max_n) in error["message"]
        assert scripted.requests == []
        ok = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": max_n})
        assert len(ok.json()["choices"]) == max_n
        schema = (await client.get("/openapi.json")).json()
    n_schema = schema["components"]["schemas"]["ChatCompletionRequest"]["properties"]["n"]
    assert [b["maximum"] for b in n_schema["anyOf"] if b.get("type") == "integer"] == [max_n]


async def test_a_failing_choice_fails_the_request_and_each_choice_is_recorded_as_it_ended(
    tmp_path: Path, scripted: ScriptedBackend
) -> None:
    settings = make_settings(tmp_path)
    scripted.enqueue(ScriptedReply(content="red"), ScriptedReply(error=(502, "boom")))
    async with app_client(settings, scripted) as client:
        response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": 2})
        assert_openai_error(response, 502)
        rows = await recorded(settings.home, 2)
    assert rows[0]["final_response"] == "red"
    assert "NotDelivered" in rows[0]["extra"]["error"]  # it completed, but the client never got it
    assert rows[1]["extra"]["backend_error"]["message"] == "boom"


async def test_a_stream_failing_in_choice_1_keeps_choice_0_as_delivered(
    tmp_path: Path, scripted: ScriptedBackend
) -> None:
    settings = make_settings(tmp_path)
    scripted.enqueue(ScriptedReply(content="red"), ScriptedReply(content="green and more", fail_after_chunks=1))
    async with app_client(settings, scripted) as client:
        response = await client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": 2, "stream": True})
        rows = await recorded(settings.home, 2)
    last = orjson.loads(sse_events(response.text)[-1])
    assert "error" in last
    assert rows[0]["final_response"] == "red"
    assert not {"error", "backend_error"} & set(rows[0]["extra"])
    assert "backend_error" in rows[1]["extra"]


def test_the_openai_sdk_reads_n_choices(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(content="one"), ScriptedReply(content="two"))
    upstream.enqueue(ScriptedReply(content="uno", chunk_size=1), ScriptedReply(content="dos", chunk_size=1))
    settings = make_settings(tmp_path, upstream_url=url, upstream_retries=0)
    with daemon_on_port(settings) as base, OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as sdk:
        completion = sdk.chat.completions.create(model="m", messages=SDK_MESSAGES, n=2)
        stream = sdk.chat.completions.create(model="m", messages=SDK_MESSAGES, n=2, stream=True)
        streamed: dict[int, str] = defaultdict(str)
        for chunk in stream:
            for choice in chunk.choices:
                streamed[choice.index] += choice.delta.content or ""
    assert sorted((c.index, c.message.content) for c in completion.choices) == [(0, "one"), (1, "two")]
    assert dict(streamed) == {0: "uno", 1: "dos"}
    assert all("n" not in r for r in upstream.requests)


async def test_a_client_leaving_cancels_the_pending_choices(tmp_path: Path) -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content="slow", delay_s=30.0)] * 2)
    with daemon_on_port(make_settings(tmp_path), backend) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            request = asyncio.ensure_future(client.post("/v1/chat/completions", json={"messages": MESSAGES, "n": 2}))
            await wait_until(lambda: len(backend.requests) == 2, timeout=2)
            request.cancel()  # httpx drops the connection
            with pytest.raises(asyncio.CancelledError):
                await request
            await wait_until(lambda: backend.cancelled == 2, timeout=2)
