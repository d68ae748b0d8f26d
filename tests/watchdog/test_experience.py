"""The experience bank end to end, in the real daemon with the scripted backend: a self-play pass keeps its passing
reply as a worked example; a similar chat request is shown it (in front of its last user message, never in a
system message) and an unrelated one is not; the practice turn is never shown its own task; a failure after
showing (a validator's verdict, a user correction) lowers the example's rank; an echo of the block never
reaches the user."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.examples import CLOSE, HEADER, OPEN
from ghost_agent.memory.sanitize import neutralize_lines
from ghost_agent.sandbox import SandboxBackend
from ghost_agent.selfplay.experience import ExperienceBank
from ghost_agent.selfplay.practice import grader
from ghost_agent.selfplay.task import Task, generate
from ghost_agent.selfplay.templates import find
from ghost_agent.trajectories.record import Source
from ghost_agent.watchdog.phases.self_play import SelfPlayPhase
from tests.conftest import sandbox  # noqa: F401 - the module-scoped fixture
from tests.watchdog.conftest import CHAT, PLACEHOLDER, Daemon, watchdog_app
from tests.watchdog.test_self_play import SEED, first_task, run_self_play


def messages_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return list(body["messages"])


def last_user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(messages_of(body)) if m["role"] == "user")


def shown_in(body: dict[str, Any]) -> bool:
    return OPEN in json.dumps(body["messages"])


def sibling(task: Task, seed: int) -> Task:
    """The same kind of task with other data (a seed practice never set)."""
    return generate(find(task.cluster, task.template), seed, task.difficulty)


async def practise_once(daemon: Daemon, task: Task) -> str:
    """One self-play pass over `task` (first attempt passes, second fails); returns the kept example's id."""
    result = await run_self_play(daemon)
    assert result.status == "ok" and result.data["passed"] == 1, result
    bank = daemon.ctx.experience
    assert bank is not None
    [example] = bank.examples()
    assert example.request == task.prompt and example.answer == task.reference and example.task_id == task.id
    return example.id


async def test_a_practised_solution_is_shown_to_a_similar_request_only(
    tmp_path: Path, sandbox: SandboxBackend  # noqa: F811
) -> None:
    task = first_task()
    assert isinstance(task, Task)
    similar = sibling(task, 4242)
    backend = ScriptedBackend(replies=[ScriptedReply(content=task.reference), ScriptedReply(content=task.bad[0]),
                                       ScriptedReply(content="42"), ScriptedReply(content="hi!")])
    phase = SelfPlayPhase(PLACEHOLDER, tasks=1, attempts=2, rng=random.Random(SEED))
    async with watchdog_app(tmp_path, backend=backend, phases=(phase,), router="always-fast") as daemon:
        example_id = await practise_once(daemon, task)
        practice_requests = list(backend.requests)
        reply = await daemon.client.post(CHAT, json={"messages": [
            {"role": "system", "content": "You are terse."}, {"role": "user", "content": similar.prompt}]})
        assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "42"
        unrelated = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": "hello there"}]})
        assert unrelated.status_code == 200
        trajs = [t for t in daemon.ctx.collector.iter_trajectories() if t.source == Source.CHAT.value]
        bank = daemon.ctx.experience
        assert bank is not None
        kept = bank.get(example_id)
    # the practice turns: the first had an empty bank, the second is the same task - never its own answer
    assert not any(shown_in(body) for body in practice_requests)
    sent = backend.requests[2]
    text = last_user(sent)
    assert text.startswith(HEADER + "\n" + OPEN) and text.endswith(similar.prompt)
    assert f"Checked answer:\n{neutralize_lines(task.reference)}\n{CLOSE}" in text  # code kept as lines
    assert all(OPEN not in m["content"] for m in messages_of(sent) if m["role"] == "system")
    assert not shown_in(backend.requests[3])  # "hello there" is like nothing in the bank
    by_request = {t.user_request: t for t in trajs}
    assert [r["id"] for r in by_request[similar.prompt].extra["examples_shown"]] == [example_id]
    assert "examples_shown" not in by_request["hello there"].extra
    assert kept is not None and kept.shown == 1 and kept.fails == 0
    assert by_request[similar.prompt].user_request == similar.prompt  # the record keeps the request as sent


async def test_a_failure_after_showing_lowers_the_rank(tmp_path: Path, sandbox: SandboxBackend) -> None:  # noqa: F811
    task = first_task()
    assert isinstance(task, Task)
    other = sibling(task, 777)
    backend = ScriptedBackend(replies=[ScriptedReply(content=task.reference), ScriptedReply(content=task.bad[0]),
                                       ScriptedReply(content=other.bad[0])])
    phase = SelfPlayPhase(PLACEHOLDER, tasks=1, attempts=2, rng=random.Random(SEED))
    async with watchdog_app(tmp_path, backend=backend, phases=(phase,), router="always-fast") as daemon:
        example_id = await practise_once(daemon, task)
        bank = daemon.ctx.experience
        assert bank is not None
        [before] = bank.search(other.prompt, 1)
        pick = {"cluster": other.cluster, "template": other.template, "seed": other.seed,
                "difficulty": other.difficulty, "reason": "test"}
        turn = await daemon.ctx.practice_turn(other.prompt, session_id="selfplay-other", files=other.files,
                                              grade=grader(other, pick, 0, sandbox))  # type: ignore[arg-type]
        assert turn.grade is not None and turn.grade.outcome == "failed"
        [after] = bank.search(other.prompt, 1)
        [traj] = [t for t in daemon.ctx.collector.iter_trajectories() if t.id == turn.trajectory_id]
    assert shown_in(backend.requests[2])  # another task of the same kind may be shown the example
    assert traj.extra["examples_shown"][0]["id"] == example_id
    assert after.id == example_id and (after.shown, after.fails) == (1, 1)
    assert after.rank < before.rank


async def test_a_user_correction_demotes_the_examples_shown(tmp_path: Path) -> None:
    bank_path = tmp_path / "home" / "system" / "selfplay" / "experience.sqlite3"
    request = "What is the total revenue for the North region in sales.csv? Reply with just the number."
    with ExperienceBank(bank_path) as bank:
        kept = bank.add("What is the total revenue for the East region in orders.csv? Reply with just the number.",
                        "```python\nprint(12.5)\n```")
    assert kept is not None
    backend = ScriptedBackend(replies=[ScriptedReply(content="The total is 100."), ScriptedReply(content="ok")])
    async with watchdog_app(tmp_path, backend=backend, router="always-fast", home=tmp_path / "home") as daemon:
        first = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": request}]})
        answer = first.json()["choices"][0]["message"]["content"]
        assert shown_in(backend.requests[0])
        await daemon.client.post(CHAT, json={"messages": [
            {"role": "user", "content": request}, {"role": "assistant", "content": answer},
            {"role": "user", "content": "No, that's wrong - what is the total revenue for the North region "
                                        "in sales.csv, just the number"}]})
        bank = daemon.ctx.experience
        assert bank is not None
        demoted = bank.get(kept.id)
    assert demoted is not None and demoted.fails == 1


async def test_an_echoed_examples_block_never_reaches_the_user(tmp_path: Path) -> None:
    request = "What is the total revenue for the North region in sales.csv? Reply with just the number."
    home = tmp_path / "home"
    with ExperienceBank(home / "system" / "selfplay" / "experience.sqlite3") as bank:
        bank.add("What is the total revenue for the East region in orders.csv? Reply with just the number.", "12.5")
    backend = ScriptedBackend(replies=[ScriptedReply(content="placeholder")])
    async with watchdog_app(tmp_path, backend=backend, router="always-fast", home=home) as daemon:
        await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": request}]})
        echo = last_user(backend.requests[0]).removesuffix(request)
        for stream in (False, True):
            backend.enqueue(ScriptedReply(content=f"{echo}The total is 7."))
            reply = await daemon.client.post(CHAT, json={"stream": stream, "messages": [
                {"role": "user", "content": request}]})
            if stream:
                chunks = [json.loads(line[6:]) for line in reply.text.splitlines()
                          if line.startswith("data: ") and line != "data: [DONE]"]
                text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
            else:
                text = reply.json()["choices"][0]["message"]["content"]
            assert text == "The total is 7.", stream


async def test_experience_top_k_zero_shows_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    request = "What is the total revenue for the North region in sales.csv? Reply with just the number."
    with ExperienceBank(home / "system" / "selfplay" / "experience.sqlite3") as bank:
        bank.add("What is the total revenue for the East region in orders.csv? Reply with just the number.", "12.5")
    backend = ScriptedBackend(replies=[ScriptedReply(content="7")])
    async with watchdog_app(tmp_path, backend=backend, router="always-fast", home=home,
                            experience_top_k=0) as daemon:
        await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": request}]})
    assert not shown_in(backend.requests[0])


async def test_the_agent_turn_is_shown_the_examples_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    request = "What is the total revenue for the North region in sales.csv? Reply with just the number."
    with ExperienceBank(home / "system" / "selfplay" / "experience.sqlite3") as bank:
        bank.add("What is the total revenue for the East region in orders.csv? Reply with just the number.", "12.5")
    backend = ScriptedBackend(replies=[ScriptedReply(content="7")] * 4)
    async with watchdog_app(tmp_path, backend=backend, router="always-agent", agent_strategy="answer-first",
                            mcts=False) as daemon:
        reply = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": request}]})
    assert reply.status_code == 200
    draft = backend.requests[0]
    assert last_user(draft).startswith(HEADER) and last_user(draft).endswith(request)
    assert all(OPEN not in m["content"] for m in messages_of(draft) if m["role"] == "system")


async def test_a_corrupt_bank_is_set_aside_and_reported_and_chat_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "home" / "system" / "selfplay" / "experience.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 1000)
    async with watchdog_app(tmp_path) as daemon:
        reply = await daemon.client.post(CHAT, json={"messages": [{"role": "user", "content": "hello there"}]})
        health = (await daemon.client.get("/v1/ghost/health")).json()
        assert daemon.ctx.experience is not None and len(daemon.ctx.experience) == 0
    assert reply.status_code == 200
    aside = health["extra"]["experience_bank_recovered_from"]
    assert Path(aside).exists() and Path(aside).read_bytes().startswith(b"garbage")
