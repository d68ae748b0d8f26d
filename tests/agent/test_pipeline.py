"""The turn pipeline: ordered stages, timings, finishers isolated from the client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ghost_agent.agent.pipeline import TurnPipeline
from ghost_agent.agent.stages.prepare import BackendCallStage, PrepareStage
from ghost_agent.agent.turn import Turn
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply


class Recorder:
    def __init__(self, name: str, log: list[str], reply: bool = False) -> None:
        self.name = name
        self.log = log
        self.reply = reply

    async def run(self, turn: Turn) -> None:
        self.log.append(self.name)
        if self.reply:
            turn.response = {"ok": True}

    async def finish(self, turn: Turn, error: BaseException | None) -> None:
        self.log.append(f"finish:{self.name}:{type(error).__name__ if error else None}")
        if self.name == "boom":
            raise RuntimeError("finisher bug")


async def test_stages_run_in_order_and_are_timed() -> None:
    log: list[str] = []
    pipeline = TurnPipeline([Recorder("a", log), Recorder("b", log, reply=True)])
    turn = await pipeline.run(Turn(body={}))
    assert log == ["a", "b"]
    assert turn.response == {"ok": True}
    assert {"stage_a", "stage_b"} <= set(turn.timings)


async def test_a_pipeline_without_a_reply_is_a_bug() -> None:
    with pytest.raises(RuntimeError, match="no stage set response or chunks"):
        await TurnPipeline([Recorder("a", [])]).run(Turn(body={}))


async def test_finishers_all_run_even_when_one_raises() -> None:
    log: list[str] = []
    pipeline = TurnPipeline([], finishers=[Recorder("boom", log), Recorder("after", log)])
    await pipeline.finish(Turn(body={}), ValueError("x"))
    assert log == ["finish:boom:ValueError", "finish:after:ValueError"]


class Recording(Recorder):
    before_delivery = True


async def test_each_finisher_runs_once_however_often_the_turn_is_finished() -> None:
    log: list[str] = []
    pipeline = TurnPipeline([], finishers=[Recording("record", log), Recorder("learn", log)])
    turn = Turn(body={})
    await pipeline.finish(turn, before_delivery=True)  # the route, just before the last byte
    assert log == ["finish:record:None"] and turn.finished == {"record"}
    await pipeline.finish(turn)  # after delivery
    await pipeline.finish(turn, ValueError("late"))  # a later error path finds nothing left to run
    assert log == ["finish:record:None", "finish:learn:None"] and turn.finished == {"record", "learn"}


async def test_prepare_forces_usage_and_model() -> None:
    turn = Turn(body={"model": "client", "stream": True, "stream_options": {"foo": 1}}, stream=True)
    await PrepareStage("configured").run(turn)
    assert turn.body["model"] == "configured"
    assert turn.body["stream_options"] == {"foo": 1, "include_usage": True}
    untouched = Turn(body={"model": "client"})
    await PrepareStage(None).run(untouched)
    assert untouched.body == {"model": "client"}


async def test_backend_stage_streams_and_observes_usage_and_finish() -> None:
    backend = ScriptedBackend(
        [ScriptedReply(content="abc", usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3})]
    )
    turn = Turn(body={"messages": [], "stream_options": {"include_usage": True}}, stream=True)
    await BackendCallStage(backend).run(turn)
    assert turn.chunks is not None
    chunks: AsyncIterator[dict[str, object]] = turn.chunks
    items = [c async for c in chunks]
    assert items[-1]["usage"] == {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    assert turn.finish_reason == "stop"
    assert turn.usage == items[-1]["usage"]
    assert "ttft" in turn.timings
