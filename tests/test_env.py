"""Telemetry opt-outs are applied at import and reported."""

from __future__ import annotations

import os
import subprocess
import sys

from ghost_agent import _env


def test_flags_set_at_import_in_a_fresh_process() -> None:
    code = "import ghost_agent._env as e, json; print(json.dumps(e.check_disabled()))"
    env = {k: v for k, v in os.environ.items() if k not in _env._REQUIRED_FLAGS}
    env["POSTHOG_DISABLED"] = "0"  # a user's env must not re-enable telemetry
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert '"POSTHOG_DISABLED": true' in out.stdout
    assert "false" not in out.stdout


def test_check_disabled_reports_a_missing_flag() -> None:
    saved = os.environ.pop("DISABLE_VERSION_CHECK")
    try:
        assert _env.check_disabled()["DISABLE_VERSION_CHECK"] is False
    finally:
        os.environ["DISABLE_VERSION_CHECK"] = saved
    assert all(_env.check_disabled().values())
