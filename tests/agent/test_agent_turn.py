"""The agent turn end to end: the daemon in front of the scripted fake upstream over real HTTP, the real
sandbox, the real trajectory store and lesson store. Assertions are on what the agent sent the model and what
it wrote to disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from openai import OpenAI

from ghost_agent.home import GhostHome
from ghost_agent.llm.factory import make_backend
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.store import SkillMemory
from ghost_agent.prm.features import PRM_FEATURE_NAMES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.agent.daemon_helpers import act, agent_settings, daemon, needs_sandbox, say  # noqa: F401 - needs_sandbox: autouse
from tests.conftest import daemon_on_port, sse_events

SQUARES = "print(sum(i * i for i in range(1, 101)))"
REQUEST = "use python to compute the sum of the squares of 1..100"


def verdict(v: str, confidence: float, note: str = "checked") -> ScriptedReply:
    return ScriptedReply(content=json.dumps({"verdict": v, "confidence": confidence, "note": note}))


async def chat(client: httpx.AsyncClient, content: str = REQUEST, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], **extra}
    return await client.post("/v1/chat/completions", json=body)


def stored(settings: Settings, trajectory_id: str) -> Trajectory:
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        collector.flush()
        found = collector.get(trajectory_id)
    assert found is not None, f"trajectory {trajectory_id} not on disk"
    return found


def prompt_text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages"))


async def test_a_tool_turn_end_to_end(tmp_path: Path, upstream: tuple[str, ScriptedBackend]) -> None:
    url, llm = upstream
    llm.enqueue(act("python", code=SQUARES), say("The sum of the squares is 338350."), verdict("CONFIRMED", 0.9))
    settings = agent_settings(tmp_path, url)
    async with daemon(settings) as client:
        response = await chat(client)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "The sum of the squares is 338350."
    trajectory_id = response.headers["x-ghost-trajectory-id"]
    # the model saw the tool protocol, then the sandbox's output
    system = llm.requests[0]["messages"][0]["content"]
    assert '"tool"' in system and "python" in system and "file_system" in system
    assert "338350" in prompt_text(llm.requests[1])
    assert "338350" in prompt_text(llm.requests[2])  # the verifier saw the evidence
    traj = stored(settings, trajectory_id)
    [step] = traj.steps
    assert (step.tool_name, step.ok, step.result_preview.strip()) == ("python", True, "338350")
    assert step.tool_args == {"code": SQUARES} and step.extra["prm_state"] == {"pending_count": 0, "plan_depth": 1}
    assert traj.router is not None and traj.router["decision"] == "agent"
    assert traj.verifier is not None and traj.verifier["verdict"] == "CONFIRMED"
    assert traj.outcome is Outcome.PASSED and traj.final_response.endswith("338350.")


async def test_fast_route_is_one_backend_call_and_zero_steps(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(say("Hi!"))
    settings = agent_settings(tmp_path, url, router="always-fast")
    async with daemon(settings) as client:
        response = await chat(client, "hello there")
    assert response.json()["choices"][0]["message"]["content"] == "Hi!" and len(llm.requests) == 1
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.steps == [] and traj.router is not None
    assert (traj.router["decision"], traj.router["reason"]) == ("fast", "forced")


async def test_untrained_router_sends_chit_chat_fast_and_computation_to_the_agent(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(say("Hello! How can I help?"), act("python", code=SQUARES), say("338350"),
                verdict("CONFIRMED", 0.9))
    settings = agent_settings(tmp_path, url, router="auto")
    async with daemon(settings) as client:
        hello = await chat(client, "hello there")
        compute = await chat(client, REQUEST)
    # the prior: a greeting is one plain call (the client's messages as they are), computation takes the agent
    assert llm.requests[0]["messages"] == [{"role": "user", "content": "hello there"}]
    traj = stored(settings, hello.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and (traj.router["decision"], traj.router["reason"]) == ("fast", "prior_fast")
    traj = stored(settings, compute.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and (traj.router["decision"], traj.router["reason"]) == ("agent", "prior_agent")
    assert compute.json()["choices"][0]["message"]["content"] == "338350"


def python_loving_prm(path: Path) -> Path:
    weights = np.zeros(len(PRM_FEATURE_NAMES))
    weights[PRM_FEATURE_NAMES.index("tool_is_heavyweight")] = 3.0
    return StepValueModel(weights=weights, bias=-1.0).save(path)


@pytest.mark.parametrize("with_prm", [True, False])
async def test_mcts_provenance_with_and_without_a_prm(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], with_prm: bool
) -> None:
    url, llm = upstream
    overrides: dict[str, Any] = {"mcts": True, "mcts_candidates": 2, "mcts_expand": 0, "mcts_simulate": True}
    if with_prm:
        overrides["prm_model"] = python_loving_prm(tmp_path / "prm.json")
    proposal = say(json.dumps([{"description": "answer now", "tool": None, "args": {}},
                               {"description": "shell", "tool": "bash", "args": {"command": "echo 338350"}}]))
    script = [act("python", code=SQUARES), proposal]
    if not with_prm:
        script += [say('{"imagined_result": "prints 338350", "score": 9}'), say('{"score": 2}')]
    script += [say("338350"), verdict("CONFIRMED", 0.8)]
    llm.enqueue(*script)
    settings = agent_settings(tmp_path, url, **overrides)
    async with daemon(settings) as client:
        response = await chat(client)
    assert response.status_code == 200, response.text
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    [step] = traj.steps
    assert step.extra["mcts"]["provenance"] == ("prm" if with_prm else "llm_sim")
    assert step.prm_score is not None
    simulations = [r for r in llm.requests if "imagined_result" in prompt_text(r)]
    assert len(simulations) == (0 if with_prm else 2)


async def test_without_a_prm_and_simulation_off_the_turn_is_single_shot(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(act("python", code=SQUARES), say("338350"), verdict("CONFIRMED", 0.8))
    settings = agent_settings(tmp_path, url, mcts=True)  # the shipped default: mcts on, mcts_simulate off
    async with daemon(settings) as client:
        response = await chat(client)
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    [step] = traj.steps
    assert "mcts" not in step.extra and len(llm.requests) == 3  # no proposal, no simulation


async def test_backend_failure_mid_turn_is_an_error_and_a_failed_trajectory(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(act("python", code="print(6 * 7)"), ScriptedReply(error=(500, "model crashed")))
    settings = agent_settings(tmp_path, url, upstream_retries=0)
    async with daemon(settings) as client:
        response = await chat(client, "compute 6*7 with python")
    assert response.status_code == 502
    assert "model crashed" in response.json()["error"]["message"]
    with TrajectoryCollector(GhostHome(settings.home).trajectories) as collector:
        [traj] = list(collector.iter_trajectories())
    assert traj.outcome is Outcome.FAILED and "model crashed" in (traj.failure_reason or "")
    assert [s.tool_name for s in traj.steps] == ["python"]


async def test_recovery_lesson_is_learned_and_shown_on_a_similar_request(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(
        act("python", code="import numpyy\nprint(numpyy.arange(5).sum())"),
        act("python", code="import numpy\nprint(numpy.arange(5).sum())"),
        say("The sum is 10."),
        verdict("CONFIRMED", 0.9),
        say("Sure, 45."),  # turn 2 answers directly
    )
    settings = agent_settings(tmp_path, url)
    async with daemon(settings) as client:
        first = await chat(client, "sum the numbers 0..4 with numpy in python")
        first_id = first.headers["x-ghost-trajectory-id"]
        with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
            [lesson] = memory.all()
        assert lesson.source_trajectory_id == first_id and "numpyy" in lesson.mistake
        second = await chat(client, "sum the numbers 0..9 with numpy in python")
    assert lesson.id in prompt_text(llm.requests[4]) or "numpyy" in prompt_text(llm.requests[4])
    traj = stored(settings, second.headers["x-ghost-trajectory-id"])
    assert [ref["id"] for ref in traj.extra["lessons_shown"]] == [lesson.id]


async def test_user_correction_fails_the_prior_turn_and_retracts_its_lessons(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(say("kangaroo trampoline lighthouse"), say("kangaroo trampoline metronome"))
    settings = agent_settings(tmp_path, url)
    async with daemon(settings) as client:
        first = await chat(client, "Reply with three words exactly: kangaroo trampoline lighthouse")
        first_id = first.headers["x-ghost-trajectory-id"]
        with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
            memory.learn_lesson("three words", "added words", "reply exactly", source_trajectory_id=first_id)
            memory.learn_lesson("other task", "other mistake", "other fix", source_trajectory_id="someone-else")
        body = {"model": "m", "messages": [
            {"role": "user", "content": "Reply with three words exactly: kangaroo trampoline lighthouse"},
            {"role": "assistant", "content": "kangaroo trampoline lighthouse"},
            {"role": "user", "content": "no, reply with three words exactly: kangaroo trampoline metronome"},
        ]}
        second = await client.post("/v1/chat/completions", json=body)
    assert second.status_code == 200
    traj = stored(settings, first_id)
    assert traj.outcome is Outcome.FAILED and traj.extra["correction"]["source"] == "user_correction"
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        assert [lesson.source_trajectory_id for lesson in memory.all()] == ["someone-else"]


async def test_streamed_agent_turn_is_well_formed_sse(tmp_path: Path, upstream: tuple[str, ScriptedBackend]) -> None:
    url, llm = upstream
    llm.enqueue(act("python", code=SQUARES), say("It is 338350."), verdict("CONFIRMED", 0.9))
    settings = agent_settings(tmp_path, url)
    async with daemon(settings) as client:
        response = await chat(client, stream=True, stream_options={"include_usage": True})
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "It is 338350."  # no tool progress interleaved by default
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] >= 0
    assert response.headers["x-ghost-trajectory-id"]


def test_streaming_agent_turn_through_the_openai_sdk(tmp_path: Path, upstream: tuple[str, ScriptedBackend]) -> None:
    url, llm = upstream
    llm.enqueue(act("python", code=SQUARES), say("The answer is 338350."), verdict("CONFIRMED", 0.9))
    settings = agent_settings(tmp_path, url, stream_tool_progress=True)
    with daemon_on_port(settings, make_backend(settings.backend)) as base, OpenAI(
        base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=30
    ) as sdk:
        stream = sdk.chat.completions.create(
            model="m", messages=[{"role": "user", "content": REQUEST}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert "step 1" in text and "python" in text  # tool progress streamed as content when asked
    assert text.endswith("The answer is 338350.")


async def test_client_tools_pass_through_even_when_the_agent_would_run(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    from ghost_agent.llm.scripted import tool_call

    url, llm = upstream
    llm.enqueue(ScriptedReply(tool_calls=[tool_call("get_weather", '{"city": "Oslo"}')]))
    settings = agent_settings(tmp_path, url, router="auto")
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    async with daemon(settings) as client:
        response = await chat(client, "weather in Oslo?", tools=[weather])
    assert response.status_code == 200
    calls = response.json()["choices"][0]["message"]["tool_calls"]
    assert calls[0]["function"]["name"] == "get_weather"
    assert llm.requests[0]["tools"] == [weather] and len(llm.requests) == 1
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and traj.router["reason"] == "client_tools"


# ------------------------------------------------------------------------------- the answer-first default


async def test_the_default_agent_turn_answers_first_with_the_clients_own_messages(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(say("Paris."))
    settings = agent_settings(tmp_path, url, agent_strategy="auto")
    async with daemon(settings) as client:
        response = await chat(client, "What is the capital of France?", temperature=0.2)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "Paris."
    [sent] = llm.requests
    assert sent["messages"] == [{"role": "user", "content": "What is the capital of France?"}]
    assert sent["temperature"] == 0.2
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    agent = traj.extra["agent"]
    assert agent["strategy"] == "answer-first" and agent["kind"] == "general"
    assert agent["cost"]["llm_calls"] == 1 and agent["cost"]["sandbox_runs"] == 0
    assert traj.verifier is None and traj.steps == []


async def test_a_code_answer_still_failing_the_users_examples_is_refuted_by_execution(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    spec = 'Complete this function:\n```python\ndef double(x):\n    """\n    >>> double(3)\n    6\n    """\n```'
    wrong = "```python\ndef double(x):\n    return x + 2\n```"
    llm.enqueue(say(wrong), say(wrong))
    settings = agent_settings(tmp_path, url, agent_strategy="auto", check_model_tests=0, check_samples=0)
    async with daemon(settings) as client:
        response = await chat(client, spec)
    content = response.json()["choices"][0]["message"]["content"]
    assert content.startswith(wrong) and "double(3)" in content and "expected 6, got 5" in content
    assert len(llm.requests) == 2  # draft + one repair; no verifier call: execution decided
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.verifier is not None
    assert (traj.verifier["verdict"], traj.verifier["source"]) == ("REFUTED", "execution")
    assert traj.outcome is Outcome.FAILED
    assert [s.tool_name for s in traj.steps] == ["python", "python"]
    assert traj.extra["agent"]["cost"]["sandbox_runs"] == 2



SQL_REPLY = ("```sql\nSELECT region, SUM(amount) AS total\nFROM orders\nWHERE amount > 100\nGROUP BY region;\n```\n"
             "This sums the amount of every order over 100, per region.")


@pytest.mark.parametrize("request_text", [
    "Write a SQL query that returns the total amount per region for orders over 100",
    # the regex rules called this one a computation ("total" and two numbers): the reply became a number
    "Write a SQL query that returns the total amount per region for orders between 100 and 500",
])
async def test_a_sql_request_gets_the_scripted_query_back_unchanged_and_nothing_computed(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], request_text: str
) -> None:
    """A SQL request is code, and code in another language than Python is not run: the draft is the reply."""
    url, llm = upstream
    llm.enqueue(say(SQL_REPLY))  # one call: a second one (a program to compute a number) would fail the turn
    settings = agent_settings(tmp_path, url, agent_strategy="auto")
    async with daemon(settings) as client:
        response = await chat(client, request_text)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == SQL_REPLY
    [sent] = llm.requests
    assert sent["messages"] == [{"role": "user", "content": request_text}]
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    agent = traj.extra["agent"]
    assert agent["strategy"] == "answer-first" and agent["kind"] == "code"
    assert "computed" not in agent and agent["revised"] is False
    assert agent["checks_skipped"] == "the answer's code is not Python: no tests run"
    assert traj.steps == [] and agent["cost"]["sandbox_runs"] == 0
