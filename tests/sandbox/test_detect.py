"""Detection: the probe runs through each layer for real; bwrap is chosen here and every isolation check holds;
a bwrap that does not isolate, fails, or is missing is refused with the reason; without a working bwrap no code
runs unless unisolated code was opted into; the choice is cached."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.sandbox import SandboxError, SandboxRefused, detect, get_detection, get_sandbox, probe, reset_cache
from ghost_agent.sandbox.bwrap import BwrapSandbox, has_cap_sys_admin
from ghost_agent.sandbox.detect import doctor_check, project_dir
from ghost_agent.sandbox.subprocess_backend import RestrictedSubprocessSandbox
from tests.conftest import make_settings
from tests.sandbox.conftest import hide_bwrap

CHECKS = {"loopback_blocked", "home_hidden", "project_hidden", "unprivileged"}

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox installs it)"
)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    reset_cache()
    yield
    reset_cache()


@pytest.fixture
def visible_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A GHOST_HOME that uid 65534 could read if nothing hid it (pytest's tmp root is 0700 root)."""
    home = Path(os.path.realpath("/tmp")) / f"ghost-detect-home-{os.getpid()}"
    (home / "system").mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def fake_bwrap(tmp_path: Path, body: str) -> str:
    """An executable standing in for bwrap (a real process: the backend runs it with its full argv, the options
    in `--args FD` as bwrap reads them)."""
    path = tmp_path / "fake-bwrap"
    expand = (
        'if "--args" in args:\n'
        '    i = args.index("--args")\n'
        '    args = args[:i] + os.read(int(args[i + 1]), 1 << 20).decode().split("\\0")[:-1] + args[i + 2:]\n'
    )
    path.write_text(f"#!{sys.executable}\nimport os, sys\nargs = sys.argv[1:]\n{expand}{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


# A "bwrap" that sets nothing up: it runs the program (passed with --ro-bind-data FD) directly, as the daemon.
NO_ISOLATION = """\
fd = args[args.index("--ro-bind-data") + 1]
os.execv(sys.executable, [sys.executable, "-u", "/dev/fd/" + fd])
"""
BROKEN = """\
sys.stderr.write("bwrap: Creating new namespace failed: Operation not permitted\\nmore detail\\n")
sys.exit(1)
"""


def test_project_dir_is_this_checkout() -> None:
    root = project_dir()
    assert root is not None and (root / "pyproject.toml").is_file() and (root / "src" / "ghost_agent").is_dir()


@needs_bwrap
def test_auto_picks_bwrap_and_every_probe_check_passes(visible_home: Path) -> None:
    structlog.reset_defaults()
    with capture_logs() as logs:
        det = detect("auto", home=visible_home)
    assert det.candidate == ("bwrap" if has_cap_sys_admin() else "bwrap-userns")
    assert isinstance(det.backend, BwrapSandbox)
    iso = det.isolation
    assert iso.isolated and iso.network and iso.filesystem and iso.pid_namespace
    name, result = det.probes[-1]
    assert name == det.candidate and result.ok
    assert result.checks == dict.fromkeys(CHECKS, True)
    assert 0 < result.duration_ms < 10_000
    detected = [e for e in logs if e["event"] == "sandbox_detected"]
    assert len(detected) == 1 and detected[0]["backend"] == "bwrap" and detected[0]["isolated"] is True
    assert detected[0]["probe_ms"] > 0
    assert not [e for e in logs if e["event"] == "sandbox_unisolated"]


@needs_bwrap
def test_the_user_namespace_variant_also_passes(visible_home: Path) -> None:
    result = probe(BwrapSandbox(userns=True), home=visible_home, project=project_dir())
    assert result.ok, result.reason
    assert result.checks == dict.fromkeys(CHECKS, True)


def test_the_probe_sees_what_the_fallback_does_not_hide(visible_home: Path) -> None:
    """The checks can fail: through the unisolated fallback the loopback listener answers and the home shows."""
    backend = RestrictedSubprocessSandbox()
    strict = probe(backend, home=visible_home, project=project_dir(), require_isolation=True)
    assert not strict.ok and "does not isolate" in strict.reason
    assert strict.checks["loopback_blocked"] is False and strict.checks["home_hidden"] is False
    lenient = probe(backend, home=visible_home, project=project_dir())  # its own kind: exit 0 is enough
    assert lenient.ok and lenient.checks == strict.checks


def test_subprocess_mode_is_the_loud_unisolated_fallback(visible_home: Path) -> None:
    structlog.reset_defaults()
    with capture_logs() as logs:
        det = detect("subprocess", home=visible_home)
    assert det.candidate == "subprocess" and isinstance(det.backend, RestrictedSubprocessSandbox)
    assert det.isolation.isolated is False and not det.isolation.network and not det.isolation.filesystem
    assert [name for name, _ in det.probes] == ["subprocess"]  # bwrap not even tried
    assert "chosen by sandbox mode 'subprocess'" in det.isolation.reason
    warning = next(e for e in logs if e["event"] == "sandbox_unisolated")
    assert warning["log_level"] == "warning" and "subprocess" in warning["reason"]
    assert det.to_dict()["details"]["checks"]["loopback_blocked"] is False  # reported as a fact


def test_bwrap_mode_without_bwrap_fails_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SandboxError) as info:
        detect("bwrap", home=tmp_path / "home", bwrap_path=str(tmp_path / "no-such-bwrap"))
    message = str(info.value)
    assert "not found" in message and "make sandbox" in message and "ghost-agent sandbox setup" in message


def test_auto_without_bwrap_refuses_to_run_code_unisolated(tmp_path: Path) -> None:
    """Issue 12 item 4: the default never falls back to running model-written code without isolation."""
    structlog.reset_defaults()
    with capture_logs() as logs, pytest.raises(SandboxRefused) as info:
        detect("auto", home=tmp_path / "home", bwrap_path=str(tmp_path / "no-such-bwrap"))
    message = str(info.value)
    assert "bwrap not found" in message and "code tools are disabled" in message
    assert "make sandbox" in message and "ghost-agent sandbox setup" in message and "restart" in message
    assert "--sandbox unisolated" in message  # the explicit opt-in is named
    assert "bwrap not found" in info.value.reason and "make sandbox" in info.value.fix
    assert not [e for e in logs if e["event"] in ("sandbox_detected", "sandbox_unisolated")]


def test_unisolated_is_the_explicit_opt_in_to_the_fallback(tmp_path: Path) -> None:
    structlog.reset_defaults()
    with capture_logs() as logs:
        det = detect("unisolated", home=tmp_path / "home", bwrap_path=str(tmp_path / "no-such-bwrap"))
    assert det.candidate == "subprocess" and not det.isolation.isolated
    assert "bwrap not found" in det.isolation.reason and "apt-get install bubblewrap" in det.isolation.reason
    assert "opted into" in det.reason_for_choice
    assert [n for n, _ in det.probes] == ["bwrap", "subprocess"]
    warning = next(e for e in logs if e["event"] == "sandbox_unisolated")
    assert warning["log_level"] == "warning" and warning["mode"] == "unisolated"
    assert "bwrap not found" in warning["reason"] and "--sandbox unisolated" in warning["detail"]
    shown = det.to_dict()
    assert shown["degraded"] is True and shown["warnings"][0].startswith("UNISOLATED")


@needs_bwrap
def test_unisolated_still_prefers_bubblewrap(visible_home: Path) -> None:
    det = detect("unisolated", home=visible_home)
    assert det.candidate.startswith("bwrap") and det.isolation.isolated
    assert det.to_dict()["degraded"] is False and det.warnings() == []


def test_a_bwrap_that_does_not_isolate_is_refused(tmp_path: Path, visible_home: Path) -> None:
    fake = fake_bwrap(tmp_path, NO_ISOLATION)
    with pytest.raises(SandboxError, match="does not isolate: loopback_blocked"):
        detect("bwrap", home=visible_home, bwrap_path=fake)
    with pytest.raises(SandboxRefused, match="does not isolate: loopback_blocked"):
        detect("auto", home=visible_home, bwrap_path=fake)
    det = detect("unisolated", home=visible_home, bwrap_path=fake)
    assert det.candidate == "subprocess"
    refused = [r for n, r in det.probes if n.startswith("bwrap") and r.checks]
    assert refused and all(not r.ok and r.checks["loopback_blocked"] is False for r in refused)
    assert all(r.checks["home_hidden"] is False for r in refused)


def test_a_failing_bwrap_reports_its_first_stderr_line(tmp_path: Path) -> None:
    fake = fake_bwrap(tmp_path, BROKEN)
    with pytest.raises(SandboxError) as info:
        detect("bwrap", home=tmp_path / "home", bwrap_path=fake)
    assert "bwrap failed: bwrap: Creating new namespace failed: Operation not permitted" in str(info.value)
    assert "more detail" not in str(info.value)


def test_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="unknown sandbox mode"):
        detect("docker", home=tmp_path)


@needs_bwrap
def test_detection_is_cached_per_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    first = get_detection(settings)
    assert get_detection(settings) is first
    assert get_sandbox(settings) is first.backend
    assert get_detection(make_settings(tmp_path)) is first  # an equal Settings object hits the same entry
    other = get_detection(make_settings(tmp_path, sandbox="subprocess"))
    assert other is not first and other.candidate == "subprocess"
    assert get_detection(make_settings(tmp_path, sandbox_concurrency=1)).backend.concurrency == 1
    reset_cache()
    assert get_detection(settings) is not first


@needs_bwrap
def test_to_dict_is_what_health_and_doctor_show(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    shown = orjson.loads(orjson.dumps(get_detection(settings).to_dict()))
    assert shown["backend"] == "bwrap" and shown["isolated"] is True
    assert {"network", "filesystem", "pid namespace"} <= set(shown["isolates"])
    assert shown["probes"][-1]["ok"] is True and shown["probe_ms"] > 0
    structlog.reset_defaults()
    status, detail, fix = doctor_check(settings)
    assert status == "OK" and "bwrap" in detail and fix == ""
    assert not structlog.is_configured()  # left as found; its log events did not go to stdout
    status, detail, fix = doctor_check(make_settings(tmp_path, sandbox="subprocess"))
    assert status == "WARN" and "UNISOLATED (opted in with --sandbox subprocess)" in detail and "make sandbox" in fix


def test_doctor_fails_without_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hide_bwrap(monkeypatch, tmp_path)
    status, detail, fix = doctor_check(make_settings(tmp_path))
    assert status == "FAIL" and "bubblewrap cannot run here" in detail and "code tools are disabled" in detail
    assert "make sandbox" in fix and "ghost-agent sandbox setup" in fix and "--sandbox unisolated" in fix
    status, detail, _ = doctor_check(make_settings(tmp_path, sandbox="unisolated"))
    assert status == "WARN" and "UNISOLATED (opted in with --sandbox unisolated)" in detail
