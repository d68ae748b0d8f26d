"""Telemetry opt-outs, set at import time (the single source of truth).

Any library we (or a user's plugin) import later sees these before it can phone home.
`check_disabled()` is the verdict `doctor` and the tests read.
"""

from __future__ import annotations

import os

# name -> the value that disables the vendor's telemetry / update check.
_REQUIRED_FLAGS: dict[str, str] = {
    "ANONYMIZED_TELEMETRY": "False",
    "POSTHOG_DISABLED": "1",
    "TELEMETRY_IMPL": "none",
    "CHROMA_TELEMETRY_IMPL": "none",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "DISABLE_VERSION_CHECK": "1",
    "DO_NOT_TRACK": "1",
    "OTEL_SDK_DISABLED": "true",
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "FASTAPI_OTEL_AUTO_CONFIGURE": "false",
}


def apply() -> None:
    """Force every opt-out flag to its disabling value (a user's env cannot re-enable telemetry)."""
    for name, value in _REQUIRED_FLAGS.items():
        os.environ[name] = value


def check_disabled() -> dict[str, bool]:
    """Return flag -> True when the process environment has it set to the disabling value."""
    return {name: os.environ.get(name) == value for name, value in _REQUIRED_FLAGS.items()}


apply()
