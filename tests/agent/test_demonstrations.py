"""Demonstrations (memory/demonstrations.py), end to end: the daemon in front of the scripted fake upstream over
loopback HTTP, with the real lesson store and sandbox.

A correction that states a preference teaches a lesson; the correcting turn's reply follows it; when the user's
next message does not correct that reply again, the pair (the request, the accepted reply) is kept with the lesson
and shown with it on a similar request of the same client — never to another client, never after a second
correction.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.demonstrations import HEADER
from ghost_agent.memory.store import SkillMemory
from tests.agent.checking.test_preferences import settings_for
from tests.agent.daemon_helpers import daemon, needs_sandbox  # noqa: F401 - needs_sandbox: autouse
from tests.agent.test_lesson_injection import chat, stored

FIRST = "When is Christmas Day in 2025? Just the date."
CORRECTION = "No, I write dates as DD/MM/YYYY. When is Christmas Day 2025?"
ACCEPTED = "It is 25/12/2025."
LATER = "What's the date of Halloween in 2026?"


def conversation(*turns: str) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(turns)]


async def wait_for(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


def demos(settings: Any) -> list[Any]:
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        ids = [lesson.id for lesson in memory.all() if lesson.source == "preference"]
        return memory.demonstrations(ids)


async def correct(client: httpx.AsyncClient, settings: Any) -> None:
    """Turn 1 answered the default way, turn 2 corrects it with a preference; wait for the lesson."""
    await chat(client, FIRST, "alice")
    await chat(client, CORRECTION, "alice", messages=conversation(FIRST, "December 25, 2025.", CORRECTION))

    def lesson() -> bool:
        with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
            return any(lesson.source == "preference" for lesson in memory.all())

    assert await wait_for(lesson)


async def thank(client: httpx.AsyncClient) -> None:
    """Turn 3: the user thanks, in the same conversation (not a correction of the reply)."""
    await chat(client, "thanks, perfect", "alice",
               messages=conversation(FIRST, "December 25, 2025.", CORRECTION, ACCEPTED, "thanks, perfect"))


async def test_an_accepted_reply_becomes_the_lessons_demonstration_and_is_shown_to_that_client_only(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="December 25, 2025."),                       # turn 1
                ScriptedReply(content="It is December 25, 2025."), ScriptedReply(content=ACCEPTED),  # 2: draft, rewrite
                ScriptedReply(content="yes"),
                ScriptedReply(content="Glad it helps!"), ScriptedReply(content="Glad it helps!"),    # 3
                ScriptedReply(content="Halloween 2026 is October 31, 2026."),      # 4: bob, no lesson
                ScriptedReply(content="31/10/2026."), ScriptedReply(content="31/10/2026."),          # 5: alice
                ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    async with daemon(settings) as client:
        await correct(client, settings)
        await thank(client)
        stored_demos = await wait_for(lambda: demos(settings))
        assert [(d.request, d.reply) for d in stored_demos] == [(FIRST, ACCEPTED)]
        before_bob = len(llm.requests)
        await chat(client, LATER, "bob")
        bob_prompt = str(llm.requests[before_bob]["messages"][-1]["content"])
        before_alice = len(llm.requests)
        response = await chat(client, LATER, "alice")
    assert HEADER not in bob_prompt and ACCEPTED not in bob_prompt
    alice_prompt = str(llm.requests[before_alice]["messages"][-1]["content"])
    assert HEADER in alice_prompt and FIRST in alice_prompt and ACCEPTED in alice_prompt
    assert alice_prompt.index(ACCEPTED) < alice_prompt.index(LATER)  # data in front of the request
    assert all(m["role"] != "system" or ACCEPTED not in str(m["content"])
               for m in llm.requests[before_alice]["messages"])
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert [d["lesson_id"] for d in traj.extra["demonstrations_shown"]] == [traj.extra["lessons_shown"][0]["id"]]


async def test_a_reply_corrected_again_is_no_demonstration(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    again = "No, that's still wrong. I said DD/MM/YYYY: 25/12/2025."
    llm.enqueue(ScriptedReply(content="December 25, 2025."), ScriptedReply(content="It is December 25, 2025."),
                ScriptedReply(content="It is 12/25/2025."), ScriptedReply(content="yes"),
                ScriptedReply(content="25/12/2025."), ScriptedReply(content="25/12/2025."),
                ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    async with daemon(settings) as client:
        await correct(client, settings)
        await chat(client, again, "alice",
                   messages=conversation(FIRST, "December 25, 2025.", CORRECTION, "It is 12/25/2025.", again))
    assert demos(settings) == []


async def test_demonstrations_off_stores_none(tmp_path: Path, upstream: tuple[str, ScriptedBackend]) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="December 25, 2025."), ScriptedReply(content="It is December 25, 2025."),
                ScriptedReply(content=ACCEPTED), ScriptedReply(content="yes"), ScriptedReply(content="Glad it helps!"),
                ScriptedReply(content="Glad it helps!"), ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url, demonstrations=False)
    async with daemon(settings) as client:
        await correct(client, settings)
        await thank(client)
    assert demos(settings) == []


async def test_a_new_conversation_of_the_same_client_accepts_the_reply_too(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="December 25, 2025."), ScriptedReply(content="It is December 25, 2025."),
                ScriptedReply(content=ACCEPTED), ScriptedReply(content="yes"), ScriptedReply(content="31/10/2026."),
                ScriptedReply(content="31/10/2026."), ScriptedReply(content="31/10/2026."),
                ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    async with daemon(settings) as client:
        await correct(client, settings)
        await chat(client, "Write a haiku about the sea.", "bob")  # another client's turn decides nothing
        assert demos(settings) == []
        await chat(client, LATER, "alice")  # a new chat: the user moved on without correcting the reply
        assert [(d.request, d.reply) for d in await wait_for(lambda: demos(settings))] == [(FIRST, ACCEPTED)]


async def test_a_reply_judged_not_to_follow_the_preference_is_no_demonstration(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="December 25, 2025."), ScriptedReply(content="It is December 25, 2025."),
                ScriptedReply(content=ACCEPTED), ScriptedReply(content="no"), ScriptedReply(content=ACCEPTED),
                ScriptedReply(content="Glad it helps!"), ScriptedReply(content="Glad it helps!"),
                ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    async with daemon(settings) as client:
        await correct(client, settings)
        await thank(client)
    assert demos(settings) == []

