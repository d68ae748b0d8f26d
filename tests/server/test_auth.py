"""Bearer auth on /v1/* and /metrics, /health left open, and refusing to expose an unauthenticated daemon."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.settings import Settings, SettingsError
from tests.conftest import app_client, daemon_on_port, make_settings
from tests.server.test_errors import assert_openai_error

KEY = "s3cret-key-0123456789"  # 16+ characters: a non-loopback bind refuses shorter keys
CHAT = {"messages": [{"role": "user", "content": "hi"}]}
PROTECTED = [("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("GET", "/metrics"), ("GET", "/v1/unknown")]


@pytest.fixture
async def authed(tmp_path: Path, scripted: ScriptedBackend) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(make_settings(tmp_path, api_key=KEY), scripted) as client:
        yield client


def assert_401(response: httpx.Response) -> None:
    error = assert_openai_error(response, 401, type="authentication_error")
    assert error["code"] == "invalid_api_key"
    assert response.headers["www-authenticate"] == "Bearer"
    assert KEY not in response.text


@pytest.mark.parametrize(("method", "path"), PROTECTED)
@pytest.mark.parametrize(
    "authorization",
    [None, f"Bearer {KEY}x", f"Bearer {KEY[:-1]}", "Bearer", "Bearer ", f"Basic {KEY}", KEY, f"Token {KEY}", ""],
    ids=["missing", "longer", "shorter", "bearer-only", "bearer-space", "basic", "bare-key", "token", "empty"],
)
async def test_wrong_or_missing_key_is_401(
    authed: httpx.AsyncClient, scripted: ScriptedBackend, method: str, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"authorization": authorization}
    response = await authed.request(method, path, json=CHAT if method == "POST" else None, headers=headers)
    assert_401(response)
    assert scripted.requests == []


async def test_correct_key_works(authed: httpx.AsyncClient, scripted: ScriptedBackend) -> None:
    headers = {"authorization": f"Bearer {KEY}"}
    assert (await authed.get("/v1/models", headers=headers)).status_code == 200
    assert (await authed.get("/metrics", headers=headers)).status_code == 200
    response = await authed.post("/v1/chat/completions", json=CHAT, headers=headers)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "hi"
    assert (await authed.get("/v1/unknown", headers=headers)).status_code == 404


async def test_auth_scheme_is_case_insensitive(authed: httpx.AsyncClient) -> None:
    # RFC 9110: the auth scheme is case-insensitive; the token is not.
    for scheme in ("bearer", "BEARER", "Bearer"):
        response = await authed.get("/v1/models", headers={"authorization": f"{scheme} {KEY}"})
        assert response.status_code == 200, scheme
    assert_401(await authed.get("/v1/models", headers={"authorization": f"bearer {KEY.upper()}"}))


async def test_health_stays_open(authed: httpx.AsyncClient) -> None:
    response = await authed.get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    wrong = await authed.get("/health", headers={"authorization": "Bearer wrong"})
    assert wrong.status_code == 200


async def test_auth_is_checked_before_the_body(authed: httpx.AsyncClient, tmp_path: Path) -> None:
    # An unauthenticated client learns nothing about the request it sent, not even that it was malformed.
    response = await authed.post(
        "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_401(response)
    big = await authed.post("/v1/chat/completions", content=b"x" * (5 * 1024 * 1024))
    assert_401(big)


async def test_no_key_configured_means_open(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/models")).status_code == 200
    assert (await client.get("/metrics", headers={"authorization": "Bearer anything"})).status_code == 200


async def test_auth_on_a_real_port(tmp_path: Path, scripted: ScriptedBackend) -> None:
    with daemon_on_port(make_settings(tmp_path, api_key=KEY), scripted) as url:
        async with httpx.AsyncClient(base_url=url, timeout=5) as client:
            assert_401(await client.post("/v1/chat/completions", json=CHAT))
            # Percent-encoding the path must not sneak around the check.
            assert_401(await client.get("/%6detrics"))
            assert_401(await client.get("/v1/%6dodels"))
            ok = await client.post("/v1/chat/completions", json=CHAT, headers={"authorization": f"Bearer {KEY}"})
            assert ok.status_code == 200
            assert (await client.get("/health")).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_non_loopback_bind_without_key_is_refused(tmp_path: Path, host: str) -> None:
    with pytest.raises(SettingsError, match="api key"):
        Settings.from_keys(host=host, home=tmp_path).validate()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10"])
def test_non_loopback_bind_is_allowed_with_a_key_or_explicit_opt_out(tmp_path: Path, host: str) -> None:
    assert Settings.from_keys(host=host, home=tmp_path, api_key=KEY).validate().server.api_key == KEY
    assert Settings.from_keys(host=host, home=tmp_path, insecure_no_auth=True).validate().server.insecure_no_auth


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_bind_needs_no_key(tmp_path: Path, host: str) -> None:
    assert Settings.from_keys(host=host, home=tmp_path).validate().server.host == host


def test_empty_key_is_no_key(tmp_path: Path) -> None:
    with pytest.raises(SettingsError):
        Settings.from_keys(host="0.0.0.0", home=tmp_path, api_key="").validate()


@pytest.mark.parametrize("key", [" ", "\t \n", " s3cret", "s3cret\n"], ids=["space", "blank", "leading", "trailing"])
def test_a_blank_or_padded_key_is_refused(tmp_path: Path, key: str) -> None:
    """Clients' tokens are compared stripped, so such a key could never be sent: it would lock everyone out
    (and, being truthy, unlock a non-loopback bind nobody can use)."""
    with pytest.raises(SettingsError, match="whitespace"):
        Settings.from_keys(host="0.0.0.0", home=tmp_path, api_key=key).validate()


def test_serve_with_a_blank_key_exits_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli.test_main import run_cli

    monkeypatch.setenv("GHOST_API_KEY", "   ")
    code, _, err = run_cli(["serve", "--home", str(tmp_path), "--upstream-url", "http://127.0.0.1:9"], capsys)
    assert code == 2
    assert "api_key is blank or starts/ends with whitespace" in err
    assert not (tmp_path / "system").exists()  # nothing was started
