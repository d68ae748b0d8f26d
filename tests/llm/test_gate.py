"""ModelGate: user requests never wait for background model calls; background calls give way and retry."""

from __future__ import annotations

import asyncio

import pytest

from ghost_agent.llm.gate import ModelGate, ModelPreempted


async def test_a_user_request_preempts_a_background_call() -> None:
    gate = ModelGate()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow_call() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    background = asyncio.ensure_future(gate.background(slow_call))
    await started.wait()
    assert gate.background_busy
    with gate.user():  # entering never waits
        assert gate.user_active
        with pytest.raises(ModelPreempted):
            await background
    assert cancelled.is_set() and gate.preemptions == 1 and not gate.background_busy


async def test_background_fails_fast_while_a_user_is_active() -> None:
    gate = ModelGate()
    calls = 0

    async def call() -> int:
        nonlocal calls
        calls += 1
        return calls

    with gate.user(), pytest.raises(ModelPreempted):
        await gate.background(call)
    assert calls == 0
    assert await gate.background(call) == 1


async def test_wait_mode_waits_for_users_and_retries_a_preempted_call() -> None:
    gate = ModelGate()
    attempts: list[str] = []
    first_started = asyncio.Event()

    async def call() -> str:
        attempts.append("start")
        first_started.set()
        await asyncio.sleep(0.05 if len(attempts) == 1 else 0)
        return f"done after {len(attempts)}"

    task = asyncio.ensure_future(gate.background(call, wait=True))
    await first_started.wait()
    with gate.user():
        await asyncio.sleep(0.02)
        assert not task.done()  # preempted, waiting for the user to finish
    assert await task == "done after 2"


async def test_background_calls_run_one_at_a_time_and_cancel_with_their_caller() -> None:
    gate = ModelGate()
    running = 0
    peak = 0

    async def call() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    await asyncio.gather(*(gate.background(call) for _ in range(4)))
    assert peak == 1

    hung = asyncio.Event()

    async def hang() -> None:
        hung.set()
        await asyncio.sleep(30)

    caller = asyncio.ensure_future(gate.background(hang))
    await hung.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert not gate.background_busy
