"""The eval command line: `python -m scripts.eval_baseline freeze|compare` (a real subprocess from the repo root
once, in-process otherwise) and `ghost-agent eval ...`; exit 0 / 1 on a pass-rate drop / 2 on bad input; the
http runner end to end against a daemon on loopback; progress as a bar on a terminal and lines otherwise."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_agent.cli.eval import Progress, main, run_eval_cli
from ghost_agent.eval.baseline import load
from ghost_agent.eval.task import TaskOutcome
from ghost_agent.llm.fake_server import free_port
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from tests.conftest import daemon_on_port, make_settings
from tests.sandbox.conftest import hide_bwrap

REPO = Path(__file__).resolve().parents[2]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_script_freezes_and_compares_from_the_repo_root(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHOST_")}
    base = [sys.executable, "-m", "scripts.eval_baseline"]
    frozen = subprocess.run(
        [*base, "freeze", "--suite", "default", "--runner", "stub", "--timeout", "30", "--home", str(home)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert frozen.returncode == 0, frozen.stderr
    path = home / "system" / "eval" / "default.json"
    assert f"frozen: {path}" in frozen.stdout
    assert "regression               100.0%" in frozen.stdout
    assert "PASS" in frozen.stderr  # not a terminal: one progress line per task
    compared = subprocess.run(
        [*base, "compare", "--suite", "default", "--baseline", str(path), "--home", str(home)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert compared.returncode == 0, compared.stderr
    assert compared.stdout.splitlines()[0].split()[:6] == ["scope", "baseline", "current", "delta", "newly",
                                                           "failing"]
    assert "ok: no drop" in compared.stdout


def test_freeze_writes_to_the_homes_eval_dir_and_compare_exits_1_on_an_injected_regression(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out, err = cli("freeze", "--suite", "default", "--home", str(home), "--no-progress")
    assert code == 0, err
    assert err == ""
    path = home / "system" / "eval" / "default.json"
    frozen = load(path)
    assert frozen.metadata["runner"] == "stub" and frozen.metadata["timeout_s"] == 300.0
    assert 0 < frozen.pass_rate < 1

    code, out, _ = cli("compare", "--suite", "default", "--home", str(home), "--no-progress")
    assert code == 0 and "ok: no drop" in out

    # Inject a regression: the baseline claims a task the stub cannot pass had passed.
    data = json.loads(path.read_text())
    victim = next(o for o in data["outcomes"] if o["cluster"] == "sql")
    victim["passed"] = True
    path.write_text(json.dumps(data))
    code, out, _ = cli("compare", "--suite", "default", "--baseline", str(path), "--home", str(home),
                       "--no-progress")
    assert code == 1
    sql_line = next(line for line in out.splitlines() if line.strip().startswith("sql "))
    assert "100.0% (1/1)" in sql_line and "0.0% (0/1)" in sql_line and "-100.0 pts" in sql_line
    assert victim["task_id"] in sql_line
    assert "REGRESSED" in out
    # every run is a line of the eval history the status page plots
    history = [json.loads(line) for line in (home / "system" / "eval" / "history.jsonl").read_text().splitlines()]
    assert [(h["command"], h["regressed"]) for h in history] == [("freeze", None), ("compare", False),
                                                                 ("compare", True)]
    assert history[0]["pass_rate"] == round(frozen.pass_rate, 6) and history[2]["baseline_pass_rate"] > \
        history[2]["pass_rate"]


def test_ghost_agent_eval_is_the_same_command(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    output = tmp_path / "pl.json"
    code = run_eval_cli(["freeze", "--suite", "post_learning", "--output", str(output), "--home", str(tmp_path),
                         "--seed", "3", "--limit", "2"], out, err)
    assert code == 0, err.getvalue()
    frozen = load(output)
    assert len(frozen.outcomes) == 2 and frozen.pass_rate == 0.0
    assert frozen.metadata["seed"] == 3 and frozen.metadata["limit"] == 2
    assert run_eval_cli(["compare", "--suite", "post_learning", "--baseline", str(output), "--home", str(tmp_path),
                         "--seed", "3", "--limit", "2"], io.StringIO(), io.StringIO()) == 0


def test_humaneval_with_a_limit_through_the_stub(tmp_path: Path) -> None:
    from ghost_agent.sandbox import SandboxError, get_sandbox

    try:
        get_sandbox(make_settings(tmp_path))
    except SandboxError as exc:
        pytest.skip(f"no sandbox backend can run here: {exc}")
    output = tmp_path / "he.json"
    code, out, err = cli("freeze", "--suite", "humaneval", "--limit", "3", "--concurrency", "3", "--output",
                         str(output), "--home", str(tmp_path / "home"))
    assert code == 0, err
    frozen = load(output)
    assert [o.task_id for o in frozen.outcomes] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert not any(o.passed for o in frozen.outcomes)
    assert "suite humaneval: 0/3 passed" in out


def test_code_tasks_without_bubblewrap_stop_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Graded code never runs unisolated either: without bubblewrap the run is refused up front (exit 2)."""
    hide_bwrap(monkeypatch, tmp_path)
    code, out, err = cli("freeze", "--suite", "humaneval", "--limit", "1", "--output", str(tmp_path / "he.json"),
                         "--home", str(tmp_path / "home"), "--no-progress")
    assert code == 2 and out == "" and not (tmp_path / "he.json").exists()
    assert "no sandbox can run the code tasks" in err and "bubblewrap cannot run here" in err
    assert "make sandbox" in err and "--sandbox unisolated" in err


@pytest.mark.parametrize("suite", ["wordproblems", "everyday", "workspace_data"])
def test_the_dev_suites_run_through_the_stub(tmp_path: Path, suite: str) -> None:
    from ghost_agent.sandbox import SandboxError, get_sandbox

    try:
        get_sandbox(make_settings(tmp_path))  # everyday's delivered checks run replies in the sandbox
    except SandboxError as exc:
        pytest.skip(f"no sandbox backend can run here: {exc}")
    output = tmp_path / f"{suite}.json"
    code, out, err = cli("freeze", "--suite", suite, "--limit", "3", "--output", str(output), "--home",
                         str(tmp_path / "home"), "--workspace-root", str(tmp_path / "ws"), "--no-progress")
    assert code == 0, err
    frozen = load(output)
    assert len(frozen.outcomes) == 3 and frozen.suite == suite
    assert not any(o.passed for o in frozen.outcomes) and not any(o.error for o in frozen.outcomes)
    assert f"suite {suite}: 0/3 passed" in out


def test_the_http_runner_end_to_end_and_a_wrong_answer_on_the_second_run(tmp_path: Path) -> None:
    right = "Let me list the workspace to find the file first."
    scripted = ScriptedBackend(model="scripted-model")
    baseline = tmp_path / "pl.json"
    current = tmp_path / "pl-now.json"
    with daemon_on_port(make_settings(tmp_path, api_key="k3y"), scripted) as url:
        scripted.enqueue(*(ScriptedReply(content=right) for _ in range(5)))
        code, out, err = cli("freeze", "--suite", "post_learning", "--runner", "http", "--base-url", url,
                             "--api-key", "k3y", "--model", "scripted-model", "--timeout", "20", "--output",
                             str(baseline), "--home", str(tmp_path / "home"))
        assert code == 0, err
        assert "suite post_learning: 5/5 passed" in out
        scripted.enqueue(*(ScriptedReply(content=right) for _ in range(3)), ScriptedReply(content="It's 8080."),
                         ScriptedReply(content=right))
        code, out, err = cli("compare", "--suite", "post_learning", "--runner", "http", "--base-url", url,
                             "--api-key", "k3y", "--timeout", "20", "--baseline", str(baseline), "--output",
                             str(current), "--home", str(tmp_path / "home"))
        # --timeout is the per-task deadline too: a reply slower than it is a TIMEOUT outcome.
        scripted.enqueue(ScriptedReply(content=right, delay_s=5))
        slow = tmp_path / "slow.json"
        timed = cli("freeze", "--suite", "post_learning", "--runner", "http", "--base-url", url, "--api-key", "k3y",
                    "--timeout", "0.5", "--ids", "post_learning/file_read/config-port", "--output", str(slow),
                    "--home", str(tmp_path / "home"))
        # A refused key cannot reach the daemon's model: the run does not start.
        refused = cli("freeze", "--suite", "post_learning", "--runner", "http", "--base-url", url, "--api-key",
                      "nope", "--output", str(tmp_path / "x.json"), "--home", str(tmp_path / "home"))
    assert code == 1, err
    assert "post_learning/file_read/todo-summary" in out and "REGRESSED" in out
    frozen, now = load(baseline), load(current)
    assert all(o.trajectory_id for o in frozen.outcomes + now.outcomes)
    failing = next(o for o in now.outcomes if not o.passed)
    assert f"trajectory {failing.trajectory_id}" in out
    assert frozen.metadata["runner"] == "http" and frozen.metadata["model"] == "scripted-model"
    assert now.metadata["daemon_model"] == "scripted-model" and now.metadata["model"] == "scripted-model"
    assert refused[0] == 2 and "refused the api key" in refused[2]
    assert timed[0] == 0, timed[2]
    [late] = load(slow).outcomes
    assert late.reward["failure_class"] == "timeout" and late.duration_ms < 4000
    assert load(slow).metadata["timeout_s"] == 0.5
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("argv, message", [
    (["freeze", "--timeout", "0"], "positive number"),
    (["freeze", "--suite", "nope"], "invalid choice"),
    (["freeze", "--concurrency", "0"], "positive integer"),
    (["freeze", "--runner", "cloud"], "invalid choice"),
    (["freeze", "--ids", "default/no-such-task"], "no task(s) default/no-such-task"),
    (["freeze", "--runner", "http", "--base-url", "ftp://127.0.0.1:21"], "invalid base url"),
    (["compare", "--baseline", "{tmp}/missing.json"], "does not exist"),
    (["compare", "--baseline", "{tmp}/corrupt.json"], "not valid JSON"),
    (["compare", "--suite", "humaneval", "--baseline", "{tmp}/good.json"], "is a 'default' result"),
    (["fly"], "invalid choice"),
])
def test_bad_input_exits_2_with_a_clear_message(tmp_path: Path, argv: list[str], message: str) -> None:
    (tmp_path / "corrupt.json").write_text('{"schema": "ghost.eval.suite_result.v1", "outc')
    assert cli("freeze", "--output", str(tmp_path / "good.json"), "--home", str(tmp_path), "--no-progress")[0] == 0
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    extra = ["--home", str(tmp_path)] if argv[0] in ("freeze", "compare") else []
    code, out, err = cli(*argv, *extra)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert out == ""


def test_an_unreachable_daemon_exits_2(tmp_path: Path) -> None:
    code, out, err = cli("freeze", "--runner", "http", "--base-url", f"http://127.0.0.1:{free_port()}",
                         "--timeout", "5", "--output", str(tmp_path / "r.json"), "--home", str(tmp_path))
    assert code == 2 and "cannot reach the daemon" in err and not (tmp_path / "r.json").exists()


def _outcome(task_id: str, passed: bool) -> TaskOutcome:
    label = "keep" if passed else "discard"
    return TaskOutcome(task_id=task_id, cluster="c", passed=passed, reward={"failure_class": label},
                       duration_ms=5.0, trajectory_id="abc" if not passed else None)


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise() -> None:
    tty = io.StringIO()
    bar = Progress(tty, tty=True)
    bar(_outcome("a", True), 1, 4)
    bar(_outcome("b", False), 2, 4)
    bar.close()
    text = tty.getvalue()
    assert text.startswith("\r[######------------------] 1/4  1 passed")
    assert "\r[############------------] 2/4  1 passed" in text and text.endswith("\n") and text.count("\n") == 1
    plain = io.StringIO()
    lines = Progress(plain, tty=False)
    lines(_outcome("a", True), 1, 12)
    lines(_outcome("b", False), 12, 12)
    lines.close()
    first, second = plain.getvalue().splitlines()
    assert first.startswith("[ 1/12] PASS") and first.endswith("a  5 ms")
    assert second.startswith("[12/12] DISCARD") and "trajectory abc" in second
    assert "\r" not in plain.getvalue()
