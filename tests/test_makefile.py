"""The Makefile's plan, read with `make -n` (nothing is run): `make run` installs the model extras only when needed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODEL_EXTRAS = ".[dev,local,local-small]"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(tmp_path: Path, *make_args: str, env: dict[str, str] | None = None) -> str:
    """The commands `make -n run` would run, for a fresh venv (so no install stamp hides a step)."""
    base = {k: v for k, v in os.environ.items() if k != "GHOST_UPSTREAM_URL" and not k.startswith("MAKE")}
    result = subprocess.run(
        ["make", "-n", "run", f"VENV={tmp_path / 'venv'}", *make_args],
        cwd=REPO, capture_output=True, text=True, timeout=60, env={**base, **(env or {})},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_run_on_the_embedded_model_installs_the_model_extras(tmp_path: Path) -> None:
    plan = planned(tmp_path)
    assert MODEL_EXTRAS in plan
    assert plan.rstrip().endswith("ghost-agent serve")


@pytest.mark.parametrize(
    ("make_args", "env"),
    [
        (['ARGS=--upstream-url http://127.0.0.1:8080'], None),
        (['ARGS=--port 9000 --upstream-url=http://127.0.0.1:8080'], None),
        ([], {"GHOST_UPSTREAM_URL": "http://127.0.0.1:8080"}),
    ],
)
def test_run_against_an_upstream_skips_the_model_extras(
    tmp_path: Path, make_args: list[str], env: dict[str, str] | None
) -> None:
    plan = planned(tmp_path, *make_args, env=env)
    assert MODEL_EXTRAS not in plan and ".local-installed" not in plan
    assert "install -e '.[dev]'" in plan  # the package itself is still set up
    assert "ghost-agent serve" in plan
