"""CORS: no Access-Control-* headers by default; with `--cors-allow-origins`, allowed origins get them (the
preflight without an api key, replies and errors alike) and others are refused without them (server/hosts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.settings import SettingsError, load_settings
from tests.conftest import app_client, make_settings

APP = "http://localhost:3000"
PREFLIGHT = {
    "Origin": APP,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


async def test_cors_is_off_by_default(tmp_path: Path, scripted: ScriptedBackend) -> None:
    async with app_client(make_settings(tmp_path), scripted) as c:
        preflight = await c.options("/v1/chat/completions", headers=PREFLIGHT)
        reply = await c.post("/v1/chat/completions", json=CHAT, headers={"Origin": APP})
        models = await c.get("/v1/models", headers={"Origin": APP})
    assert reply.status_code == 200 and models.status_code == 200
    assert preflight.status_code == 405
    for response in (preflight, reply, models):
        assert not any(h.startswith("access-control-") for h in response.headers)


async def test_an_allowed_origin_gets_cors_headers(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path, api_key="k", cors_allow_origins=f"{APP}, https://app.example.com")
    async with app_client(settings, scripted) as c:
        preflight = await c.options("/v1/chat/completions", headers=PREFLIGHT)  # browsers send no key here
        reply = await c.post("/v1/chat/completions", json=CHAT, headers={"Origin": APP, "Authorization": "Bearer k"})
        denied = await c.post("/v1/chat/completions", json=CHAT, headers={"Origin": APP})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == APP
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    assert reply.status_code == 200
    assert reply.headers["access-control-allow-origin"] == APP
    assert "x-request-id" in reply.headers["access-control-expose-headers"]
    # An error reply carries the headers too, so the page can read why.
    assert denied.status_code == 401 and denied.headers["access-control-allow-origin"] == APP


async def test_other_origins_get_nothing(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path, cors_allow_origins=APP)
    async with app_client(settings, scripted) as c:
        preflight = await c.options("/v1/chat/completions", headers={**PREFLIGHT, "Origin": "https://evil.example"})
        reply = await c.post("/v1/chat/completions", json=CHAT, headers={"Origin": "https://evil.example"})
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    assert reply.status_code == 403 and "access-control-allow-origin" not in reply.headers
    assert reply.json()["error"]["code"] == "origin_not_allowed"
    assert scripted.requests == []  # the foreign page's request never reached the model


def test_the_setting_comes_from_flag_env_and_config(tmp_path: Path) -> None:
    config = tmp_path / "ghost.toml"
    config.write_text('[server]\ncors_allow_origins = "http://a.test"\n')
    home = str(tmp_path / "home")
    assert load_settings(environ={"GHOST_HOME": home}).server.cors_origins == []
    assert load_settings(environ={"GHOST_HOME": home}, config_path=config).server.cors_origins == ["http://a.test"]
    env = {"GHOST_HOME": home, "GHOST_CORS_ALLOW_ORIGINS": "http://b.test/, http://[::1]:8080"}
    assert load_settings(environ=env).server.cors_origins == ["http://b.test", "http://[::1]:8080"]
    assert load_settings(cli={"cors_allow_origins": "*"}, environ=env).server.cors_origins == ["*"]


@pytest.mark.parametrize("bad", ["localhost:3000", "http://a.test/path", "http://a.test:port", "a.test"])
def test_a_value_that_is_not_an_origin_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(SettingsError, match="cors_allow_origins"):
        make_settings(tmp_path, cors_allow_origins=bad)
