"""Property-based fuzzing of the whole HTTP API from its own OpenAPI document (schemathesis CLI, all checks).

The daemon runs under a real uvicorn on a loopback port with the scripted in-process backend, so every
schema-valid request must succeed, every schema-violating one must get a documented 4xx, and every
response (JSON bodies and each SSE event of a stream) must match the documented schema.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_agent.llm.scripted import ScriptedBackend
from tests.conftest import daemon_on_port, make_settings

API_KEY = "fuzz-key"
MAX_EXAMPLES = 100


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


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("auth", [False, True], ids=["open", "api-key"])
def test_api_conforms_to_its_openapi_schema(tmp_path: Path, auth: bool) -> None:
    settings = make_settings(tmp_path, log_level="warning", api_key=API_KEY if auth else None)
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
    assert result.returncode == 0, f"schemathesis found problems:\n{result.stdout[-20000:]}\n{result.stderr[-5000:]}"
    assert "No issues found" in result.stdout, result.stdout[-5000:]
