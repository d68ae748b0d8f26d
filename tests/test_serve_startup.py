"""`ghost-agent serve` startup as a user sees it: the banner only once the port accepts, documented exit codes.

The daemon runs as a real process (`python -m ghost_agent serve`) against the scripted fake upstream on
loopback, so no model is ever loaded.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ghost_agent.server.runner import EXIT_BIND, EXIT_OK, EXIT_STARTUP, EXIT_USAGE

REPO = Path(__file__).resolve().parents[1]


def serve_command(home: Path, upstream_url: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "ghost_agent", "serve",
        "--port", str(port), "--upstream-url", upstream_url, "--home", str(home),
        "--upstream-retries", "0", "--router", "always-fast",
    ]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GHOST_")}


def test_port_in_use_exits_with_the_documented_code_and_no_banner(
    tmp_path: Path, fake_upstream: tuple[str, object]
) -> None:
    url, _ = fake_upstream
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            serve_command(tmp_path / "home", url, port), capture_output=True, text=True, timeout=60, env=clean_env()
        )
    assert result.returncode == EXIT_BIND == 4, result.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "already in use" in result.stderr and "--port" in result.stderr
    assert "listening" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "home").exists()  # it failed before building anything (no backend, no model)


def test_banner_names_the_bound_port_only_once_it_accepts(tmp_path: Path, fake_upstream: tuple[str, object]) -> None:
    url, _ = fake_upstream
    stderr_path = tmp_path / "daemon.stderr"
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(
            serve_command(tmp_path / "home", url, 0), stdout=subprocess.DEVNULL, stderr=stderr, env=clean_env()
        )
    try:
        deadline = time.monotonic() + 30
        banner = None
        while banner is None:
            if proc.poll() is not None:
                pytest.fail(f"daemon exited with {proc.returncode}: {stderr_path.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no banner: {stderr_path.read_text()}")
            banner = re.search(r"ghost-agent listening on (http://127\.0\.0\.1:(\d+))", stderr_path.read_text())
            time.sleep(0.02)
        assert int(banner.group(2)) != 0  # the real port, not the 0 that was asked for
        # printed once the socket accepts: the very first request after the banner is answered
        assert httpx.get(banner.group(1) + "/health", timeout=5).status_code == 200
        log = (tmp_path / "home" / "system" / "logs" / "ghost.jsonl").read_text()
        assert '"event":"listening"' in log and banner.group(1) in log
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    assert code == EXIT_OK


def test_the_exit_codes_are_documented() -> None:
    text = (REPO / "docs" / "operations.md").read_text()
    section = text[text.index("## Exit codes"):]
    for code in (EXIT_OK, EXIT_USAGE, EXIT_STARTUP, EXIT_BIND):
        assert re.search(rf"^\| {code} \|", section, re.MULTILINE), code


def test_a_failing_startup_exits_with_the_documented_code_and_no_banner(
    tmp_path: Path, fake_upstream: tuple[str, object]
) -> None:
    url, _ = fake_upstream
    home = tmp_path / "home"
    home.write_text("a file where GHOST_HOME should be a directory")
    result = subprocess.run(serve_command(home, url, 0), capture_output=True, text=True, timeout=60, env=clean_env())
    assert result.returncode == EXIT_STARTUP == 3, result.stderr
    assert "startup failed" in result.stderr
    assert "listening" not in result.stderr
