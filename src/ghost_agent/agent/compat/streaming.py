"""Streaming an agent turn: the role chunk at once, tool progress optionally, the answer, finish, usage.

The client gets well-formed SSE from the first byte even though the answer only exists once the tool loop
and the verifier are done. With `progress=True` each tool call and its outcome are streamed as content lines
while the turn runs (`--stream-tool-progress`); otherwise nothing is interleaved into the answer. A failure
after the first chunk propagates from the generator and becomes an in-band error event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ghost_agent.agent.turn import Turn
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire

CONTENT_PIECE_CHARS = 64  # the answer is streamed in pieces, as a model would

RunAgent = Callable[[Any], Awaitable[str]]


async def agent_chunks(turn: Turn, run: RunAgent, *, progress: bool) -> AsyncIterator[JSON]:
    """`chat.completion.chunk`s for an agent turn; `run(on_event)` produces the reply text."""
    cid = f"chatcmpl-{turn.trajectory_id}" if turn.trajectory_id else wire.completion_id()
    model = str(turn.body.get("model") or "")
    created = int(time.time())

    def content(text: str) -> JSON:
        return wire.chunk(id=cid, model=model, created=created, delta={"content": text})

    started = time.perf_counter()
    yield wire.chunk(id=cid, model=model, created=created, delta={"role": "assistant", "content": ""})
    turn.timings["ttft"] = (time.perf_counter() - started) * 1000.0

    lines: asyncio.Queue[str] = asyncio.Queue()

    async def on_event(event: Any) -> None:
        if event.kind in ("step_start", "step_end") and event.text:
            lines.put_nowait(event.text.rstrip("\n") + "\n")

    task = asyncio.ensure_future(run(on_event if progress else None))
    try:
        while True:
            getter = asyncio.ensure_future(lines.get())
            done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield content(getter.result())
                continue
            getter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await getter
            break
        while not lines.empty():
            yield content(lines.get_nowait())
        text = task.result()  # a BackendError from the turn surfaces here, after the chunks already sent
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if progress and text:
        yield content("\n")
    for i in range(0, len(text), CONTENT_PIECE_CHARS):
        yield content(text[i:i + CONTENT_PIECE_CHARS])
    yield wire.chunk(id=cid, model=model, created=created, delta={}, finish_reason="stop")
    yield wire.chunk(id=cid, model=model, created=created, with_choice=False, usage_obj=turn.usage or wire.usage(0, 0))
