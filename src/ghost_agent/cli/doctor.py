"""`ghost-agent doctor`: one line per check, OK / WARN / FAIL, and the fix for anything not OK."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

import httpx

from ghost_agent import _env
from ghost_agent.home import GhostHome
from ghost_agent.settings import Settings

CORE_PACKAGES = ("fastapi", "uvicorn", "httpx", "numpy", "orjson", "structlog", "prometheus_client", "pydantic")


@dataclass
class Check:
    """The verdict of one check."""

    name: str
    status: str  # OK | WARN | FAIL
    detail: str
    fix: str = ""


def check_python() -> Check:
    ok = sys.version_info >= (3, 11)
    version = ".".join(map(str, sys.version_info[:3]))
    return Check("python", "OK" if ok else "FAIL", f"{version} at {sys.executable}", "use Python 3.11 or newer")


def check_packages() -> Check:
    missing, versions = [], []
    for name in CORE_PACKAGES:
        try:
            importlib.import_module(name)
            versions.append(f"{name} {importlib.metadata.version(name.replace('_', '-'))}")
        except (ImportError, importlib.metadata.PackageNotFoundError):
            missing.append(name)
    if missing:
        return Check("packages", "FAIL", "missing: " + ", ".join(missing), "pip install -e . (or make install)")
    return Check("packages", "OK", "; ".join(versions))


def check_home(settings: Settings) -> Check:
    home = GhostHome(settings.home)
    try:
        home.ensure()
        with tempfile.NamedTemporaryFile(dir=home.system, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("home", "FAIL", f"{home.root} not writable: {exc}", "set --home / GHOST_HOME to a writable dir")
    return Check("home", "OK", f"{home.root} writable")


def check_telemetry() -> Check:
    verdict = _env.check_disabled()
    off = [k for k, v in verdict.items() if not v]
    if off:
        return Check("telemetry", "FAIL", "not disabled: " + ", ".join(off), "import ghost_agent before other libs")
    return Check("telemetry", "OK", f"{len(verdict)} opt-out flags set")


def check_upstream(settings: Settings) -> Check:
    from ghost_agent.llm.http_upstream import normalize_base_url
    from ghost_agent.privacy.redact import redact_text, redact_url

    assert settings.backend.upstream_url is not None
    base = normalize_base_url(settings.backend.upstream_url)
    shown = redact_url(base)  # the report is pasted into issues: never the url's user:password
    key = settings.backend.upstream_api_key
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx.get(f"{base}/models", timeout=settings.backend.upstream_connect_timeout, headers=headers,
                             trust_env=False)
    except httpx.HTTPError as exc:
        return Check("upstream", "FAIL", f"{shown} unreachable: {redact_text(repr(exc))}",
                     "start the upstream or fix --upstream-url")
    if response.status_code != 200:
        return Check("upstream", "WARN", f"{shown}/models answered HTTP {response.status_code}",
                     "check --upstream-api-key and the URL")
    return Check("upstream", "OK", f"{shown} answered /models")


def check_local_model(settings: Settings, full_hash: bool) -> list[Check]:
    checks = []
    try:
        import xllamacpp  # noqa: F401

        checks.append(Check("runtime", "OK", f"xllamacpp {importlib.metadata.version('xllamacpp')}"))
    except ImportError:
        checks.append(Check("runtime", "FAIL", "xllamacpp not installed", "pip install 'ghost-agent[local]'"))
    from ghost_agent.llm.embedded.model_files import (
        ModelFileError,
        cached_path,
        find_chunks,
        get_spec,
        verify_model_file,
    )

    spec = get_spec(settings.backend.local_model)
    try:
        find_chunks(spec)
        checks.append(Check("model packages", "OK", f"{spec.parts} chunk packages of {spec.key} installed"))
    except ModelFileError as exc:
        checks.append(Check("model packages", "FAIL", str(exc), spec.install_hint))
    result = verify_model_file(cached_path(spec, settings.backend.model_cache_dir), spec.key, full=full_hash)
    if result.ok:
        checks.append(Check("model file", "OK", f"{result.path}: {result.detail}"))
    else:
        fix = "start the daemon once: it assembles and verifies the file" + (
            "" if full_hash else "; `ghost-agent doctor --full-hash` re-hashes it"
        )
        checks.append(Check("model file", "WARN", f"{result.path}: {result.detail}", fix))
    return checks


def gather_checks(settings: Settings, *, full_hash: bool = False) -> list[Check]:
    """All checks relevant to these settings."""
    checks = [check_python(), check_packages(), check_home(settings), check_telemetry()]
    if settings.backend.upstream_url:
        checks.append(check_upstream(settings))
    else:
        checks.extend(check_local_model(settings, full_hash))
    checks.append(check_sandbox(settings))
    if not settings.server.is_loopback and not settings.server.api_key:
        checks.append(Check("auth", "WARN", f"binding {settings.server.host} without an api key", "set --api-key"))
    return checks


def check_sandbox(settings: Settings) -> Check:
    """The sandbox that would run model-written code: OK isolated; WARN when code runs unisolated by the
    operator's opt-in (--sandbox unisolated|subprocess) or with a warning (the fallback's packages out of reach);
    FAIL when no isolating sandbox runs and unisolated code was not opted into (code tools disabled)."""
    from ghost_agent.sandbox.detect import doctor_check

    status, detail, fix = doctor_check(settings)
    return Check("sandbox", status, detail, fix)


def run_doctor(settings: Settings, *, full_hash: bool = False, out: IO[str] | None = None,
               extra: list[Callable[[], Check]] | None = None) -> int:
    """Print every check; exit code 1 if any FAILed."""
    out = out or sys.stdout
    checks = gather_checks(settings, full_hash=full_hash) + [c() for c in extra or []]
    width = max(len(c.name) for c in checks)
    for c in checks:
        line = f"{c.status:<4}  {c.name:<{width}}  {c.detail}"
        if c.status != "OK" and c.fix:
            line += f"\n      {'':<{width}}  fix: {c.fix}"
        out.write(line + "\n")
    failed = sum(c.status == "FAIL" for c in checks)
    out.write(f"\n{len(checks) - failed}/{len(checks)} checks passed{'' if not failed else ' - see fixes above'}\n")
    out.flush()
    return 1 if failed else 0
