"""`ghost-agent selfplay run` practises in-process against a real (scripted) upstream on loopback and leaves
labelled trajectories, tracker counts and a worked example in the home; `selfplay stats` reports them per
cluster, `selfplay bank` lists the examples."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from ghost_agent.cli.main import main
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox import SandboxBackend
from ghost_agent.selfplay.frontier import FrontierTracker, choose
from ghost_agent.selfplay.task import generate
from ghost_agent.selfplay.templates import by_cluster, find
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import sandbox  # noqa: F401 - the module-scoped fixture


def test_run_then_stats(tmp_path: Path, sandbox: SandboxBackend, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    from ghost_agent.llm.fake_server import FakeOpenAIServer, serve_in_thread

    templates = {"data_analysis": [t.name for t in by_cluster()["data_analysis"]]}
    pick = choose(FrontierTracker(), random.Random(3), templates, frontier=False)
    assert pick is not None
    task = generate(find(pick["cluster"], pick["template"]), pick["seed"], pick["difficulty"])
    upstream = ScriptedBackend(replies=[ScriptedReply(content=task.reference), ScriptedReply(content=task.bad[0])])
    home = tmp_path / "home"
    with serve_in_thread(FakeOpenAIServer(upstream)) as url:
        code = main(["selfplay", "run", "--home", str(home), "--upstream-url", url, "--router", "always-fast",
                     "--cluster", "data_analysis", "--n", "1", "--attempts", "2", "--seed", "3", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    log = (home / "system" / "logs" / "ghost.jsonl").read_text()
    assert "selfplay_attempt" in log and "watchdog_started" not in log  # practice is all that uses the model
    assert "1/2 attempts passed over 1 tasks" in out and "data_analysis" in out
    trajs = list(TrajectoryCollector(home / "system" / "trajectories").iter_trajectories())
    assert sorted(t.outcome.value for t in trajs) == ["failed", "passed"]
    assert {t.cluster for t in trajs} == {"data_analysis"}
    assert main(["selfplay", "stats", "--home", str(home), "--json"]) == 0
    rows = {r["cluster"]: r for r in orjson.loads(capsys.readouterr().out)}
    assert rows["data_analysis"]["attempts"] == 2 and rows["data_analysis"]["passes"] == 1
    assert rows["data_analysis"]["trajectories"] == 2 and rows["data_analysis"]["weight"] is None
    # the passing reply is now a worked example
    assert main(["selfplay", "bank", "--home", str(home), "--json"]) == 0
    bank = orjson.loads(capsys.readouterr().out)
    assert bank["stats"]["examples"] == 1
    [example] = bank["examples"]
    assert example["request"] == task.prompt and example["answer"] == task.reference and example["task_id"] == task.id
    assert main(["selfplay", "bank", "--home", str(home)]) == 0
    assert "1 worked examples" in capsys.readouterr().out


def test_bank_of_a_fresh_home(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "bank", "--home", str(tmp_path / "home")]) == 0
    assert "0 worked examples" in capsys.readouterr().out
    assert not (tmp_path / "home" / "system" / "selfplay" / "experience.sqlite3").exists()  # a view creates nothing
