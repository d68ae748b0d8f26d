"""An upstream URL's `user:password@` is never shown or logged: health, startup log, upstream errors (to the client,
in the log, in the trajectory), doctor, the printed config. Everything goes through `privacy.redact.redact_url`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_agent.cli.doctor import run_doctor
from ghost_agent.home import GhostHome
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.http_upstream import HttpUpstreamBackend, upstream_message
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.settings import render_config_toml
from tests.conftest import app_client, make_settings

PASSWORD = "Upstr3amPassw0rd"
KEY = "daemon-api-key-123"
AUTH = {"authorization": f"Bearer {KEY}"}


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://ghost:{PASSWORD}@", 1)


@pytest.fixture
def upstream_url(fake_upstream: tuple[str, ScriptedBackend]) -> Iterator[str]:
    url, backend = fake_upstream
    backend.enqueue(ScriptedReply(content="hello"))
    yield _with_credentials(url)


def _everything_on_disk(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


async def test_health_and_startup_log_never_show_the_upstream_password(tmp_path: Path, upstream_url: str) -> None:
    settings = make_settings(tmp_path, upstream_url=upstream_url, api_key=KEY)
    async with app_client(settings, HttpUpstreamBackend(settings.backend.upstream_url or "")) as client:
        shown = []
        for path in ("/health", "/v1/ghost/health"):
            for headers in ({}, AUTH):
                response = await client.get(path, headers=headers)
                assert response.status_code in (200, 401, 404), response.text
                shown.append(response.text)
        chat = await client.post("/v1/chat/completions", headers=AUTH,
                                 json={"messages": [{"role": "user", "content": "hi"}]})
        assert chat.status_code == 200, chat.text
    assert any("127.0.0.1" in text for text in shown)  # the host stays readable where the detail is shown
    for text in shown:
        assert PASSWORD not in text
    log = GhostHome(settings.home).log_file.read_text()
    assert '"startup"' in log and "<REDACTED_CREDENTIALS>@127.0.0.1" in log
    assert PASSWORD not in _everything_on_disk(settings.home)


async def test_an_unreachable_upstream_error_names_it_without_the_password(tmp_path: Path) -> None:
    url = f"http://ghost:{PASSWORD}@127.0.0.1:{free_port()}/v1"  # nothing listens there
    settings = make_settings(tmp_path, upstream_url=url, upstream_retries=0)
    backend = HttpUpstreamBackend(url, retries=0, connect_timeout=1.0)
    async with app_client(settings, backend) as client:
        response = await client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        health = await client.get("/v1/ghost/health")
    assert response.status_code == 502
    assert "127.0.0.1" in response.text and PASSWORD not in response.text
    assert PASSWORD not in health.text
    assert PASSWORD not in _everything_on_disk(settings.home)  # the log and the trajectory of the failed turn


def test_doctor_and_the_printed_config_hide_the_password(tmp_path: Path) -> None:
    url = f"http://ghost:{PASSWORD}@127.0.0.1:{free_port()}"
    settings = make_settings(tmp_path, upstream_url=url, upstream_connect_timeout=0.5)
    out = io.StringIO()
    run_doctor(settings, out=out)
    assert "upstream" in out.getvalue() and "127.0.0.1" in out.getvalue()
    assert PASSWORD not in out.getvalue()
    printed = render_config_toml(settings, {"upstream_url": "flag"})
    assert "<REDACTED_CREDENTIALS>@127.0.0.1" in printed and PASSWORD not in printed
    assert PASSWORD not in str(settings.public_dict())


def test_an_upstream_error_message_is_redacted_before_it_is_cut() -> None:
    # Cut first at 500 characters, the key would be split and its head would survive redaction.
    body = ("x" * 480 + " sk-proj-" + "Ab1Cd2Ef3G" * 6).encode()
    message = upstream_message(body, 500)
    assert "sk-proj" not in message and message.endswith(" <REDACTED_API_KEY>")
