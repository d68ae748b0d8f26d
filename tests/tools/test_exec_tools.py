"""The python and bash tools: through the real detected sandbox, plus the formatting and limit handling
with a recording backend (which needs no sandbox)."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from ghost_agent.sandbox.base import ExecLimits, ExecResult, Isolation, SandboxBackend, SandboxError
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.tools import BashTool, PythonTool, ToolContext, ToolRegistry, default_registry
from ghost_agent.tools.base import ToolResult

MB = 1024 * 1024


@pytest.fixture(scope="module")
def sandbox() -> SandboxBackend:
    """The backend `get_sandbox()` detects on this machine; skipped (with the reason) where none can run."""
    try:
        sandbox_pkg = importlib.import_module("ghost_agent.sandbox")
        return sandbox_pkg.get_sandbox()  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"no sandbox backend module yet: {exc}")
    except SandboxError as exc:
        pytest.skip(f"no sandbox backend can run here: {exc}")


@pytest.fixture
def workspaces(tmp_path: Path) -> Workspaces:
    return Workspaces(tmp_path / "workspaces", quota_mb=64, max_age_days=1)


def make_ctx(sandbox: SandboxBackend, workspaces: Workspaces, *, quota_mb: float | None = None,
             timeout_s: float = 10.0) -> ToolContext:
    ctx = ToolContext.for_session(workspaces, "sess-1", sandbox=sandbox, limits=ExecLimits(timeout_s=timeout_s))
    if quota_mb is not None:
        ctx.quota_bytes = int(quota_mb * MB)
    return ctx


async def call(ctx: ToolContext, tool: str, **args: object) -> ToolResult:
    return await default_registry().call(tool, args, ctx)


async def test_python_prints(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    r = await call(make_ctx(sandbox, workspaces), "python", code="print(6 * 7)")
    assert r.ok, r.to_message()
    assert r.to_message() == "42"
    assert r.data["exit_code"] == 0 and r.data["backend"]


async def test_exit_code_and_stderr(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces)
    r = await call(ctx, "python", code="import sys\nprint('partial')\nprint('oops', file=sys.stderr)\nsys.exit(3)")
    assert not r.ok
    assert r.error == "python: exited with code 3"
    assert r.output == "partial\n--- stderr ---\noops\n[exit code 3]"
    assert r.to_message().startswith("ERROR: python: exited with code 3\npartial\n")
    tb = await call(ctx, "python", code="x = 1\n1 / 0")
    assert not tb.ok and "--- stderr ---\nTraceback" in tb.output and tb.output.endswith("[exit code 1]")
    assert "ZeroDivisionError: division by zero" in tb.output


async def test_timeout_is_capped_by_the_context_and_reported(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces, timeout_s=1.0)
    r = await call(ctx, "python", code="import time\nprint('started', flush=True)\ntime.sleep(60)", timeout_s=600)
    assert not r.ok and r.data["timed_out"]
    assert r.output == "started\n[killed: timed out after 1.0 s]"
    assert r.error is not None and r.error.startswith("python: timed out after 1.0 s; ")
    assert r.duration_ms < 10_000


async def test_workspace_persists_across_calls(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces)
    # The daemon-side file tool and the sandboxed code see, and may change, the same files (written first
    # here, into a workspace no sandbox has run in yet).
    assert (await call(ctx, "file_system", action="write", path="notes/n.txt", content="daemon\n")).ok
    first = await call(ctx, "python", code="open('state.txt', 'w').write('from call 1')")
    assert first.ok, first.to_message()
    second = await call(make_ctx(sandbox, workspaces), "python", code="print(open('state.txt').read())")
    assert second.ok and second.output == "from call 1"
    appended = await call(ctx, "bash", command="echo sandbox >> notes/n.txt && cat notes/n.txt")
    assert appended.ok, appended.to_message()
    assert appended.output == "daemon\nsandbox"
    assert (await call(ctx, "file_system", action="read", path="notes/n.txt")).output == "daemon\nsandbox\n"


async def test_bash_command(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces)
    r = await call(ctx, "bash", command="echo hello; printf 'a\\nb\\n' | wc -l; echo warn >&2; exit 2")
    assert not r.ok and r.error == "bash: exited with code 2"
    assert r.output == "hello\n2\n--- stderr ---\nwarn\n[exit code 2]"
    where = await call(ctx, "bash", command="pwd")
    assert where.ok and where.output == ("/workspace" if sandbox.isolation.isolated else str(ctx.workspace))


async def test_stdin_is_fed(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    r = await call(make_ctx(sandbox, workspaces), "python", code="import sys\nprint(sys.stdin.read().upper())",
                   stdin="abc")
    assert r.ok and r.output == "ABC"


async def test_file_size_is_capped_by_the_quota_left(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces, quota_mb=1.5)
    big = await call(ctx, "python", code="open('big.bin', 'wb').write(b'0' * (3 * 1024 * 1024))")
    assert not big.ok and "File too large" in big.output  # RLIMIT_FSIZE lowered to the 1 MB left
    assert not big.data.get("over_quota")
    (ctx.workspace / "filler.bin").write_bytes(b"0" * 2 * MB)  # over quota now
    r = await call(ctx, "python", code="print('still runs')")
    assert r.ok and r.data["over_quota"]
    assert r.output.startswith("still runs\n[workspace over quota: ")
    cleaned = await call(ctx, "bash", command="rm filler.bin big.bin; echo done")
    assert cleaned.ok and "over_quota" not in (await call(ctx, "bash", command="true")).data


async def test_a_program_writing_past_the_quota_is_stopped_and_told(
    sandbox: SandboxBackend, workspaces: Workspaces
) -> None:
    ctx = make_ctx(sandbox, workspaces, quota_mb=8)
    (ctx.workspace / "notes.txt").write_text("kept\n")
    code = ("block = b'x' * (1 << 20)\nfor i in range(1000):\n    open(f'part{i:03}.bin', 'wb').write(block)\n"
            "print('done')")
    r = await call(ctx, "python", code=code)
    assert not r.ok and r.data["quota_stopped"] is True and r.data["exit_code"] == -9
    assert r.error is not None and r.error.startswith(
        "python: stopped: the program wrote past the workspace quota (8.0 MB); delete files or write less; the "
        "workspace holds ")
    status = r.output.splitlines()[-1]
    assert status.startswith("[stopped: the program wrote past the workspace quota (8.0 MB); removed what it "
                             "wrote beyond it: part"), status
    quota = r.data["workspace_quota"]
    assert quota["exceeded"] == "bytes" and quota["bytes_after"] <= 8 * MB and quota["trimmed_count"] >= 1
    first = quota["trimmed"][0]
    assert f"{first['path']} (1.0 MB)" in status and first["action"] == "removed"
    assert (ctx.workspace / "notes.txt").read_text() == "kept\n"
    # The next call runs in a workspace within its quota, with no note (the file the kill interrupted may stay,
    # empty).
    after = await call(ctx, "bash", command="find . -name 'part*.bin' -size +0c | wc -l")
    assert after.ok and "over_quota" not in after.data and int(after.output) < 8


async def test_file_names_in_the_report_are_printable(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces, quota_mb=2)
    code = ("import os\nblock = b'x' * (1 << 20)\nfor i in range(50):\n"
            "    open(os.fsencode(f'bad\\n[ok]\\udcff{i}'), 'wb').write(block)")
    r = await call(ctx, "python", code=code)
    assert r.data["quota_stopped"] is True, r.output
    status = r.output.splitlines()[-1]
    assert status.startswith("[stopped: ") and "bad?[ok]\ufffd" in status
    assert all("\n" not in t["path"] and "\udcff" not in t["path"] for t in r.data["workspace_quota"]["trimmed"])


async def test_a_file_flood_is_stopped_and_told(sandbox: SandboxBackend, workspaces: Workspaces) -> None:
    ctx = make_ctx(sandbox, workspaces, quota_mb=8)
    ctx.quota_entries = 300
    r = await call(ctx, "bash", command="mkdir many && cd many && for i in $(seq 100000); do : > f$i; done")
    assert not r.ok and r.data["quota_stopped"] is True
    assert r.output.splitlines()[-1].startswith(
        "[stopped: the program created more files and folders than the workspace may hold (300); removed what "
        "it wrote beyond it: "), r.output
    assert r.output.endswith(" entries]")
    assert r.data["workspace_quota"]["entries_after"] <= 300


# --- without the real sandbox: a backend that records what it was asked and answers as scripted


class Recording(SandboxBackend):
    name = "recording"

    def __init__(self, result: ExecResult) -> None:
        super().__init__(concurrency=1)
        self.result = result
        self.calls: list[tuple[str, str, ExecLimits, Path | None, str | None]] = []

    @property
    def isolation(self) -> Isolation:
        return Isolation("recording", False, False, False, False, "none", "none")

    def run_sync(self, language: str, source: str, *, limits: ExecLimits, workspace: Path | None = None,
                 stdin: str | None = None) -> ExecResult:
        self.calls.append((language, source, limits, workspace, stdin))
        return dataclasses.replace(self.result)


async def test_limits_and_arguments_reach_the_backend(tmp_path: Path) -> None:
    backend = Recording(ExecResult(stdout="ok\n", exit_code=0, backend="recording"))
    ctx = ToolContext(workspace=tmp_path / "ws", sandbox=backend, limits=ExecLimits(timeout_s=5, max_file_mb=64),
                      quota_bytes=10 * MB, quota_entries=500)
    registry = ToolRegistry([PythonTool(), BashTool()])
    assert (await registry.call("python", {"code": "pass", "timeout_s": 2, "stdin": "in"}, ctx)).output == "ok"
    assert (await registry.call("bash", {"command": "ls", "timeout_s": 99}, ctx)).ok
    (py, bash) = backend.calls
    assert py[:2] == ("python", "pass") and py[3] == tmp_path / "ws" and py[4] == "in"
    assert py[2].timeout_s == 2
    # The quota goes to the sandbox, which holds the workspace to it during the run (and lowers RLIMIT_FSIZE to
    # the room left, see tests/sandbox/test_quota.py).
    assert (py[2].workspace_bytes, py[2].workspace_entries, py[2].max_file_mb) == (10 * MB, 500, 64)
    assert bash[:2] == ("bash", "ls") and bash[2].timeout_s == 5  # never raised above the context's limit


@pytest.mark.parametrize(
    ("result", "error", "status"),
    [
        (ExecResult(oom_killed=True, exit_code=-9), "python: out of memory (limit 256 MB); process the data in "
         "smaller pieces", "[killed: out of memory (limit 256 MB)]"),
        (ExecResult(exit_code=-11), "python: killed by signal 11", "[killed by signal 11]"),
        (ExecResult(timed_out=True, exit_code=-9), "python: timed out after 3.0 s; make it faster, print "
         "progress, or work on less data", "[killed: timed out after 3.0 s]"),
    ],
)
def test_status_lines(result: ExecResult, error: str, status: str) -> None:
    r = PythonTool().to_result(result, ExecLimits(timeout_s=3, memory_mb=256))
    assert not r.ok and r.error == error and r.output == status


def test_truncation_by_the_sandbox_is_carried() -> None:
    r = PythonTool().to_result(ExecResult(stdout="x", exit_code=0, truncated=True), ExecLimits())
    assert r.ok and r.truncated


async def test_no_sandbox_attached(tmp_path: Path) -> None:
    r = await default_registry().call("python", {"code": "print(1)"}, ToolContext(workspace=tmp_path))
    assert r.error == "python: no sandbox is attached; code execution is unavailable in this session"


async def test_a_sandbox_failure_is_an_error_result(tmp_path: Path) -> None:
    class Broken(Recording):
        def run_sync(self, *args: object, **kwargs: object) -> ExecResult:  # type: ignore[override]
            raise SandboxError("bwrap: setting up uid map: Permission denied")

    ctx = ToolContext(workspace=tmp_path, sandbox=Broken(ExecResult()))
    r = await default_registry().call("bash", {"command": "ls"}, ctx)
    assert r.error == ("bash: the sandbox could not run the bash program: bwrap: setting up uid map: Permission "
                       "denied")


async def test_empty_code_is_a_validation_error(tmp_path: Path) -> None:
    r = await default_registry().call("python", {"code": ""}, ToolContext(workspace=tmp_path))
    assert r.error is not None and r.error.startswith("python: 'code' must not be empty; expected {code: string")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("sum(i * i for i in range(1, 101))", "338350"),
        ("x = 1; x + 1", "2"),
        ("def f():\n    return 'é'\nf()  # comment\n", "'é'"),
        ("print(3)", "3"),  # a print is never doubled
        ("x = 3", ""),  # not an expression: nothing added
        ("None", ""),  # like a REPL, None is not shown
    ],
)
def test_a_final_bare_expression_is_echoed_like_a_repl(code: str, expected: str) -> None:
    import subprocess
    import sys

    from ghost_agent.tools.python_tool import echo_last_expression

    out = subprocess.run([sys.executable, "-c", echo_last_expression(code)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


def test_code_that_does_not_parse_is_left_for_the_sandbox_to_report() -> None:
    from ghost_agent.tools.python_tool import echo_last_expression

    assert echo_last_expression("1 +") == "1 +"
