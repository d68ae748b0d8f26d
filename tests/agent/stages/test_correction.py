"""The correction stage reads the previous reply too: a natural correction promotes the prior turn to FAILED,
and a "no" that answers the assistant's own question does not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_agent.agent.recent import RecentTurn
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages.correction import CorrectionEvent, CorrectionStage
from ghost_agent.agent.turn import Turn
from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.tools.registry import default_registry
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import make_settings


@pytest.fixture
def services(tmp_path: Path) -> Iterator[AgentServices]:
    with TrajectoryCollector(tmp_path / "trajectories") as collector:
        yield AgentServices(
            settings=make_settings(tmp_path),
            backend=ScriptedBackend(default="error"),
            collector=collector,
            registry=default_registry(),
        )


def conversation(request: str, reply: str, follow_up: str) -> Turn:
    return Turn(body={"model": "m", "messages": [
        {"role": "user", "content": request},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": follow_up},
    ]})


async def test_the_issues_correction_fails_the_prior_turn(services: AgentServices) -> None:
    request = "How much is 15% of 2340 dollars? Give me the answer formatted like $1,234.56"
    reply = "15% of 2340 is 351."
    services.recent.remember(reply, RecentTurn("t" * 32, request, "default"))
    events: list[CorrectionEvent] = []

    async def hook(event: CorrectionEvent) -> None:
        events.append(event)

    turn = conversation(request, reply, "No, wrong format — tell me what 15% of 2340 dollars is, as $351.00")
    await CorrectionStage(services, hooks=[hook]).run(turn)

    assert turn.state.corrected_prior == "t" * 32
    [line] = services.collector.corrections_path.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert (record["trajectory_id"], record["outcome"], record["source"]) == ("t" * 32, "failed", "user_correction")
    assert record["reason"].startswith("user-correction signal: model p=") and "threshold" in record["reason"]
    [event] = events
    assert event.verdict.is_correction and event.reason == record["reason"]
    assert services.recent.peek(reply) is None  # one promotion per answered turn


async def test_a_no_answering_the_assistants_question_leaves_the_prior_turn_alone(services: AgentServices) -> None:
    request, reply = "Write an email to my landlord about the broken heater", "Should I make it formal?"
    services.recent.remember(reply, RecentTurn("u" * 32, request, "default"))
    turn = conversation(request, reply, "nope, keep it friendly")
    await CorrectionStage(services).run(turn)
    assert turn.state.corrected_prior is None
    assert services.recent.peek(reply) is not None
    assert not services.collector.corrections_path.exists()
