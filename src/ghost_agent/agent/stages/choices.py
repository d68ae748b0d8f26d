"""`n > 1`: n independent choices for one request, each run as its own turn and recorded as its own trajectory.

The stages before the reply (correction check, lessons, router) run once for the request; the reply stage then
runs once per choice on a fork of the turn with its own trajectory id (choice 0 keeps the request's, the one
in `x-ghost-trajectory-id`) and its own copy of the body and state. No backend is asked for `n` itself: the
embedded model cannot batch choices and an upstream that ignores `n` would silently return one, so each
choice is one ordinary call (or agent turn). A client `seed` is varied per choice (`seed ^ index`), so choices
differ yet stay reproducible.

* Non-streaming: fast-path choices run concurrently, agent turns one after the other (they share the
  session's workspace); the completions merge into one `chat.completion`, `choices[i].index == i`, usage
  summed over the calls (each processed the prompt).
* Streaming: choice 0 streams to its end, then choice 1, ...; every chunk carries its choice's `index`
  (clients assemble choices by index, as with OpenAI) and the stream's one id; one usage chunk at the end.

Recording (`TurnPipeline.finish`): each choice that started is one trajectory with `extra.choice = {index, n,
trajectory_ids}`. A choice the client received is finished without error; one that failed carries its own
error; one that completed but never reached the client (a sibling failed, the request ended) is finished
with `NotDelivered` (or `ClientDisconnected`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from ghost_agent.agent.turn import ClientDisconnected, Turn
from ghost_agent.agent.turn_state import ChoiceState
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.trajectories.record import new_trajectory_id

Respond = Callable[[Turn], Awaitable[None]]


class NotDelivered(Exception):
    """A choice that completed but never reached the client (a sibling choice failed, or the request did)."""


def fork(turn: Turn, index: int) -> Turn:
    """Choice `index` of `turn`: a turn of its own (own trajectory id except for choice 0, own body and state)."""
    body = dict(turn.body)
    body.pop("n", None)
    seed = body.get("seed")
    if index and isinstance(seed, int) and not isinstance(seed, bool):
        body["seed"] = seed ^ index  # flips low bits only: stays inside the 64-bit range the request had
    trajectory_id = turn.trajectory_id
    if index and trajectory_id is not None:
        trajectory_id = new_trajectory_id()
    return Turn(
        body=body,
        stream=turn.stream,
        include_usage=turn.include_usage,
        request_id=turn.request_id,
        session_id=turn.session_id,
        trajectory_id=trajectory_id,
        started=turn.started,
        timings=dict(turn.timings),
        state=copy.copy(turn.state),
    )


def start_choices(turn: Turn) -> list[Turn]:
    """Fork `turn.n` choices into `turn.choices`, each knowing its index and its siblings' trajectory ids."""
    turn.choices = [fork(turn, i) for i in range(turn.n)]
    ids = [c.trajectory_id for c in turn.choices]
    for i, choice in enumerate(turn.choices):
        choice.state.choice = ChoiceState(index=i, n=turn.n, trajectory_ids=ids)
    return turn.choices


def _choice(turn: Turn) -> ChoiceState:
    """The choice a forked turn is (`start_choices` sets it on every choice)."""
    assert turn.state.choice is not None, "not a choice: start_choices made it"
    return turn.state.choice


def choice_error(choice: Turn, error: BaseException | None) -> BaseException | None:
    """What a started choice is finished (recorded) with, given how the request ended (`error`)."""
    state = _choice(choice)
    if state.delivered or error is None:
        return None
    if state.error is not None:
        return state.error
    if isinstance(error, ClientDisconnected):
        return error
    return NotDelivered(f"choice {state.index} was not delivered: {error!r}")


async def _run(choice: Turn, respond: Respond) -> None:
    _choice(choice).started = True
    try:
        await respond(choice)
    except Exception as exc:
        _choice(choice).error = exc
        raise


async def _all_or_none(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Run concurrently; the first failure cancels the rest and is raised (not an ExceptionGroup: the route
    maps a BackendError to its status)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if task in done and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


def _sum_usage(choices: list[Turn]) -> JSON | None:
    found = [c.usage for c in choices if isinstance(c.usage, dict)]
    if not found:
        return None
    prompt = sum(int(u.get("prompt_tokens") or 0) for u in found)
    completion = sum(int(u.get("completion_tokens") or 0) for u in found)
    return wire.usage(prompt, completion)


def _settle(turn: Turn) -> None:
    """The request's usage, finish reason and time to first token, from its choices."""
    first = turn.choices[0]
    turn.usage = _sum_usage(turn.choices)
    turn.finish_reason = first.finish_reason
    if "ttft" in first.timings:
        turn.timings["ttft"] = first.timings["ttft"]


def merge_completions(turn: Turn) -> JSON:
    """One `chat.completion` holding each choice's first choice, re-indexed, with the summed usage."""
    merged: JSON = dict(turn.choices[0].response or {})
    choices: list[JSON] = []
    for i, choice in enumerate(turn.choices):
        got = (choice.response or {}).get("choices") or []
        item = dict(got[0]) if got and isinstance(got[0], dict) else {
            "message": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": "stop",
        }
        item["index"] = i
        choices.append(item)
    merged["choices"] = choices
    merged.setdefault("object", "chat.completion")
    merged.setdefault("id", wire.completion_id())
    merged.setdefault("created", int(time.time()))
    merged.setdefault("model", str(turn.body.get("model") or ""))
    usage = _sum_usage(turn.choices)
    if usage is not None:
        merged["usage"] = usage
    return merged


async def respond_choices(turn: Turn, respond: Respond, *, concurrent: bool) -> None:
    """Run `respond` once per choice and set the request's reply (`turn.response` or `turn.chunks`)."""
    start_choices(turn)
    if turn.stream:
        turn.chunks = _stream(turn, respond)
        return
    if concurrent:
        await _all_or_none([_run(c, respond) for c in turn.choices])
    else:
        for choice in turn.choices:
            await _run(choice, respond)
    turn.response = merge_completions(turn)
    _settle(turn)


async def _aclose(source: AsyncIterator[JSON]) -> None:
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


async def _stream(turn: Turn, respond: Respond) -> AsyncIterator[JSON]:
    """The choices' chunks one choice after the other, each re-indexed and under the first chunk's id."""
    cid: str | None = None
    created, model = int(time.time()), str(turn.body.get("model") or "")
    for index, choice in enumerate(turn.choices):
        _choice(choice).started = True
        try:
            await respond(choice)
            assert choice.chunks is not None
            source = choice.chunks
            try:
                async for item in source:
                    parts = item.get("choices")
                    if not parts:
                        continue  # a usage-only chunk: the sum is sent once, at the end
                    if cid is None:
                        cid = str(item.get("id") or wire.completion_id())
                        created = int(item.get("created") or created)
                        model = str(item.get("model") or model)
                        if "ttft" in choice.timings:
                            turn.timings["ttft"] = choice.timings["ttft"]
                    out = {k: v for k, v in item.items() if k != "usage"}
                    out["id"] = cid
                    out["choices"] = [{**p, "index": index} if isinstance(p, dict) else p for p in parts]
                    yield out
            finally:
                await _aclose(source)
        except Exception as exc:
            _choice(choice).error = exc
            raise
        _choice(choice).delivered = True
        _settle(turn)
    yield wire.chunk(
        id=cid or wire.completion_id(), model=model, created=created, with_choice=False,
        usage_obj=turn.usage or wire.usage(0, 0),
    )


__all__ = ["NotDelivered", "choice_error", "fork", "merge_completions", "respond_choices", "start_choices"]
