"""Legacy completions on EmbeddedBackend with a fake engine at its `_load` seam (the real model: the slow test in
tests/llm/embedded/test_surface.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded import text as embedded_text
from tests.llm.embedded.test_backend import FakeEngine, FakeEngineBackend

JSON = dict[str, Any]


class TextEngine(FakeEngine):
    """FakeEngine plus llama.cpp's `handle_completions`: `max_tokens` pieces of the prompt's first word, then a
    final chunk carrying the finish reason and usage."""

    def handle_completions(self, body: JSON, callback: Callable[[JSON], bool]) -> None:
        self.requests.append(body)
        prompt = body["prompt"]
        word = prompt.split()[0] if isinstance(prompt, str) else f"tok{prompt[0]}"
        n = int(body["max_tokens"])
        base = {"id": "cmpl-engine", "created": 1, "model": "engine-name", "object": "text_completion"}
        for i in range(n):
            if callback({**base, "choices": [{"index": 0, "text": f" {word}{i}", "logprobs": None,
                                              "finish_reason": None}]}):
                self.stopped_early.set()
                return
        usage = {"prompt_tokens": 2, "completion_tokens": n, "total_tokens": 2 + n}
        callback({**base, "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "length"}],
                  "usage": usage})


@pytest.fixture
async def backend() -> AsyncIterator[FakeEngineBackend]:
    made = FakeEngineBackend(TextEngine())
    await made.start()
    yield made
    await made.aclose()


async def test_prompts_times_n_fold_into_one_completion(backend: FakeEngineBackend) -> None:
    reply = await backend.text_completion({"model": "x", "prompt": ["alpha", "beta"], "n": 2, "max_tokens": 2})
    assert reply["object"] == "text_completion" and reply["model"] == backend.served_name
    assert [(c["index"], c["text"]) for c in reply["choices"]] == [
        (0, " alpha0 alpha1"), (1, " alpha0 alpha1"), (2, " beta0 beta1"), (3, " beta0 beta1"),
    ]
    assert {c["finish_reason"] for c in reply["choices"]} == {"length"}
    assert reply["usage"] == {"prompt_tokens": 8, "completion_tokens": 8, "total_tokens": 16}
    sent = backend.engine.requests
    assert len(sent) == 4 and all(r["stream"] and "n" not in r and "model" not in r for r in sent)


async def test_openai_default_max_tokens_and_token_prompts(backend: FakeEngineBackend) -> None:
    reply = await backend.text_completion({"prompt": [7, 8, 9]})
    assert backend.engine.requests[-1]["max_tokens"] == embedded_text.DEFAULT_MAX_TOKENS == 16
    assert backend.engine.requests[-1]["prompt"] == [7, 8, 9]
    assert reply["choices"][0]["text"].startswith(" tok70 tok71")


async def test_stream_numbers_choices_and_sends_usage_only_when_asked(backend: FakeEngineBackend) -> None:
    body = {"prompt": ["a", "b"], "max_tokens": 2, "stream": True}
    plain = [c async for c in backend.text_completion_stream(body)]
    asked = [c async for c in backend.text_completion_stream({**body, "stream_options": {"include_usage": True}})]
    assert len({c["id"] for c in plain}) == 1 and {c["model"] for c in plain} == {backend.served_name}
    assert "".join(c["choices"][0]["text"] for c in plain if c["choices"][0]["index"] == 1) == " b0 b1"
    assert all("usage" not in c for c in plain)
    assert asked[-1]["choices"] == [] and asked[-1]["usage"]["completion_tokens"] == 4


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"echo": True}, "echo"), ({"logprobs": 1}, "logprobs"), ({"best_of": 2}, "best_of"),
     ({"suffix": "x"}, "suffix"), ({"prompt": ["p"] * 9, "n": 2}, "prompt")],
)
async def test_what_the_engine_cannot_do_is_a_400_before_it_runs(
    backend: FakeEngineBackend, extra: JSON, param: str
) -> None:
    with pytest.raises(BackendError) as caught:
        await backend.text_completion({"prompt": "x", **extra})
    assert caught.value.status == 400 and caught.value.param == param
    stream = backend.text_completion_stream({"prompt": "x", "stream": True, **extra})
    with pytest.raises(BackendError):
        await anext(stream)
    assert backend.engine.requests == []


async def test_a_consumer_that_leaves_stops_the_generation(backend: FakeEngineBackend) -> None:
    stream = backend.text_completion_stream({"prompt": "long", "max_tokens": 10_000, "stream": True})
    await anext(stream)
    await stream.aclose()
    assert backend.engine.stopped_early.wait(5)
    for _ in range(500):  # the worker releases the slot just after the engine returns
        if (await backend.health()).extra["requests_admitted"] == 0:
            break
        await asyncio.sleep(0.01)
    assert (await backend.health()).extra["requests_admitted"] == 0
