"""The reply stage on its own: verifier verdicts, retraction of exactly this turn's lessons, recovery lessons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages.learn import LearnOnRecovery
from ghost_agent.agent.stages.respond import AgentConfig, RespondStage
from ghost_agent.agent.tool_loop.loop import LoopConfig
from ghost_agent.agent.turn import Turn
from ghost_agent.agent.turn_state import AgentReport, TurnRoute
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.store import SkillMemory
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.tools.registry import default_registry
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import make_settings

REQUEST = "how can I see how many lines of code is a project? just give me the code"


def services(tmp_path: Path, llm: ScriptedBackend, **overrides: Any) -> AgentServices:
    overrides.setdefault("agent_strategy", "action-loop")
    settings = make_settings(tmp_path, router="always-agent", mcts=False, **overrides)
    try:
        sandbox = get_sandbox(settings)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no sandbox backend can run code here: {exc}")
    return AgentServices(
        settings=settings,
        backend=llm,
        collector=TrajectoryCollector(tmp_path / "trajectories"),
        registry=default_registry(),
        memory=SkillMemory(tmp_path / "lessons.sqlite3"),
        workspaces=Workspaces(tmp_path / "ws", quota_mb=16, max_age_days=1),
        sandbox=sandbox,
    )


def agent_turn(trajectory_id: str, content: str = REQUEST) -> Turn:
    turn = Turn(body={"model": "m", "messages": [{"role": "user", "content": content}]})
    turn.trajectory_id = trajectory_id
    turn.state.route = TurnRoute("agent", None, "forced", None, None)
    return turn


def reply(text: str) -> ScriptedReply:
    return ScriptedReply(content=text)


def verdict(v: str, confidence: float, note: str) -> ScriptedReply:
    return reply(json.dumps({"verdict": v, "confidence": confidence, "note": note}))


WC = reply(json.dumps({"tool": "bash", "args": {"command": "printf 'a\\nb\\n' > f.py; wc -l < f.py"}}))


async def test_confident_refutation_notes_the_reply_and_retracts_exactly_this_turns_lessons(tmp_path: Path) -> None:
    llm = ScriptedBackend(default="error")
    llm.enqueue(WC, reply("The project has 2 lines of code."),
                verdict("REFUTED", 0.9, "The user asked for the code, not a number."))
    svc = services(tmp_path, llm)
    assert svc.memory is not None
    svc.memory.learn_lesson("count lines", "ran wc", "print the number", source_trajectory_id="this-turn")
    svc.memory.learn_lesson("parse csv", "used split", "use the csv module", source_trajectory_id="other-turn")
    turn = agent_turn("this-turn")
    await RespondStage(svc).run(turn)
    assert turn.response is not None
    content = turn.response["choices"][0]["message"]["content"]
    assert content.startswith("The project has 2 lines of code.")
    assert "Verifier" in content and "not a number" in content
    assert turn.state.verifier is not None and turn.state.verifier.verdict == "REFUTED"
    assert turn.state.lessons_retracted == 1
    assert [lesson.source_trajectory_id for lesson in svc.memory.all()] == ["other-turn"]


async def test_an_unsure_or_weak_refutation_changes_nothing(tmp_path: Path) -> None:
    llm = ScriptedBackend(default="error")
    llm.enqueue(WC, reply("2 lines."), verdict("REFUTED", 0.5, "maybe wrong"))
    svc = services(tmp_path, llm)
    assert svc.memory is not None
    svc.memory.learn_lesson("count lines", "ran wc", "print the number", source_trajectory_id="this-turn")
    turn = agent_turn("this-turn")
    await RespondStage(svc).run(turn)
    assert turn.response is not None and turn.response["choices"][0]["message"]["content"] == "2 lines."
    assert svc.memory.count() == 1 and turn.state.lessons_retracted is None


async def test_a_failing_verifier_never_breaks_the_turn(tmp_path: Path) -> None:
    llm = ScriptedBackend(default="error")
    llm.enqueue(WC, reply("2 lines."), ScriptedReply(error=(500, "verifier backend down")))
    svc = services(tmp_path, llm)
    turn = agent_turn("t1")
    await RespondStage(svc).run(turn)
    assert turn.response is not None and turn.response["choices"][0]["message"]["content"] == "2 lines."
    assert turn.state.verifier is not None and turn.state.verifier.verdict == "UNSURE" and turn.state.verifier.error


async def test_recovered_and_confirmed_turn_writes_a_lesson_with_provenance(tmp_path: Path) -> None:
    llm = ScriptedBackend(default="error")
    llm.enqueue(
        reply(json.dumps({"tool": "bash", "args": {"command": "wc -l < missing.txt"}})),
        reply(json.dumps({"tool": "bash", "args": {"command": "ls; printf 'x\\n' | wc -l"}})),
        reply("1 line."),
        verdict("CONFIRMED", 0.9, "fine"),
    )
    svc = services(tmp_path, llm)
    assert svc.memory is not None
    turn = agent_turn("recovering-turn", "count the lines of missing.txt with bash")
    await RespondStage(svc).run(turn)
    assert isinstance(turn.state.agent, AgentReport) and turn.state.agent.recovered is True
    await LearnOnRecovery(svc).finish(turn, None)
    [lesson] = svc.memory.all()
    assert lesson.source_trajectory_id == "recovering-turn"
    assert "missing.txt" in lesson.mistake and "wc -l" in lesson.solution


def test_the_agent_config_is_built_once_with_the_stage_from_the_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, max_steps=3, native_tools="off", agent_max_tokens=512, check_samples=0,
                             sandbox_max_output_kb=8, sandbox_timeout_s=12.0)
    stage = RespondStage(AgentServices(settings=settings, backend=ScriptedBackend(),
                                       collector=TrajectoryCollector(tmp_path / "trajectories"),
                                       registry=default_registry()))
    config = stage.config
    assert config == AgentConfig.from_settings(settings.agent, settings.sandbox)
    assert config.loop == LoopConfig(max_steps=3, native_tools="off", max_tokens=512)  # the turn names its model
    assert (config.check.samples, config.check.max_tokens, config.check.model) == (0, 512, None)
    assert (config.limits.timeout_s, config.limits.max_output_bytes) == (12.0, 8 * 1024)
