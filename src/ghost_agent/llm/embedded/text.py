"""Legacy `/v1/completions` on the embedded engine (llama.cpp's `handle_completions`, llm/embedded/engine.py).

Each prompt × `n` is one generation through the engine's usual path (the same worker thread, queue and
cancellation as chat), run one after the other; the replies merge into one `text_completion` with
`choices[i].index` in OpenAI's order (prompt-major). What this engine cannot do is refused with a 400 before
anything runs: `echo`, `logprobs`, `best_of`, `suffix`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import text_completion as tc
from ghost_agent.llm import wire
from ghost_agent.llm.base import BackendError

if TYPE_CHECKING:
    from ghost_agent.llm.embedded.engine import EmbeddedEngine

# OpenAI's default for the legacy endpoint; llama.cpp's own (-1) would generate until the context is full.
DEFAULT_MAX_TOKENS = 16
# Generations (prompts × n) one request may ask for: each holds the model's one slot for a full completion.
MAX_GENERATIONS = 16
_UNSUPPORTED = {
    "echo": "echo (returning the prompt with the completion)",
    "logprobs": "logprobs on legacy completions (use /v1/chat/completions with logprobs)",
    "best_of": "best_of",
    "suffix": "suffix (insertion)",
}


def _requests(body: JSON) -> list[JSON]:
    """One engine request per generation, in reply order; raises a 400 for what the engine cannot do."""
    for field, what in _UNSUPPORTED.items():
        value = body.get(field)
        if value is not None and value is not False and not (field == "best_of" and value == 1):
            raise BackendError(
                f"the embedded model does not support {what}; leave `{field}` out", status=400,
                type="invalid_request_error", param=field, code="unsupported_parameter",
            )
    prompts = tc.prompts(body.get("prompt"))
    n = int(body.get("n") or 1)
    if len(prompts) * n > MAX_GENERATIONS:
        raise BackendError(
            f"{len(prompts)} prompt(s) x n={n} is {len(prompts) * n} generations; the embedded model runs at most "
            f"{MAX_GENERATIONS} per request, one after the other: send fewer", status=400,
            type="invalid_request_error", param="prompt", code="too_many_generations",
        )
    base = {k: v for k, v in body.items() if k not in ("prompt", "n", "model", "echo", "best_of", "logprobs")}
    base.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return [{**base, "prompt": prompt} for prompt in prompts for _ in range(n)]


async def complete(engine: EmbeddedEngine, body: JSON) -> JSON:
    """Run every generation to the end; one `text_completion`."""
    choices: list[JSON] = []
    usage: JSON | None = None
    for index, request in enumerate(_requests(body)):
        folder = tc.TextFolder()
        async with engine.generate(request, "handle_completions") as gen:
            while (chunk := await gen.next()) is not None:
                folder.add(chunk)
        choices.append(tc.choice(index, folder.text, folder.finish_reason or "stop"))
        usage = tc.add_usage(usage, folder.usage)
    return tc.text_completion(model=engine.served_name, choices=choices, usage_obj=usage)


async def stream(engine: EmbeddedEngine, body: JSON) -> AsyncIterator[JSON]:
    """Stream every generation in turn under one id; the usage chunk (summed) only when asked for."""
    requests = _requests(body)  # a 400 before the first chunk
    cid, created = tc.completion_id(), int(time.time())
    usage: JSON | None = None
    for index, request in enumerate(requests):
        async with engine.generate(request, "handle_completions") as gen:
            while (chunk := await gen.next()) is not None:
                if isinstance(chunk.get("usage"), dict):
                    usage = tc.add_usage(usage, chunk["usage"])
                choices = [
                    {**c, "index": index} for c in chunk.get("choices") or () if isinstance(c, dict)
                ]
                if choices:
                    yield tc.text_chunk(id=cid, model=engine.served_name, created=created, choices=choices)
    if wire.wants_usage(body):
        yield tc.text_chunk(id=cid, model=engine.served_name, created=created, choices=[],
                            usage_obj=usage or wire.usage(0, 0))


__all__ = ["DEFAULT_MAX_TOKENS", "MAX_GENERATIONS", "complete", "stream"]
