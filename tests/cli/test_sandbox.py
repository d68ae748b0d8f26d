"""`ghost-agent sandbox run | info | setup` through the real sandbox: JSON results, exit codes, bad input."""

from __future__ import annotations

import io
import shutil
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson
import pytest
import structlog

from ghost_agent.cli.sandbox import run_sandbox_cli
from ghost_agent.sandbox import reset_cache
from ghost_agent.sandbox.setup import SetupPlan, ensure_installed, plan

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox installs it)"
)


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    reset_cache()
    structlog.reset_defaults()  # start unconfigured, as the console script does
    yield
    reset_cache()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_sandbox_cli(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def run_json(home: Path, *argv: str) -> dict[str, object]:
    code, out, err = cli("run", "--home", str(home), *argv)
    assert code == 0, err
    result: dict[str, object] = orjson.loads(out)
    return result


# ---------------------------------------------------------------------------------------------------- run


def test_run_python_prints_the_exec_result(home: Path) -> None:
    result = run_json(home, "--language", "python", "--code", "import os; print('hello', os.getuid())")
    assert result["stdout"] == "hello 65534\n" and result["exit_code"] == 0
    assert result["backend"] == "bwrap" and result["timed_out"] is False and result["truncated"] is False
    assert isinstance(result["duration_ms"], float) and result["duration_ms"] > 0
    assert not structlog.is_configured()  # the CLI leaves process-wide logging as it found it


def test_the_programs_own_failure_is_in_the_json_not_the_exit_code(home: Path) -> None:
    result = run_json(home, "--language", "python", "--code", "import sys; print('bye'); sys.exit(3)")
    assert result["exit_code"] == 3 and result["stdout"] == "bye\n"
    result = run_json(home, "--language", "python", "--code", "raise ValueError('boom')")
    assert result["exit_code"] == 1 and "ValueError: boom" in str(result["stderr"])


def test_run_bash_file_and_stdin(home: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.sh"
    script.write_text('read line\necho "got $line"\necho $((6 * 7)) "$(id -u)" "$PWD"\n')
    result = run_json(home, "--language", "bash", "--file", str(script), "--stdin", "ping\n")
    assert result["stdout"] == "got ping\n42 65534 /workspace\n" and result["exit_code"] == 0


def test_run_a_loopback_listener_is_unreachable_from_inside(home: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        code = f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), 2)\n print('connected')\n" \
            "except OSError as e:\n print('blocked', e.errno)"
        result = run_json(home, "--language", "python", "--code", code)
    assert str(result["stdout"]).startswith("blocked"), result


def test_run_timeout_kills_and_reports(home: Path) -> None:
    result = run_json(home, "--language", "python", "--timeout", "1", "--code", "print('start')\nwhile True: pass")
    assert result["timed_out"] is True and result["stdout"] == "start\n"
    assert 900 <= float(str(result["duration_ms"])) < 10_000


def test_run_memory_limit(home: Path) -> None:
    code = "x = bytearray(400 * 1024 * 1024)\nprint('allocated')"
    result = run_json(home, "--language", "python", "--memory-mb", "64", "--code", code)
    assert result["oom_killed"] is True and "allocated" not in str(result["stdout"])


def test_run_in_a_given_workspace(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "in.txt").write_text("data")
    code = "print(open('in.txt').read()); open('out.txt', 'w').write('made inside')"
    result = run_json(home, "--language", "python", "--workspace", str(ws), "--code", code)
    assert result["stdout"] == "data\n" and (ws / "out.txt").read_text() == "made inside"


@pytest.mark.parametrize(
    "argv",
    [
        ["--language", "python"],  # neither --code nor --file
        ["--language", "python", "--code", "pass", "--file", "x.py"],  # both
        ["--language", "ruby", "--code", "puts 1"],
        ["--code", "pass"],  # no language
        ["--language", "python", "--code", "pass", "--timeout", "-1"],
        ["--language", "python", "--code", "pass", "--memory-mb", "0"],
        ["--language", "python", "--code", "pass", "--sandbox", "docker"],
    ],
)
def test_bad_input_exits_2(home: Path, argv: list[str]) -> None:
    code, out, err = cli("run", "--home", str(home), *argv)
    assert code == 2 and out == "" and err


def test_missing_file_and_workspace_exit_2(home: Path, tmp_path: Path) -> None:
    code, out, err = cli("run", "--home", str(home), "--language", "python", "--file", str(tmp_path / "nope.py"))
    assert code == 2 and out == "" and "cannot read --file" in err
    missing = str(tmp_path / "no-ws")
    code, out, err = cli("run", "--home", str(home), "--language", "python", "--code", "1", "--workspace", missing)
    assert code == 2 and "not an existing directory" in err


def test_sandbox_failure_exits_1(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # the environment, not our code: bwrap is nowhere on PATH
    code, out, err = cli("run", "--home", str(home), "--sandbox", "bwrap", "--language", "python", "--code", "1")
    assert code == 1 and out == "" and "make sandbox" in err


# --------------------------------------------------------------------------------------------------- info


def test_info_text(home: Path) -> None:
    code, out, err = cli("info", "--home", str(home))
    assert code == 0, err
    assert "backend:        bwrap" in out and "isolated:       yes" in out
    for fact in ("network:        yes", "filesystem:     yes", "pid namespace:  yes", "memory limit:", "probes:"):
        assert fact in out
    assert "loopback_blocked=yes" in out and "home_hidden=yes" in out


def test_info_json(home: Path) -> None:
    code, out, _ = cli("info", "--home", str(home), "--json")
    assert code == 0
    info = orjson.loads(out)
    assert info["backend"] == "bwrap" and info["isolated"] is True and info["probes"][-1]["ok"] is True
    assert info["details"]["checks"] == {
        "loopback_blocked": True, "home_hidden": True, "project_hidden": True, "unprivileged": True
    }


def test_info_of_the_fallback_is_loud(home: Path) -> None:
    code, out, err = cli("info", "--home", str(home), "--sandbox", "subprocess")
    assert code == 0
    assert "isolated:       NO" in out and "UNISOLATED" in out and "network:        NO" in out
    assert "sandbox_unisolated" in err  # the warning reaches the terminal, not stdout
    assert "sandbox_unisolated" not in out


# -------------------------------------------------------------------------------------------------- setup


def test_setup_with_everything_present_shows_info(home: Path) -> None:
    code, out, err = cli("setup", "--home", str(home))
    assert code == 0, err
    assert "bubblewrap and setpriv present" in err and "backend:        bwrap" in out


def test_setup_plan() -> None:
    assert plan([]).prefix == [] and plan([]).missing == []
    root = plan(["bubblewrap"], is_root=True, has_apt=True)
    assert root.prefix == [] and root.command == "apt-get install -y bubblewrap"
    assert plan(["bubblewrap"], is_root=False, sudo=True, has_apt=True).prefix == ["sudo", "-n"]
    nobody = plan(["bubblewrap", "util-linux"], is_root=False, sudo=False, has_apt=True)
    assert nobody.prefix is None and "run as root: apt-get install -y bubblewrap util-linux" in nobody.why
    no_apt = plan(["bubblewrap"], is_root=True, has_apt=False)
    assert no_apt.prefix is None and "package manager" in no_apt.why


class FakeApt:
    """Stands in for apt-get: records each argv; 'installs' the packages once `update` has run."""

    def __init__(self, fail_until_update: bool) -> None:
        self.calls: list[list[str]] = []
        self.installed: set[str] = set()
        self.updated = not fail_until_update

    def __call__(self, argv: Sequence[str]) -> int:
        self.calls.append(list(argv))
        if "update" in argv:
            self.updated = True
            return 0
        if not self.updated:
            return 100
        self.installed |= {"bwrap", "setpriv"}
        return 0

    def which(self, cmd: str) -> str | None:
        return f"/usr/bin/{cmd}" if cmd in self.installed else None


def test_setup_installs_and_retries_after_update() -> None:
    apt = FakeApt(fail_until_update=True)
    result = ensure_installed(which=apt.which, runner=apt, setup_plan=SetupPlan(["bubblewrap", "util-linux"], []))
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "bubblewrap", "util-linux"]
    assert apt.calls == [install, ["apt-get", "update", "-q"], install]
    assert result.installed == ["bubblewrap", "util-linux"] and result.missing == []


def test_setup_without_rights_prints_the_command() -> None:
    apt = FakeApt(fail_until_update=False)
    todo = plan(["bubblewrap"], is_root=False, sudo=False, has_apt=True)
    result = ensure_installed(which=apt.which, runner=apt, setup_plan=todo)
    assert apt.calls == [] and result.missing == ["bubblewrap"]
    assert any("apt-get install -y bubblewrap" in m for m in result.messages)
    assert any("UNISOLATED" in m for m in result.messages)
