"""Reflector.reflect_one and run (the backstop) with the scripted backend, the real trajectory store and the
real lesson store: the lesson and its provenance, the reflection record, the dedup set shared by both paths,
the per-call timeout, the chat-first gate, and "no lesson" reasons."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ghost_agent.llm.gate import ModelGate, ModelPreempted
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.store import SkillMemory
from ghost_agent.reflection import CompositeSink, Reflector
from ghost_agent.reflection.parse import UNPARSEABLE
from ghost_agent.reflection.reflector import NO_CORRECTION, build_messages
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Source, Trajectory
from tests.reflection.helpers import THREE_WORDS, THREE_WORDS_FIX, critique, failed, step


class Stores:
    """A temp home's trajectory store and lesson store, and a Reflector wired to them like the daemon's."""

    def __init__(self, root: Path) -> None:
        self.collector = TrajectoryCollector(root / "trajectories")
        self.memory: SkillMemory | None = SkillMemory(root / "lessons.db")
        self.llm = ScriptedBackend(default="error")

    def reflector(self, **kwargs: object) -> Reflector:
        sink = CompositeSink(self.collector, lambda: self.memory)
        return Reflector(self.llm, sink=sink, collector=self.collector, **kwargs)  # type: ignore[arg-type]

    def reflections(self) -> list[Trajectory]:
        return list(self.collector.iter_trajectories(source="reflection"))

    def close(self) -> None:
        self.collector.close()
        if self.memory is not None:
            self.memory.close()


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    s = Stores(tmp_path)
    yield s
    s.close()


def recorded(stores: Stores, traj: Trajectory) -> Trajectory:
    """Append `traj` as a chat record, then fail it through the corrections sidecar (as a correction does)."""
    outcome, reason = traj.outcome, traj.failure_reason
    traj.outcome, traj.failure_reason = Outcome.UNKNOWN, None
    stores.collector.append(traj)
    if outcome is Outcome.FAILED:
        stores.collector.update_outcome(traj.id, Outcome.FAILED, reason, source="user_correction")
    found = stores.collector.get(traj.id)
    assert found is not None
    return found


async def test_a_correction_becomes_a_lesson_with_provenance_and_a_reflection_record(stores: Stores) -> None:
    stores.llm.enqueue(critique())
    traj = failed(session="alice")
    result = await stores.reflector().reflect_one(traj, correction=THREE_WORDS_FIX, session_id="alice")
    assert result.status == "ok" and result.lesson_id
    assert stores.memory is not None
    [lesson] = stores.memory.all()
    assert (lesson.id, lesson.source_trajectory_id, lesson.source) == (result.lesson_id, traj.id, "reflection")
    assert lesson.session_id == "alice"
    assert [h.lesson.id for h in stores.memory.search(THREE_WORDS, session="alice")] == [lesson.id]
    [record] = stores.reflections()
    assert record.source == Source.REFLECTION.value and record.session_id == "alice"
    assert record.extra["reflected_from"] == traj.id and record.extra["lesson_id"] == lesson.id
    assert record.extra["correcting_message"] == THREE_WORDS_FIX and record.extra["trigger"] == "user_correction"
    # the critique saw the failed turn and what the user wanted instead
    [request] = stores.llm.requests
    prompt = request["messages"][-1]["content"]
    assert THREE_WORDS in prompt and "Sure! kangaroo trampoline lighthouse" in prompt and THREE_WORDS_FIX in prompt
    assert request["model"] == "m" and request["stream"] is False


def test_the_prompt_says_when_there_was_no_correction() -> None:
    prompt = build_messages(failed(steps=[step(0, ok=False, error="python: exited with code 1")]))
    assert prompt[0]["role"] == "system" and '"solution"' in prompt[0]["content"]
    assert NO_CORRECTION in prompt[1]["content"] and "FAILED: python: exited with code 1" in prompt[1]["content"]


async def test_each_trajectory_is_reflected_once(stores: Stores) -> None:
    stores.llm.enqueue(critique())
    reflector = stores.reflector()
    traj = failed()
    first = await reflector.reflect_one(traj, correction=THREE_WORDS_FIX)
    again = await reflector.reflect_one(traj, correction=THREE_WORDS_FIX)
    assert (first.status, again.status, again.reason) == ("ok", "skipped", "already reflected")
    assert len(stores.llm.requests) == 1


async def test_dedup_across_the_real_time_path_and_the_backstop(stores: Stores) -> None:
    """The id is taken before the critique's await: a backstop pass arriving while the real-time reflection
    is still waiting for the model skips it, and a restarted daemon's backstop skips it by the disk record."""
    traj = recorded(stores, failed())
    stores.llm.enqueue(critique(delay_s=0.2))
    reflector = stores.reflector()
    realtime = asyncio.create_task(reflector.reflect_one(traj, correction=THREE_WORDS_FIX))
    await asyncio.sleep(0.05)  # the critique is in flight
    assert await reflector.run() == []
    assert (await realtime).status == "ok"
    assert await reflector.run() == []
    assert await stores.reflector().run() == []  # a new process: the reflection record says it is done
    assert len(stores.llm.requests) == 1
    # and the other way round: the backstop first, the real-time path finds it taken
    other = recorded(stores, failed("count the lines of code in my project"))
    stores.llm.enqueue(critique("counting lines of code in a project", "gave a number", "Give the command.",
                                delay_s=0.2))
    backstop = asyncio.create_task(reflector.run())
    await asyncio.sleep(0.05)
    late = await reflector.reflect_one(other, correction="no, give me the command to count lines of code")
    assert late.status == "skipped" and [r.status for r in await backstop] == ["ok"]
    assert len(stores.llm.requests) == 2


async def test_the_backstop_takes_recent_failed_trajectories_newest_first_bounded(stores: Stores) -> None:
    now = datetime.now(timezone.utc)
    ts = [(now - timedelta(minutes=m)).isoformat() for m in (30, 20, 10)]
    old = recorded(stores, failed("sort this list of names", ts=(now - timedelta(days=5)).isoformat()))
    trajs = [recorded(stores, failed(f"task number {n} about parsing dates", ts=t)) for n, t in enumerate(ts)]
    passed = failed("a good turn", ts=ts[2])
    passed.outcome = Outcome.PASSED
    recorded(stores, passed)
    stores.llm.enqueue(*(critique(f"parsing dates case {n}", "wrong", f"Fix {n} properly.") for n in range(3)))
    reflector = stores.reflector(lookback_h=24.0)
    first = await reflector.run(limit=2)
    assert [r.trajectory_id for r in first] == [trajs[2].id, trajs[1].id]
    assert all(r.trigger == "backstop" for r in first)
    second = await reflector.run(limit=2)
    assert [r.trajectory_id for r in second] == [trajs[0].id]
    assert await reflector.run(limit=2) == [] and old.id not in reflector.reflected


async def test_the_backstop_finds_the_users_correcting_message(stores: Stores) -> None:
    traj = recorded(stores, failed())
    correcting = failed(THREE_WORDS_FIX, "kangaroo trampoline metronome", extra={"corrected_prior": traj.id})
    correcting.outcome = Outcome.UNKNOWN
    stores.collector.append(correcting)
    stores.llm.enqueue(critique())
    [result] = await stores.reflector().run()
    assert result.status == "ok" and THREE_WORDS_FIX in stores.llm.requests[0]["messages"][-1]["content"]


async def test_transient_failures_are_skipped_without_a_correction(stores: Stores) -> None:
    traj = failed("sum the price column of big.csv", steps=[step(0, ok=False, error="python: timed out after 30.0 s")])
    result = await stores.reflector().reflect_one(traj, trigger="backstop")
    assert result.status == "skipped" and result.reason.startswith("transient failure (timeout")
    assert stores.llm.requests == [] and stores.reflections() == []


async def test_a_corrected_transient_failure_is_reflected_but_never_blames_the_tool(stores: Stores) -> None:
    traj = failed("sum the price column of big.csv", steps=[step(0, ok=False, error="python: timed out after 30.0 s")])
    stores.llm.enqueue(critique("summing a csv column", "python timed out",
                                "Use bash instead of python. Sum the column with one pass over the rows."))
    result = await stores.reflector().reflect_one(traj, correction="no, just sum the price column of big.csv")
    assert result.status == "ok" and result.lesson is not None
    assert result.lesson.solution == "Sum the column with one pass over the rows."
    assert any("tool avoidance" in n for n in result.notes)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (ScriptedReply(content="The assistant should have done better."), UNPARSEABLE),
        (ScriptedReply(content='{"lesson": null}'), "the critique found nothing to learn"),
        (ScriptedReply(content='{"task": "three words", "mistake": "python", "solution": "Never use python."}'),
         "global prohibition: the lesson only bans a tool"),
    ],
)
async def test_no_lesson_is_recorded_with_its_reason(stores: Stores, reply: ScriptedReply, reason: str) -> None:
    stores.llm.enqueue(reply)
    traj = failed()
    result = await stores.reflector().reflect_one(traj, correction=THREE_WORDS_FIX)
    assert (result.status, result.reason) == ("no_lesson", reason)
    assert stores.memory is not None and stores.memory.all() == []
    [record] = stores.reflections()  # the attempt is on record, so a restart does not repeat it
    assert record.extra["no_lesson"] == reason and record.extra["lesson"] is None


async def test_timeout_and_backend_errors_are_no_lesson(stores: Stores) -> None:
    stores.llm.enqueue(critique(delay_s=5.0), ScriptedReply(error=(503, "busy")))
    reflector = stores.reflector(per_call_timeout_s=0.05)
    slow = await reflector.reflect_one(failed(), correction=THREE_WORDS_FIX)
    busy = await reflector.reflect_one(failed(), correction=THREE_WORDS_FIX)
    assert (slow.status, slow.reason) == ("no_lesson", "timeout after 0.05s")
    assert (busy.status, busy.reason) == ("no_lesson", "backend error 503: busy")
    assert stores.llm.cancelled == 1 and stores.reflections() == []


async def test_not_failed_and_reflection_records_are_skipped(stores: Stores) -> None:
    reflector = stores.reflector()
    fine = failed()
    fine.outcome = Outcome.UNKNOWN
    meta = failed(source=Source.REFLECTION.value)
    assert (await reflector.reflect_one(fine)).reason == "outcome is unknown, not failed"
    assert "not reflected on" in (await reflector.reflect_one(meta)).reason
    assert stores.llm.requests == []


async def test_a_sink_error_is_logged_and_swallowed(stores: Stores) -> None:
    assert stores.memory is not None
    stores.memory.close()  # every lesson write now raises SkillMemoryError
    stores.llm.enqueue(critique())
    result = await stores.reflector().reflect_one(failed(), correction=THREE_WORDS_FIX)
    assert result.status == "ok" and result.lesson_id is None
    [record] = stores.reflections()  # the other half of the sink still ran
    assert "lesson_id" not in record.extra
    stores.memory = None  # no lesson store at all: logged, and the reflection is still recorded
    stores.llm.enqueue(critique())
    assert (await stores.reflector().reflect_one(failed(), correction=THREE_WORDS_FIX)).status == "ok"
    assert len(stores.reflections()) == 2


async def test_a_raising_collector_is_swallowed_too(stores: Stores, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the trajectory tree should be")
    sink = CompositeSink(TrajectoryCollector(blocked), lambda: stores.memory)
    stores.llm.enqueue(critique())
    result = await Reflector(stores.llm, sink=sink).reflect_one(failed(), correction=THREE_WORDS_FIX)
    assert result.status == "ok" and result.lesson_id is not None  # the lesson landed; the record could not


async def test_a_secret_in_the_critique_never_reaches_the_disk(stores: Stores) -> None:
    key = "sk-proj-" + "Zq8Wx7Vc6Bn5Ml4Kj3Hg2Fd1Sa0Pq9Or"
    stores.llm.enqueue(critique("calling the weather api", f"pasted the key {key} into the code",
                                f"Read the key from WEATHER_KEY instead of {key}; never print /home/alice/.env."))
    traj = failed("call the weather api, my key is " + key)
    result = await stores.reflector().reflect_one(traj, correction="no, read the key from the environment")
    assert result.status == "ok"
    assert stores.memory is not None
    [lesson] = stores.memory.all()
    assert key not in lesson.task + lesson.mistake + lesson.solution and "alice" not in lesson.solution
    for path in (stores.collector.root).rglob("*.jsonl"):
        assert key not in path.read_text() and "/home/alice" not in path.read_text()


async def test_with_the_gate_chat_goes_first(stores: Stores) -> None:
    gate = ModelGate()
    reflector = stores.reflector(gate=gate)
    stores.llm.enqueue(critique())
    with gate.user():  # a user request is in flight
        pending = asyncio.create_task(reflector.reflect_one(failed(), correction=THREE_WORDS_FIX))
        await asyncio.sleep(0.05)
        assert not pending.done() and stores.llm.requests == []  # the correction's reflection waits
    assert (await asyncio.wait_for(pending, 2.0)).status == "ok"


async def test_with_the_gate_the_backstop_yields_and_keeps_the_trajectory_for_later(stores: Stores) -> None:
    gate = ModelGate()
    reflector = stores.reflector(gate=gate)
    traj = recorded(stores, failed())
    stores.llm.enqueue(critique())
    with gate.user(), pytest.raises(ModelPreempted):
        await reflector.run()
    assert traj.id not in reflector.reflected and stores.llm.requests == []
    assert [r.status for r in await reflector.run()] == ["ok"]


async def test_a_user_arriving_mid_critique_preempts_and_the_correction_retries(stores: Stores) -> None:
    gate = ModelGate()
    reflector = stores.reflector(gate=gate)
    stores.llm.enqueue(critique(delay_s=1.0), critique())
    task = asyncio.create_task(reflector.reflect_one(failed(), correction=THREE_WORDS_FIX))
    await asyncio.sleep(0.05)
    with gate.user():
        await asyncio.sleep(0.05)
    result = await asyncio.wait_for(task, 2.0)
    assert result.status == "ok" and len(stores.llm.requests) == 2 and gate.preemptions == 1


DATES = "When is the summer solstice in 2026? Just the date."
DATES_FIX = "No, I write dates as DD/MM/YYYY. When is the summer solstice in 2026?"


async def test_a_stated_preference_becomes_the_lesson_in_the_users_words_without_a_critique(stores: Stores) -> None:
    traj = failed(DATES, "The summer solstice in 2026 is on June 21.", session="bob")
    result = await stores.reflector().reflect_one(traj, correction=DATES_FIX, session_id="bob")
    assert result.status == "ok" and "from the user's stated preference; no critique" in result.notes
    assert stores.llm.requests == []  # the model was not asked: the user said what they wanted
    assert stores.memory is not None
    [lesson] = stores.memory.all()
    assert lesson.source == "preference" and lesson.source_trajectory_id == traj.id
    assert lesson.solution == 'As the user put it: "I write dates as DD/MM/YYYY."'
    assert lesson.task == f"requests like: {DATES}"  # the whole request
    found = stores.memory.search("What date is the winter solstice in 2027?", session="bob")
    assert [h.lesson.id for h in found] == [lesson.id]
    assert stores.memory.search("Write a haiku about autumn leaves", session="bob") == []


async def test_a_preference_that_only_bans_a_tool_falls_back_to_the_critique(stores: Stores) -> None:
    stores.llm.enqueue(critique("summing a csv column", "ran a script", "Read the column and add it up."))
    traj = failed("Sum the price column of data.csv", "42")
    result = await stores.reflector().reflect_one(traj, correction="No, never use python. Sum the price column.")
    assert result.lesson is not None and result.lesson.solution == "Read the column and add it up."
    assert stores.memory is not None and [x.source for x in stores.memory.all()] == ["reflection"]
