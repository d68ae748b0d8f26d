"""Pick the strongest sandbox that works here, by running a probe through each layer (DESIGN §1c).

Modes: `auto` (the default) and `bwrap` accept only bubblewrap (either variant); when none passes they raise
`SandboxRefused` and the daemon disables its code tools (it still chats) rather than run model-written code
without isolation. Running code unisolated is an explicit opt-in: `unisolated` (bubblewrap when it passes, else
the restricted subprocess) or `subprocess` (the restricted subprocess only), both logged at warning level and
reported as degraded by /health and `doctor`.

The probe is a small Python program run through the candidate backend. From inside it tries to connect to a
loopback listener that the probe opened on the host side, and looks for the project checkout and GHOST_HOME.
A bubblewrap candidate passes only when the program exits 0 and every isolation check holds; the
restricted-subprocess fallback only has to exit 0 (it isolates neither network nor filesystem) and its check
results are reported as facts. The detection is cached per (mode, home, concurrency, bwrap path): repeated
calls are free, `reset_cache()` starts over (tests, `ghost-agent sandbox setup`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

import ghost_agent
from ghost_agent.logging import configure_logging, get_logger
from ghost_agent.sandbox.base import ExecLimits, Isolation, SandboxBackend, SandboxError, SandboxRefused

if TYPE_CHECKING:
    from ghost_agent.settings import Settings

log = get_logger("sandbox")

MODES = ("auto", "bwrap", "unisolated", "subprocess")
UNISOLATED_MODES = ("unisolated", "subprocess")  # the explicit opt-ins to running code without isolation
FIX = "run `make sandbox` or `ghost-agent sandbox setup` (installs bubblewrap with apt)"
OPT_IN = "--sandbox unisolated (GHOST_SANDBOX=unisolated) runs it without network or filesystem isolation instead"
NOT_INSTALLED = "bwrap not installed (apt-get install bubblewrap / make sandbox)"

# What the probe program checks from inside; every one must hold for an isolating backend.
_PROBE_SOURCE = """\
import json, os, socket
checks = {}
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(2.0)
try:
    s.connect(("127.0.0.1", %(port)d))
    checks["loopback_blocked"] = False
except OSError:
    checks["loopback_blocked"] = True
finally:
    s.close()
for name, path in json.loads(%(paths)r).items():
    checks[name] = not os.path.exists(path)
checks["unprivileged"] = os.geteuid() != 0
print(json.dumps(checks))
"""


@dataclass
class ProbeResult:
    """One probe run: `ok` is the verdict for this kind of backend; `checks` are the facts seen from inside
    (loopback_blocked, home_hidden, project_hidden when a checkout exists, unprivileged)."""

    ok: bool
    reason: str = ""
    duration_ms: float = 0.0
    checks: dict[str, bool] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclass
class Detection:
    """The chosen backend, what it isolates (with `reason` = why nothing stronger was used) and every probe
    run to get there, as (candidate name, result) in the order tried."""

    mode: str
    candidate: str
    backend: SandboxBackend
    isolation: Isolation
    probes: list[tuple[str, ProbeResult]]
    reason_for_choice: str

    @property
    def probe_ms(self) -> float:
        """Time spent probing, all candidates together."""
        return round(sum(p.duration_ms for _, p in self.probes), 1)

    def isolates(self) -> list[str]:
        """Human-readable list of what is isolated or limited, e.g. ["network", "memory (cgroup)"]."""
        iso = self.isolation
        out = [name for name, on in (("network", iso.network), ("filesystem", iso.filesystem),
                                     ("pid namespace", iso.pid_namespace)) if on]
        if iso.memory_limit != "none":
            out.append(f"memory ({iso.memory_limit})")
        if iso.process_limit != "none":
            out.append(f"processes ({iso.process_limit})")
        return out

    def warnings(self) -> list[str]:
        """What the operator must know: code running unisolated (an opt-in), then the backend's own warnings."""
        out = []
        if not self.isolation.isolated:
            out.append(f"UNISOLATED: model-written code runs without network or filesystem isolation (opted in "
                       f"with --sandbox {self.mode}). Fix: {FIX}, then use --sandbox auto")
        return out + list(self.isolation.warnings)

    def to_dict(self) -> dict[str, Any]:
        """What `/v1/ghost/health` shows under `sandbox` and `ghost-agent sandbox info --json` prints."""
        return {
            **self.isolation.to_dict(),
            "warnings": self.warnings(),
            "degraded": bool(self.warnings()),
            "mode": self.mode,
            "candidate": self.candidate,
            "isolates": self.isolates(),
            "reason_for_choice": self.reason_for_choice,
            "concurrency": self.backend.concurrency,
            "probe_ms": self.probe_ms,
            "probes": [{"candidate": name, **result.to_dict()} for name, result in self.probes],
        }


def project_dir() -> Path | None:
    """The source checkout the daemon runs from (src layout or flat), or None for an installed package.

    An installed package lives in the venv, which the sandbox binds read-only on purpose (numpy, pandas), so
    only a checkout (with the user's other files around it) is something the probe must not see.
    """
    pkg = Path(ghost_agent.__file__).resolve().parent
    for root in ((pkg.parent.parent,) if pkg.parent.name == "src" else ()) + (pkg.parent,):
        if (root / "pyproject.toml").is_file():
            return root
    return None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def probe(
    backend: SandboxBackend,
    *,
    home: Path,
    project: Path | None = None,
    timeout_s: float = 10.0,
    limits: ExecLimits | None = None,
    require_isolation: bool | None = None,
) -> ProbeResult:
    """Run the probe program through `backend`; never raises.

    `require_isolation` (default: `backend.isolation.isolated`) decides whether the checks must all hold or
    only the exit status counts. `project` is the checkout to look for (None: not checked). `limits` default to
    `timeout_s` and 256 MB.
    """
    if require_isolation is None:
        require_isolation = backend.isolation.isolated
    paths = {"home_hidden": str(home.resolve())}
    if project is not None:
        # bwrap creates the parents of the venv bind (a venv inside the checkout), so look for the checkout's
        # own files, not its directory.
        paths["project_hidden"] = str(project.resolve() / "pyproject.toml")
    started = time.perf_counter()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        source = _PROBE_SOURCE % {"port": listener.getsockname()[1], "paths": json.dumps(paths)}
        limits = limits or ExecLimits(timeout_s=timeout_s, memory_mb=256)
        try:
            result = backend.run_sync("python", source, limits=limits, workspace=None)
        except (SandboxError, OSError) as exc:
            elapsed = (time.perf_counter() - started) * 1000
            return ProbeResult(False, f"{backend.name} failed: {_first_line(str(exc)) or type(exc).__name__}",
                               round(elapsed, 1))
    elapsed = round((time.perf_counter() - started) * 1000, 1)
    if result.timed_out:
        return ProbeResult(False, f"{backend.name} failed: probe timed out after {limits.timeout_s:g} s", elapsed)
    if result.exit_code != 0:
        detail = _first_line(result.stderr) or f"exit code {result.exit_code}"
        return ProbeResult(False, f"{backend.name} failed: {detail}", elapsed)
    try:
        raw = json.loads(result.stdout.strip().splitlines()[-1])
        checks = {str(k): bool(v) for k, v in raw.items()}
    except (ValueError, IndexError, AttributeError):
        return ProbeResult(False, f"{backend.name} failed: unreadable probe output {result.stdout[:80]!r}", elapsed)
    failed = [name for name, passed in checks.items() if not passed]
    if require_isolation and failed:
        return ProbeResult(False, f"{backend.name} does not isolate: {', '.join(failed)} failed", elapsed, checks)
    return ProbeResult(True, "", elapsed, checks)


def _bwrap_candidates(bwrap_path: str, concurrency: int | None) -> list[tuple[str, SandboxBackend | str]]:
    """(name, backend or the reason it cannot be tried), strongest first."""
    from ghost_agent.sandbox.bwrap import BwrapSandbox, has_cap_sys_admin

    if shutil.which(bwrap_path) is None:
        reason = NOT_INSTALLED if bwrap_path == "bwrap" else f"bwrap not found at {bwrap_path!r} ({NOT_INSTALLED})"
        return [("bwrap", reason)]

    def make(userns: bool) -> SandboxBackend | str:
        try:
            return BwrapSandbox(concurrency=concurrency, userns=userns, bwrap_path=bwrap_path)
        except (SandboxError, OSError) as exc:
            return f"bwrap failed: {_first_line(str(exc)) or type(exc).__name__}"

    if has_cap_sys_admin():
        first = make(userns=False)
    else:
        first = "not root with CAP_SYS_ADMIN: the user-namespace variant is tried instead"
    return [("bwrap", first), ("bwrap-userns", make(userns=True))]


def detect(
    mode: str = "auto",
    *,
    home: Path,
    concurrency: int | None = None,
    bwrap_path: str = "bwrap",
    project: Path | None | bool = True,
    timeout_s: float = 10.0,
    limits: ExecLimits | None = None,
) -> Detection:
    """Probe the candidates for `mode` and return the first that passes (uncached: see `get_detection`).

    auto, bwrap: bwrap (no user namespace, as root with CAP_SYS_ADMIN), then bwrap in a user namespace;
    SandboxRefused naming the failures, the fix and the opt-in when neither passes. unisolated: the same, then
    the unisolated restricted subprocess. subprocess: the restricted subprocess directly. `project=True` looks
    for this checkout (`project_dir()`), a Path for that directory, None/False for no project check.
    SandboxError also when nothing runs at all.
    """
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox mode {mode!r} (choose from: {', '.join(MODES)})")
    proj = project_dir() if project is True else (project or None)
    probe_kw: dict[str, Any] = {"home": home, "project": proj, "timeout_s": timeout_s, "limits": limits}
    probes: list[tuple[str, ProbeResult]] = []
    if mode != "subprocess":
        for name, candidate in _bwrap_candidates(bwrap_path, concurrency):
            if isinstance(candidate, str):
                probes.append((name, ProbeResult(False, candidate)))
                continue
            result = probe(candidate, require_isolation=True, **probe_kw)
            probes.append((name, result))
            if result.ok:
                why = "strongest layer available" if name == "bwrap" else probes[0][1].reason
                return _chosen(mode, name, candidate, probes, why)
        if mode not in UNISOLATED_MODES:
            failures = "; ".join(f"{n}: {r.reason}" for n, r in probes)
            raise SandboxRefused(
                f"no isolating sandbox: bubblewrap cannot run here ({failures}); model-written code never runs "
                f"without isolation unless you opt in, so code tools are disabled. Fix: {FIX}, then restart the "
                f"daemon; or {OPT_IN}",
                reason=failures, fix=FIX,
            )
    from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox

    fallback = RestrictedSubprocessSandbox(concurrency=concurrency)
    result = probe(fallback, require_isolation=False, **probe_kw)
    probes.append(("subprocess", result))
    if not result.ok:
        raise SandboxError("no sandbox can run code here: " + "; ".join(f"{n}: {r.reason}" for n, r in probes))
    if mode == "subprocess":
        why = "chosen by sandbox mode 'subprocess' (bubblewrap not tried)"
    else:
        why = "; ".join(r.reason for _, r in probes[:-1]) + f" (unisolated fallback opted into). Fix: {FIX}"
    return _chosen(mode, "subprocess", fallback, probes, why)


def _chosen(
    mode: str, name: str, backend: SandboxBackend, probes: list[tuple[str, ProbeResult]], why: str
) -> Detection:
    iso = backend.isolation
    # Why nothing stronger ran first, then the backend's own remarks (e.g. cgroups unavailable: rlimits only).
    reason = "; ".join(r for r in ("" if name == "bwrap" else why, iso.reason) if r)
    iso = dataclasses.replace(iso, reason=reason, details={**iso.details, "checks": probes[-1][1].checks})
    detection = Detection(mode, name, backend, iso, probes, why)
    log.info("sandbox_detected", backend=iso.backend, candidate=name, isolated=iso.isolated, mode=mode,
             probe_ms=detection.probe_ms, isolates=detection.isolates())
    if not iso.isolated:
        log.warning("sandbox_unisolated", backend=iso.backend, reason=why, mode=mode,
                    detail="model-written code runs WITHOUT network or filesystem isolation: resource limits only "
                    f"(opted in with --sandbox {mode})")
    for warning in iso.warnings:
        log.warning("sandbox_degraded", backend=iso.backend, warning=warning)
    return detection


_cache: dict[tuple[Any, ...], Detection] = {}
_cache_lock = threading.Lock()


def get_detection(settings: Settings | None = None, *, bwrap_path: str = "bwrap") -> Detection:
    """The cached Detection for these settings (default: `load_settings()`): probed once per
    (mode, home, concurrency, bwrap path). Raises SandboxError as `detect` does (not cached)."""
    if settings is None:
        from ghost_agent.settings import load_settings

        settings = load_settings()
    concurrency = settings.sandbox.concurrency or None
    home = settings.home.resolve()
    key = (settings.sandbox.mode, home, concurrency, bwrap_path)
    with _cache_lock:  # held while probing so concurrent first callers probe once
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = detect(
                settings.sandbox.mode, home=home, concurrency=concurrency, bwrap_path=bwrap_path
            )
        return found


def get_sandbox(settings: Settings | None = None, *, bwrap_path: str = "bwrap") -> SandboxBackend:
    """The detected backend for these settings (cached; see `get_detection`)."""
    return get_detection(settings, bwrap_path=bwrap_path).backend


def reset_cache() -> None:
    """Forget every cached detection (tests; after `ghost-agent sandbox setup` installed bubblewrap)."""
    with _cache_lock:
        _cache.clear()


def doctor_check(settings: Settings) -> tuple[str, str, str]:
    """(status OK|WARN|FAIL, detail, fix) for `ghost-agent doctor`: FAIL when no isolating sandbox runs and
    unisolated code was not opted into (code tools are disabled) or nothing runs at all; WARN when code runs
    unisolated by the operator's choice, or the backend reports a warning (packages out of reach); else OK.

    The detection's log events are dropped unless the caller configured logging: the verdict says it all, and
    structlog's unconfigured default would print them into doctor's report."""
    if structlog.is_configured():
        return _doctor_verdict(settings)
    sink = configure_logging(None, console=None)
    try:
        return _doctor_verdict(settings)
    finally:
        sink.close()
        structlog.reset_defaults()


def _doctor_verdict(settings: Settings) -> tuple[str, str, str]:
    try:
        det = get_detection(settings)
    except SandboxRefused as exc:
        return "FAIL", str(exc), f"{FIX}; or opt in to unisolated code: --sandbox unisolated"
    except SandboxError as exc:
        return "FAIL", str(exc), FIX
    return detection_verdict(det)


def detection_verdict(det: Detection) -> tuple[str, str, str]:
    """(status, detail, fix) of a backend that runs: WARN unisolated (an opt-in) or with backend warnings."""
    detail = f"{det.isolation.backend} ({det.candidate}): isolates {', '.join(det.isolates()) or 'nothing'}"
    warnings = "".join(f"; {w}" for w in det.isolation.warnings)
    if not det.isolation.isolated:
        return "WARN", f"{detail}; UNISOLATED (opted in with --sandbox {det.mode}): {det.reason_for_choice}" \
            f"{warnings}", FIX
    if warnings:
        return "WARN", f"{detail}{warnings}", FIX
    return "OK", f"{detail}; probe {det.probe_ms:g} ms", ""
