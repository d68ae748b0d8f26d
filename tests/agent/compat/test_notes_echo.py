"""A reply that echoes the notes block never shows it to the user: streamed (the filter decides as chunks come)
and not streamed, on the fast path through the daemon with the scripted upstream over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.agent.compat.notes_echo import strip_echo_stream
from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory import examples
from ghost_agent.memory.bus import CLOSE, HEADER, OPEN
from ghost_agent.memory.store import SkillMemory
from tests.agent.daemon_helpers import daemon
from tests.conftest import make_settings

ECHO = f"{HEADER}\n{OPEN}\n1. When sea poems: keep it short\n{CLOSE}\n\n"


def chunks(text: str, size: int = 5) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"id": "x", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    out += [{"id": "x", "choices": [{"index": 0, "delta": {"content": text[i:i + size]}}]}
            for i in range(0, len(text), size)]
    out.append({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return out


def filtered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    async def source() -> Any:
        for item in items:
            yield item

    async def collect() -> list[dict[str, Any]]:
        return [c async for c in strip_echo_stream(source())]

    return asyncio.run(collect())


def content(items: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in items if c.get("choices"))


@pytest.mark.parametrize(("reply", "shown"), [
    ("Waves fold into foam.", "Waves fold into foam."),
    (f"{ECHO}Waves fold into foam.", "Waves fold into foam."),
    (f"{OPEN} Waves fold into foam.", "Waves fold into foam."),
    ("<b>bold</b> and a < b", "<b>bold</b> and a < b"),
    ("  Notes on the sea: waves.", "  Notes on the sea: waves."),
])
@pytest.mark.parametrize("size", [1, 5, 400])
def test_the_stream_filter_drops_only_an_echoed_block(reply: str, shown: str, size: int) -> None:
    out = filtered(chunks(reply, size))
    assert content(out) == shown
    assert out[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert out[-1]["choices"][0]["finish_reason"] == "stop"


EXAMPLES_ECHO = (f"{examples.HEADER}\n{examples.OPEN}\nExample 1. Request:\nsum it\nExample 1. Checked answer:\n"
                 f"```python\nprint(1)\n```\n{examples.CLOSE}\n\n")


@pytest.mark.parametrize("reply", [
    f"{EXAMPLES_ECHO}Waves fold into foam.",
    f"{ECHO}{EXAMPLES_ECHO}Waves fold into foam.",  # both blocks, as they were shown
    f"{examples.OPEN}\nExample 1. Request:\nx\n{examples.CLOSE}Waves fold into foam.",
])
@pytest.mark.parametrize("size", [1, 7, 400])
def test_the_stream_filter_drops_an_echoed_examples_block(reply: str, size: int) -> None:
    assert content(filtered(chunks(reply, size))) == "Waves fold into foam."


def test_worked_words_at_the_start_are_not_an_echo() -> None:
    assert content(filtered(chunks("Worked it out: 42.", 3))) == "Worked it out: 42."


def test_an_ordinary_reply_is_released_after_a_few_characters() -> None:
    out = filtered(chunks("Hello there, sailor.", 1))
    # held only while "H" could still begin the block; everything after passes chunk by chunk
    assert len(out) == len(chunks("Hello there, sailor.", 1))


def test_several_choices_pass_through_untouched() -> None:
    items = [{"id": "x", "choices": [{"index": 1, "delta": {"content": f"{OPEN}x"}}]}]
    assert filtered(items) == items


@pytest.mark.parametrize("stream", [False, True])
async def test_the_fast_path_never_shows_an_echoed_block(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend], stream: bool
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content=f"{ECHO}Waves fold into foam."))
    settings = make_settings(tmp_path, upstream_url=url, router="always-fast")
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        memory.learn_lesson("writing sea poems", "", "keep it short", session_id="alice", source="reflection")
    async with daemon(settings) as client:
        response = await client.post(
            "/v1/chat/completions", headers={"x-ghost-session-id": "alice"},
            json={"model": "m", "stream": stream, "messages": [{"role": "user", "content": "A sea poem please."}]})
    assert response.status_code == 200
    assert OPEN in json.dumps(llm.requests[0]["messages"])  # the notes were sent
    if stream:
        lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        text = content([json.loads(x) for x in lines if x != "[DONE]"])
    else:
        text = response.json()["choices"][0]["message"]["content"]
    assert text == "Waves fold into foam."
