"""A client that goes away cancels the generation behind it: in the backend, and through the http upstream.

The daemon runs under a real uvicorn on a loopback port: only a real connection can be dropped mid-reply.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import daemon_on_port, make_settings, wait_until
from tests.server.test_errors import assert_serves

MESSAGES = [{"role": "user", "content": "tell me a long story"}]
LONG = ScriptedReply(content="x" * 400, chunk_size=1, chunk_delay_s=0.02)  # ~8 s if nobody stops it
SLOW = ScriptedReply(content="never delivered", delay_s=30)


@contextlib.contextmanager
def daemon(tmp_path: Path, scripted: ScriptedBackend, upstream: str | None) -> Iterator[str]:
    """The daemon on a real port, on the scripted backend directly or on the fake upstream over HTTP."""
    if upstream is None:
        with daemon_on_port(make_settings(tmp_path), scripted) as url:
            yield url
    else:
        with daemon_on_port(make_settings(tmp_path, upstream_url=upstream)) as url:
            yield url


@pytest.fixture(params=["direct", "via-upstream"])
def setup(
    request: pytest.FixtureRequest, scripted: ScriptedBackend, fake_upstream: tuple[str, ScriptedBackend]
) -> tuple[str | None, ScriptedBackend]:
    """(upstream url or None, the backend whose generation must be cancelled)."""
    if request.param == "direct":
        return None, scripted
    return fake_upstream


async def test_stream_disconnect_cancels_generation(
    tmp_path: Path, setup: tuple[str | None, ScriptedBackend]
) -> None:
    upstream, backend = setup
    backend.enqueue(LONG)
    with daemon(tmp_path, backend if upstream is None else ScriptedBackend(), upstream) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            body = {"messages": MESSAGES, "stream": True}
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                assert response.status_code == 200
                events = []
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        events.append(orjson.loads(line[6:]))
                        if len(events) == 2:
                            break
            assert events[1]["choices"][0]["delta"] == {"content": "x"}
            await wait_until(lambda: backend.cancelled == 1, timeout=2)
            await asyncio.sleep(0.1)
            assert backend.cancelled == 1
            assert len(backend.requests) == 1
            await assert_serves(client)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_disconnect_while_waiting_for_the_first_byte_cancels_generation(
    tmp_path: Path, setup: tuple[str | None, ScriptedBackend], stream: bool
) -> None:
    upstream, backend = setup
    backend.enqueue(SLOW)
    with daemon(tmp_path, backend if upstream is None else ScriptedBackend(), upstream) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            request = asyncio.ensure_future(
                client.post("/v1/chat/completions", json={"messages": MESSAGES, "stream": stream})
            )
            await wait_until(lambda: len(backend.requests) == 1, timeout=2)
            request.cancel()  # httpx drops the connection
            with pytest.raises(asyncio.CancelledError):
                await request
            await wait_until(lambda: backend.cancelled == 1, timeout=2)
            await assert_serves(client)
