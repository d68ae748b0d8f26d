"""The workspace_data suite: each task carries its data file (not in the prompt); every expected answer is
recomputed in the sandbox from the same file text; a reply that reads the file and ends with the answer line
passes; and end to end, the http runner puts the file where the daemon's tools look."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest

from ghost_agent.eval.run import run_suite
from ghost_agent.eval.runners import HttpRunner, StubRunner
from ghost_agent.eval.suites import load_suite, workspace_data
from ghost_agent.eval.verifiers import get_verifier
from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox import ExecLimits, SandboxBackend
from ghost_agent.sandbox.workspace import workspace_name
from tests.conftest import daemon_on_port, make_settings


def test_tasks_carry_their_file_and_ask_for_an_answer_line() -> None:
    tasks = load_suite("workspace_data")
    assert len(tasks) >= 6 and len({t.id for t in tasks}) == len(tasks)
    assert {t.cluster for t in tasks} == set(workspace_data.CLUSTERS)
    for task in tasks:
        (name, content), = task.files.items()
        assert f"`{name}`" in task.prompt and "current working directory" in task.prompt
        assert "Answer: <number>" in task.prompt and task.verifier == "answer_line"
        assert content.splitlines()[1] not in task.prompt  # the data is in the workspace, not in the prompt
        assert task.to_dict()["files"] == task.files


def test_the_data_files_parse() -> None:
    rows = list(csv.DictReader(io.StringIO(workspace_data.SALES_CSV)))
    assert len(rows) == 16 and set(rows[0]) == {"date", "region", "product", "units", "unit_price"}
    assert len(json.loads(workspace_data.INVENTORY_JSON)["warehouses"]) == 3


async def test_every_answer_is_recomputed_in_the_sandbox(sandbox: SandboxBackend) -> None:
    tasks = {t.id: t for t in load_suite("workspace_data")}
    assert set(workspace_data.REFERENCES) == set(tasks)
    limits = ExecLimits(timeout_s=60.0, memory_mb=512)
    refs = list(workspace_data.REFERENCES.items())
    results = await asyncio.gather(*(sandbox.run(lang, src, limits=limits) for _, (lang, src) in refs))
    for (task_id, _), result in zip(refs, results, strict=True):
        assert result.ok, f"{task_id}: {result.stderr[-500:]}"
        assert float(result.stdout) == pytest.approx(float(tasks[task_id].expected), rel=1e-9), task_id


def test_right_replies_pass_and_the_echo_fails() -> None:
    verify = get_verifier("answer_line")
    for task in load_suite("workspace_data"):
        assert verify(f"I read the file.\nAnswer: {task.expected}", task.expected, **task.kwargs) == 1.0
        assert verify(task.prompt, task.expected, **task.kwargs) == 0.0


async def test_the_stub_runs_the_suite_without_a_workspace() -> None:
    result = await run_suite(load_suite("workspace_data"), StubRunner())
    assert result.pass_rate == 0.0 and all(o.error is None for o in result.outcomes)


async def test_end_to_end_the_file_is_in_the_sessions_workspace(tmp_path: Path) -> None:
    """Through the daemon on a loopback port: the runner writes the task's file where the daemon's workspace for
    that session is, and a reply ending in the right answer line passes."""
    settings = make_settings(tmp_path)
    root = GhostHome(settings.home).workspace
    task = load_suite("workspace_data", ids=["workspace_data/json/json-sku-total"])[0]
    scripted = ScriptedBackend(model="scripted-model", default="error")
    scripted.enqueue(ScriptedReply(content="12 + 30 + 9 = 51\n**Answer:** 51"))
    with daemon_on_port(settings, scripted) as url:
        runner = HttpRunner(url, timeout_s=30, workspace_root=root)
        try:
            result = await run_suite([task], runner)
        finally:
            await runner.aclose()
    [outcome] = result.outcomes
    assert outcome.passed, outcome
    placed = root / workspace_name(runner.session_id(task)) / "inventory.json"
    assert placed.read_text() == workspace_data.INVENTORY_JSON
