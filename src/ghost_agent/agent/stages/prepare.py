"""The first and last stages of a turn: start it (ContextStage), prepare the request (PrepareStage), the one
backend call of the fast path (BackendCallStage), and the model name every reply carries (ReplyModelStage)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from ghost_agent.agent.turn import Turn
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import LLMBackend, request_timings
from ghost_agent.llm.model_names import ModelNames, renamed
from ghost_agent.llm.stream_fold import ChunkFolder
from ghost_agent.llm.wire import bound_max_tokens
from ghost_agent.trajectories.record import new_trajectory_id


class ContextStage:
    """The turn's identity: its trajectory id is allocated here, at the start, so anything that happens
    during the turn (a correction, a retraction) can already refer to it. No id when recording is off."""

    name = "context"

    def __init__(self, recording: bool) -> None:
        self.recording = recording

    async def run(self, turn: Turn) -> None:
        if self.recording and turn.trajectory_id is None:
            turn.trajectory_id = new_trajectory_id()


class PrepareStage:
    """Normalize the client's body into what the backend receives.

    The forwarded model name follows `ModelNames` (the configured `model`, the upstream's default under an
    alias, else the client's); the name the reply will carry is noted in `turn.state.reply_model` for
    `ReplyModelStage`. Streaming requests always ask the backend for usage (the server counts tokens) and the
    usage chunk is withheld from clients that did not ask for it. A `max_tokens` beyond the forwarded model's
    context (`context_limit(model)`, where the backend knows it) is cut to it: no reply could be longer.
    """

    name = "prepare"

    def __init__(
        self, names: ModelNames | str | None, context_limit: Callable[[object], int | None] | None = None
    ) -> None:
        if not isinstance(names, ModelNames):  # a bare forwarded name (None: the client's goes through)
            names = ModelNames(advertised=names or "", forward=names or None)
        self.names = names
        self.context_limit = context_limit

    async def run(self, turn: Turn) -> None:
        body = turn.body
        turn.state.reply_model = self.names.apply(body)
        if self.context_limit is not None:
            bound_max_tokens(body, self.context_limit(body.get("model")))
        if turn.stream:
            opts = body.get("stream_options")
            body["stream_options"] = {**(opts if isinstance(opts, dict) else {}), "include_usage": True}


class BackendCallStage:
    """Send the prepared body to the LLM backend; one call, no tools of our own (the fast path)."""

    name = "backend"

    def __init__(self, backend: LLMBackend) -> None:
        self.backend = backend

    async def run(self, turn: Turn, body: JSON | None = None) -> None:
        """Call the backend with `body` (default: the turn's body; the fast path passes a copy carrying the
        lessons block, so `turn.body` stays what the client sent and what is recorded)."""
        body = turn.body if body is None else body
        request_timings.set(turn.timings)
        if not turn.stream:
            t0 = time.perf_counter()
            turn.response = await self.backend.complete(body)
            turn.timings["ttft"] = (time.perf_counter() - t0) * 1000.0
            usage = turn.response.get("usage")
            turn.usage = usage if isinstance(usage, dict) else None
            choices = turn.response.get("choices") or [{}]
            turn.finish_reason = choices[0].get("finish_reason") if isinstance(choices[0], dict) else None
            return
        turn.chunks = self._observe(turn, self.backend.stream(body))

    @staticmethod
    async def _observe(turn: Turn, chunks: AsyncIterator[JSON]) -> AsyncIterator[JSON]:
        """Pass chunks through, noting time to first chunk, usage and finish reason on the way, and
        folding them into the completion they amount to (`turn.state.folder`, for the record)."""
        t0 = time.perf_counter()
        first = True
        folder = ChunkFolder(str(turn.body.get("model") or ""))
        turn.state.folder = folder
        async for item in chunks:
            folder.add(item)
            if first:
                turn.timings["ttft"] = (time.perf_counter() - t0) * 1000.0
                first = False
            usage = item.get("usage")
            if isinstance(usage, dict):
                turn.usage = usage
            for choice in item.get("choices") or ():
                if isinstance(choice, dict) and choice.get("finish_reason"):
                    turn.finish_reason = choice["finish_reason"]
            yield item


class ReplyModelStage:
    """The last stage: every reply names the model `PrepareStage` decided on (`ModelNames.reply_model`), on
    every path, so a client sees one name whether the fast path, the agent or an upstream produced the text."""

    name = "reply_model"

    async def run(self, turn: Turn) -> None:
        model = turn.state.reply_model
        if model is None:
            return
        if turn.response is not None:
            turn.response["model"] = model
        if turn.chunks is not None:
            turn.chunks = renamed(turn.chunks, model)
