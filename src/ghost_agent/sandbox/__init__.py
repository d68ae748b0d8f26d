"""Run model-written code safely (DESIGN §1c): bubblewrap when it works, else no code at all (`SandboxRefused`)
unless running it unisolated was opted into (`--sandbox unisolated|subprocess`: a loudly unisolated restricted
subprocess); per-session workspaces. `get_sandbox()` returns the detected backend (cached)."""

from __future__ import annotations

from ghost_agent.sandbox.base import (
    LANGUAGES,
    TRUNCATION_MARKER,
    ExecLimits,
    ExecResult,
    Isolation,
    SandboxBackend,
    SandboxError,
    SandboxRefused,
)
from ghost_agent.sandbox.bwrap import BwrapSandbox
from ghost_agent.sandbox.detect import (
    Detection,
    ProbeResult,
    detect,
    doctor_check,
    get_detection,
    get_sandbox,
    probe,
    reset_cache,
)
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox
from ghost_agent.sandbox.workspace import CleanupReport, QuotaStatus, Workspaces, workspace_name

__all__ = [
    "LANGUAGES",
    "TRUNCATION_MARKER",
    "BwrapSandbox",
    "CleanupReport",
    "Detection",
    "ExecLimits",
    "ExecResult",
    "Isolation",
    "ProbeResult",
    "QuotaStatus",
    "RestrictedSubprocessSandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxRefused",
    "Workspaces",
    "detect",
    "doctor_check",
    "get_detection",
    "get_sandbox",
    "probe",
    "reset_cache",
    "workspace_name",
]
