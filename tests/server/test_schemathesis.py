"""Property-based fuzzing of the whole HTTP API from its own OpenAPI document (schemathesis CLI, all checks),
plus the inputs schemathesis cannot generate (lone surrogates, deep nesting, 65-bit integers, NaN).

The daemon runs under a real uvicorn on a loopback port with the scripted in-process backend, so every
schema-valid request must succeed, every schema-violating one must get a documented 4xx, and every
response (JSON bodies and each SSE event of a stream) must match the documented schema. After each run the
daemon itself is checked: no 5xx counted, no finisher failure, and one trajectory for every completion it
answered with 200 (a reply the client saw is never left unrecorded).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import daemon_on_port, make_settings

API_KEY = "fuzz-key"
MAX_EXAMPLES = 100
CHAT = "/v1/chat/completions"


def schemathesis_command(url: str, *extra: str) -> list[str]:
    """The bounded fuzz run (also what `make fuzz` runs, with the url of a live daemon)."""
    return [
        str(Path(sys.executable).parent / "schemathesis"),
        "run", f"{url}/openapi.json",
        "--checks", "all",
        "--max-examples", str(MAX_EXAMPLES),
        "--generation-database", "none",
        "--no-color",
        *extra,
    ]


def cases_and_failures(stdout: str) -> tuple[int, int]:
    """(test cases generated, unique failures) from the summary (`N generated, M passed` or
    `N generated, found K unique failures`)."""
    generated = re.search(r"(\d+) generated", stdout)
    assert generated is not None, stdout[-3000:]
    failed = re.search(r"found (\d+) unique failure", stdout)
    return int(generated.group(1)), int(failed.group(1)) if failed else 0


def metric(text: str, name: str, **labels: str) -> float:
    """Sum of a Prometheus series' samples whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


def recorded_requests(home: Path) -> int:
    """Trajectories that stand for one request each (choice 0 of an `n > 1` request, or a single reply)."""
    count = 0
    for path in home.glob("system/trajectories/*/*.jsonl"):
        for line in path.read_bytes().splitlines():
            choice = orjson.loads(line)["extra"].get("choice")
            count += choice is None or choice["index"] == 0
    return count


def assert_daemon_healthy(url: str, home: Path, headers: dict[str, str]) -> None:
    """No 5xx, no finisher failure, and every 200 on the chat route recorded (waiting for the finishers)."""
    import time

    deadline = time.monotonic() + 10
    while True:
        text = httpx.get(f"{url}/metrics", headers=headers, timeout=5).text
        answered = metric(text, "ghost_requests_total", path=CHAT, status="200")
        if recorded_requests(home) >= answered or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    server_errors = sum(metric(text, "ghost_requests_total", status=str(s)) for s in range(500, 600))
    assert server_errors == 0
    assert metric(text, "ghost_finisher_failures_total") == 0
    assert recorded_requests(home) == answered


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("auth", "router"),
    [(False, "always-fast"), (True, "always-fast"), (False, "always-agent")],
    ids=["open", "api-key", "agent-route"],
)
def test_api_conforms_to_its_openapi_schema(tmp_path: Path, auth: bool, router: str) -> None:
    settings = make_settings(
        tmp_path, log_level="warning", api_key=API_KEY if auth else None, router=router,
        agent_strategy="answer-first", check_compute=False,
    )
    headers = {"Authorization": f"Bearer {API_KEY}"} if auth else {}
    extra = ["--header", f"Authorization: Bearer {API_KEY}"] if auth else []
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with daemon_on_port(settings, ScriptedBackend()) as url:
        result = subprocess.run(
            schemathesis_command(url, *extra),
            cwd=tmp_path,  # its replay store stays out of the repository
            env=env,
            capture_output=True,
            text=True,
            timeout=280,
        )
        cases, failures = cases_and_failures(result.stdout)
        print(f"schemathesis[{'api-key' if auth else 'open'},{router}]: {cases} cases, {failures} failures")
        report = f"schemathesis found problems:\n{result.stdout[-20000:]}\n{result.stderr[-5000:]}"
        assert result.returncode == 0, report
        assert "No issues found" in result.stdout, result.stdout[-5000:]
        assert failures == 0 and cases >= 300
        assert_daemon_healthy(url, settings.home, headers)


# ---------------------------------------------------------------- what schemathesis cannot generate

# Any Unicode code point, lone surrogates included (schemathesis encodes strings as UTF-8, which cannot).
_text = st.text(alphabet=st.characters(codec=None), max_size=12)
_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | _text
_value = st.recursive(
    _scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=12
)


@st.composite
def _hostile_body(draw: st.DrawFn) -> bytes:
    """A chat request whose fields (known or passed through) hold hostile values, as raw JSON bytes."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": draw(_text)}]}
    for key in draw(st.lists(st.sampled_from(["user", "metadata", "response_format", "seed", "x_extra", "name"]),
                             max_size=3, unique=True)):
        if key == "name":
            body["messages"][0]["name"] = draw(_text)
        else:
            body[key] = draw(_value)
    if draw(st.booleans()):
        depth = draw(st.integers(100, 400))
        body["x_deep"] = "DEEP"
        raw = json.dumps(body, ensure_ascii=True, allow_nan=True)  # \uXXXX escapes carry lone surrogates
        return raw.replace('"DEEP"', "[" * depth + "]" * depth).encode()
    body["stream"] = draw(st.booleans())
    return json.dumps(body, ensure_ascii=True, allow_nan=True).encode()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("router", ["always-fast", "always-agent"])
def test_hostile_json_is_never_a_server_error(tmp_path: Path, router: str) -> None:
    """400 (refused at the door) or 200 (and recorded); never a 5xx, never a lost record."""
    settings_ = make_settings(tmp_path, log_level="warning", router=router, agent_strategy="answer-first",
                              check_compute=False)
    with daemon_on_port(settings_, ScriptedBackend()) as url, httpx.Client(base_url=url, timeout=30) as client:
        statuses: dict[int, int] = {}

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(_hostile_body())
        def fuzz(raw: bytes) -> None:
            response = client.post(CHAT, content=raw, headers={"content-type": "application/json"})
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code in (200, 400), response.text[:500]
            if response.status_code == 400:
                error = response.json()["error"]
                assert set(error) == {"message", "type", "param", "code"}

        fuzz()
        print(f"hostile-json[{router}]: {sum(statuses.values())} cases, statuses {dict(sorted(statuses.items()))}")
        assert statuses.get(400) and statuses.get(200)
        assert_daemon_healthy(url, settings_.home, {})
