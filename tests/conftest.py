"""Shared fixtures: settings on a temp home, the scripted backend, the daemon in-process or on a real port."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import structlog

from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.fake_server import FakeOpenAIServer, serve_in_thread
from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.sandbox import SandboxBackend, SandboxError, get_sandbox
from ghost_agent.server import build_app
from ghost_agent.server.runner import http_protocol
from ghost_agent.settings import Settings


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    """Settings on a private home; anything may be overridden.

    The router is forced to the fast path here: the server/proxy tests exercise one backend call per request.
    Agent-turn tests pass `router="always-agent"` (or "auto") explicitly.
    """
    values: dict[str, Any] = {
        "home": tmp_path / "home",
        "model_cache_dir": tmp_path / "models",
        "router": "always-fast",
    }
    values.update(overrides)
    return Settings.from_keys(**values).validate()


@pytest.fixture(scope="module")
def sandbox() -> SandboxBackend:
    """The sandbox this machine detects; the module is skipped (with the reason) where none can run."""
    try:
        return get_sandbox()
    except SandboxError as exc:
        pytest.skip(f"no sandbox backend can run here: {exc}")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def scripted() -> ScriptedBackend:
    return ScriptedBackend(model="scripted-model")


@contextlib.asynccontextmanager
async def app_client(settings: Settings, backend: LLMBackend) -> AsyncIterator[httpx.AsyncClient]:
    """The daemon in-process: lifespan run for real, requests over httpx.ASGITransport."""
    app = build_app(settings, backend, configure_logs=True)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
                yield client
    finally:
        structlog.reset_defaults()  # the app configured process-wide logging; later tests start clean


@pytest.fixture
async def client(settings: Settings, scripted: ScriptedBackend) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings, scripted) as c:
        yield c


@pytest.fixture
def fake_upstream() -> Iterator[tuple[str, ScriptedBackend]]:
    """The scripted fake OpenAI server on a real loopback port: (base url, its backend)."""
    backend = ScriptedBackend(model="upstream-model")
    with serve_in_thread(FakeOpenAIServer(backend)) as url:
        yield url, backend


@pytest.fixture
def upstream() -> Iterator[tuple[str, ScriptedBackend]]:
    """Like `fake_upstream`, but a request the test did not script is answered with an error (so an
    unexpected model call fails the test loudly instead of getting an echo)."""
    backend = ScriptedBackend(model="upstream-model", default="error")
    with serve_in_thread(FakeOpenAIServer(backend)) as url:
        yield url, backend


@contextlib.contextmanager
def daemon_on_port(settings: Settings, backend: LLMBackend | None = None) -> Iterator[str]:
    """The daemon under a real uvicorn on a loopback port (its own thread and loop); yields the base url."""
    app = build_app(settings, backend)
    try:
        with serve_in_thread(app, http=http_protocol(settings, app)) as url:
            yield url
    finally:
        structlog.reset_defaults()


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    """Poll `predicate()` until true or fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def sse_events(text: str) -> list[str]:
    """The `data:` payloads of an SSE body, in order."""
    return [line[len("data: "):] for line in text.split("\n") if line.startswith("data: ")]


@pytest.fixture
def use_checkpoint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Callable[[ModuleType, str | bytes | None], Path]]:
    """Swap a shipped text model's checkpoint (`module.CHECKPOINT`, read by the cached `module.default_model`) for
    a file holding `content` (None: no file at all) for one test; the cache is dropped before and after."""
    used: list[ModuleType] = []

    def use(module: ModuleType, content: str | bytes | None) -> Path:
        path = tmp_path / "checkpoint.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content, encoding="utf-8")
        monkeypatch.setattr(module, "CHECKPOINT", path)
        module.default_model.cache_clear()
        used.append(module)
        return path

    yield use
    for module in used:
        module.default_model.cache_clear()
