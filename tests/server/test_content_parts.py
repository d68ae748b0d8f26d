"""Content parts a model may not read (docs/openai-api.md, "Content parts"): a text-only backend refuses image,
audio and file parts with a 400 naming the part; an upstream receives them unchanged, on the fast path even when
the router would pick the agent; an unknown part type is a 400 everywhere."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.llm.embedded.backend import EmbeddedBackend
from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import app_client, make_settings

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
FILE = {"type": "file", "file": {"file_data": "JVBERi0=", "filename": "a.pdf"}}


def asking(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is in this?"}, *parts]},
    ]}


@dataclass
class TextOnlyBackend(ScriptedBackend):
    """A scripted model that reads text only, as the embedded one declares."""

    content_parts = frozenset({"text"})


def test_the_embedded_model_declares_text_only() -> None:
    assert EmbeddedBackend.content_parts == frozenset({"text"})


@pytest.mark.parametrize(("part", "kind"), [(IMAGE, "image_url"), (AUDIO, "input_audio"), (FILE, "file")])
async def test_a_text_only_model_refuses_other_parts_naming_them(
    tmp_path: Path, part: dict[str, Any], kind: str
) -> None:
    backend = TextOnlyBackend(model="local")
    async with app_client(make_settings(tmp_path), backend) as c:
        response = await c.post("/v1/chat/completions", json=asking(part))
        text_only = await c.post("/v1/chat/completions", json=asking({"type": "text", "text": "more"}))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "messages.1.content.1" and error["code"] == "unsupported_content_part"
    assert f"`{kind}` part" in error["message"] and "reads only text" in error["message"]
    assert text_only.status_code == 200
    assert len(backend.requests) == 1  # only the text request reached the model


@pytest.mark.parametrize("router", ["always-fast", "always-agent"])
async def test_an_upstream_receives_the_parts_unchanged_on_the_fast_path(
    tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend], router: str
) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(content="A cat."))
    settings = make_settings(tmp_path, upstream_url=url, router=router, upstream_retries=0)
    body = asking(IMAGE, AUDIO)
    async with app_client(settings, make_backend(settings.backend)) as c:
        response = await c.post("/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "A cat."
    # One call, the client's messages as sent: the agent never saw (and could not drop) the parts.
    assert len(upstream.requests) == 1
    assert upstream.requests[0]["messages"][-1] == body["messages"][-1]


async def test_an_upstreams_refusal_is_relayed(tmp_path: Path, fake_upstream: tuple[str, ScriptedBackend]) -> None:
    url, upstream = fake_upstream
    upstream.enqueue(ScriptedReply(error=(400, "image input is not supported by this model")))
    settings = make_settings(tmp_path, upstream_url=url, upstream_retries=0)
    async with app_client(settings, make_backend(settings.backend)) as c:
        response = await c.post("/v1/chat/completions", json=asking(IMAGE))
    assert response.status_code == 400
    assert "image input is not supported" in response.json()["error"]["message"]


@pytest.mark.parametrize("backend", [ScriptedBackend(), TextOnlyBackend()], ids=["any-parts", "text-only"])
async def test_an_unknown_part_type_is_400(tmp_path: Path, backend: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path), backend) as c:
        response = await c.post("/v1/chat/completions", json=asking({"type": "video_url", "video_url": {"url": "x"}}))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "messages.1.content.1"
    assert "'video_url'" in error["message"] and "'image_url', 'input_audio', 'file'" in error["message"]
    assert backend.requests == []
