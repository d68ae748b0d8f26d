"""Bodies Python's JSON parser accepts but that are not sendable JSON: refused with a 400 naming the field.

Lone UTF-16 surrogates, NaN, and nesting past orjson's limit used to reach the http upstream's encoder (a 500)
or the trajectory writer (a 200 whose record was lost). Integers past 64 bits are valid JSON: forwarded, not
refused (outside the documented range of a known field). The daemon here proxies to the scripted fake upstream
over real HTTP, so a value that slipped through would fail for real.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import orjson
import pytest

from ghost_agent.jsonsafe import MAX_DEPTH
from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import app_client, make_settings
from tests.server.test_errors import assert_openai_error

Upstream = tuple[str, ScriptedBackend]
HI = b'[{"role": "user", "content": "hi"}]'


def nested(depth: int) -> bytes:
    """A JSON value `depth` containers deep (lists)."""
    return b"[" * depth + b"]" * depth


def body(*fields: bytes, messages: bytes = HI) -> bytes:
    return b'{"messages": ' + messages + b"".join(b", " + f for f in fields) + b"}"


BAD = [
    (body(messages=b'[{"role": "user", "content": "hi \\ud800 there"}]'), "messages.0.content"),
    (body(b'"user": "\\udc00abc"'), "user"),
    (body(messages=b'[{"role": "user", "content": "hi", "name": "a\\udfff"}]'), "messages.0.name"),
    (
        body(messages=b'[{"role": "user", "content": [{"type": "text", "text": "\\ud83d"}]}]'),
        "messages.0.content.0.text",
    ),
    (body(b'"metadata": {"note": ["ok", "\\ud800"]}'), "metadata.note.1"),
    (body(b'"model": "m\\ud800"'), "model"),
    (body(b'"metadata": ' + nested(250)), "metadata"),
    (body(b'"response_format": {"type": "json_schema", "json_schema": ' + nested(300) + b"}"), "response_format"),
    (
        body(b'"tools": [{"type": "function", "function": {"name": "f", "parameters": {"a": ' + nested(260) + b"}}}]"),
        "tools",
    ),
    (body(b'"seed": 9007199254740992'), "seed"),  # a documented field's documented range (I-JSON's)
    (body(b'"max_tokens": 2147483648'), "max_tokens"),
    (body(b'"top_k": NaN'), "top_k"),
    (body(b'"extra_thing": -Infinity'), "extra_thing"),
]


@pytest.fixture
async def client(tmp_path: Path, fake_upstream: Upstream) -> AsyncIterator[httpx.AsyncClient]:
    settings = make_settings(tmp_path, upstream_url=fake_upstream[0], upstream_retries=0)
    async with app_client(settings, make_backend(settings.backend)) as c:
        yield c


async def post(client: httpx.AsyncClient, raw: bytes) -> httpx.Response:
    return await client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})


def finisher_failures(metrics_text: str) -> float:
    return sum(float(v) for v in re.findall(r"^ghost_finisher_failures_total\{[^}]*\} (\S+)$", metrics_text, re.M))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(("raw", "param"), BAD, ids=[p for _, p in BAD])
async def test_unwritable_json_is_400_naming_the_field(
    client: httpx.AsyncClient, fake_upstream: Upstream, raw: bytes, param: str, stream: bool
) -> None:
    if stream:
        raw = raw[:-1] + b', "stream": true}'
    response = await post(client, raw)
    assert_openai_error(response, 400, type="invalid_request_error", param=param)
    assert fake_upstream[1].requests == []  # refused before anything was forwarded
    ok = await post(client, body())
    assert ok.status_code == 200, ok.text


async def test_what_is_writable_passes_through_intact(client: httpx.AsyncClient, fake_upstream: Upstream) -> None:
    # A surrogate *pair* is one valid character; nesting up to the limit is fine; so is the largest seed, and an
    # integer past 64 bits in a pass-through field is valid JSON (it used to be a 500: orjson cannot write it).
    raw = body(
        b'"user": "\\ud83d\\ude00"',
        b'"metadata": ' + nested(MAX_DEPTH - 1),
        b'"seed": 9007199254740991',
        b'"x_big": 18446744073709551616',
        messages=b'[{"role": "user", "content": "smile \\ud83d\\ude00"}]',
    )
    response = await post(client, raw)
    assert response.status_code == 200, response.text
    sent = fake_upstream[1].requests[-1]
    assert sent["messages"][-1]["content"] == "smile \N{GRINNING FACE}"
    assert sent["seed"] == 2**53 - 1
    depth, value = 0, sent["metadata"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0] if value else None
    assert depth == MAX_DEPTH - 1


async def test_integers_past_64_bits_are_forwarded(client: httpx.AsyncClient, fake_upstream: Upstream) -> None:
    """Valid JSON orjson cannot write (it used to be a 500): the request goes out through the stdlib encoder."""
    raw = body(b'"logit_bias": {"50256": -99999999999999999999999}', b'"x_big": [18446744073709551616]')
    response = await post(client, raw)
    assert response.status_code == 200, response.text
    sent = fake_upstream[1].requests[-1]  # the fake upstream parses with orjson: big integers become floats
    assert sent["logit_bias"]["50256"] == pytest.approx(-1e23)
    assert sent["x_big"] == [pytest.approx(2.0**64)]


async def test_one_level_deeper_than_the_limit_is_refused(client: httpx.AsyncClient) -> None:
    response = await post(client, body(b'"metadata": ' + nested(MAX_DEPTH)))
    error = assert_openai_error(response, 400, param="metadata")
    assert str(MAX_DEPTH) in error["message"]


@pytest.mark.parametrize("router", ["always-fast", "always-agent"])
async def test_a_lone_surrogate_in_user_is_refused_and_nothing_is_lost(
    tmp_path: Path, scripted: ScriptedBackend, router: str
) -> None:
    """The reported case: a 200 whose trajectory the finisher then failed to write. Now a 400, nothing recorded,
    no finisher failure; the next turn is recorded as usual."""
    settings = make_settings(tmp_path, router=router)
    async with app_client(settings, scripted) as client:
        response = await post(client, body(b'"user": "\\ud800"'))
        assert_openai_error(response, 400, param="user")
        ok = await post(client, body(b'"user": "alice"'))
        assert ok.status_code == 200, ok.text
        metrics = (await client.get("/metrics")).text
    assert finisher_failures(metrics) == 0
    records = [orjson.loads(line) for f in settings.home.glob("system/trajectories/*/*.jsonl")
               for line in f.read_bytes().splitlines()]
    assert [r["session_id"] for r in records] == ["alice"]
