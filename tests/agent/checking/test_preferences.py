"""A user's stated preference is applied to the reply (agent/checking/preferences.py), end to end: the daemon in front
of the scripted fake upstream over loopback HTTP, the real lesson store and sandbox.

A preference lesson of this session sends the turn to the agent (even a fact question the prior would send
fast), the draft is rewritten by one call that quotes the user's words, and the rewrite is kept only when it
broke nothing; another session, or an unrelated request, gets neither the lesson nor the rewrite call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ghost_agent.agent.checking.preferences import accept, clean_rewrite
from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.preference import preference_solution
from ghost_agent.memory.store import SkillMemory
from tests.agent.daemon_helpers import daemon, needs_sandbox  # noqa: F401 - needs_sandbox: autouse
from tests.agent.test_lesson_injection import chat, stored
from tests.conftest import make_settings

DATES = "I write dates as DD/MM/YYYY."
REQUEST = "What date is the winter solstice in 2027?"


def settings_for(tmp_path: Path, url: str, **overrides: Any) -> Any:
    """These tests exercise the model's rewrite and check, with a date pattern for the preference: its rule
    (`text/format_rules.py`, on by default) is switched off here and tested on its own below."""
    values: dict[str, Any] = {"router": "auto", "agent_strategy": "answer-first", "mcts": False,
                              "upstream_url": url, "preference_rules": False}
    return make_settings(tmp_path, **{**values, **overrides})


def teach(settings: Any, session: str = "alice") -> str:
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        learned = memory.learn_lesson("requests like: When is the summer solstice in 2026?", "",
                                      preference_solution(DATES), session_id=session, source="preference",
                                      source_trajectory_id="t-dates")
    return learned.lesson.id


def rewrite_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


async def test_a_preference_routes_to_the_agent_and_the_reply_is_rewritten_to_follow_it(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="The winter solstice in 2027 is on December 22, 2027."),
                ScriptedReply(content="Rewritten reply: The winter solstice in 2027 is on 22/12/2027."),
                ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    lesson_id = teach(settings)
    async with daemon(settings) as client:
        response = await chat(client, REQUEST, "alice")
    assert response.json()["choices"][0]["message"]["content"] == "The winter solstice in 2027 is on 22/12/2027."
    draft, rewrite, judge = llm.requests
    assert judge["max_tokens"] == 1 and judge["logprobs"] is True and "22/12/2027" in rewrite_prompt(judge)
    assert DATES in draft["messages"][-1]["content"]  # the lesson was in the notes block of the draft
    prompt = rewrite_prompt(rewrite)
    assert f'"{DATES}"' in prompt and "December 22, 2027" in prompt and REQUEST in prompt
    assert all(m["role"] != "system" or DATES not in m["content"] for m in rewrite["messages"])
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and traj.router["reason"] == "user_preference"
    assert [r["id"] for r in traj.extra["lessons_shown"]] == [lesson_id]
    assert traj.extra["agent"]["preferences"] == {"count": 1, "applied": True, "reason": "", "followed": 1.0}


async def test_a_preference_of_a_known_kind_is_applied_by_rule_and_kept_out_of_the_draft(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="The winter solstice in 2027 is on December 22, 2027."))
    settings = settings_for(tmp_path, url, preference_rules=True)
    lesson_id = teach(settings)
    async with daemon(settings) as client:
        response = await chat(client, REQUEST, "alice")
    assert response.json()["choices"][0]["message"]["content"] == "The winter solstice in 2027 is on 22/12/2027."
    (draft,) = llm.requests  # one call: no rewrite, no judge
    assert all(DATES not in str(m["content"]) for m in draft["messages"])  # the draft answers as without it
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and traj.router["reason"] == "user_preference"
    assert [r["id"] for r in traj.extra["lessons_shown"]] == [lesson_id]
    assert traj.extra["agent"]["preferences"]["rules"] == ["date DD/MM/YYYY"]


async def test_the_correcting_turn_itself_follows_the_preference_it_states(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    first_request = "When is Christmas Day in 2025? Just the date."
    correction = "No, I write dates as DD/MM/YYYY. When is Christmas Day 2025?"
    llm.enqueue(ScriptedReply(content="December 25, 2025."), ScriptedReply(content="It is December 25, 2025."),
                ScriptedReply(content="It is 25/12/2025."), ScriptedReply(content="yes"))
    settings = settings_for(tmp_path, url)
    async with daemon(settings) as client:
        await chat(client, first_request, "alice")
        response = await chat(client, correction, "alice", messages=[
            {"role": "user", "content": first_request}, {"role": "assistant", "content": "December 25, 2025."},
            {"role": "user", "content": correction}])
    assert response.json()["choices"][0]["message"]["content"] == "It is 25/12/2025."
    assert f'"{DATES}"' in rewrite_prompt(llm.requests[2])
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.router is not None and traj.router["reason"] == "user_preference"
    assert traj.extra["agent"]["preferences"]["applied"] is True


async def test_no_rewrite_for_another_session_or_an_unrelated_request(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    llm.enqueue(ScriptedReply(content="December 22, 2027."), ScriptedReply(content="Waves fold into foam."))
    settings = settings_for(tmp_path, url)
    teach(settings)
    async with daemon(settings) as client:
        theirs = await chat(client, REQUEST, "bob")
        unrelated = await chat(client, "Write a haiku about the sea.", "alice")
    assert [r["messages"][-1]["content"] for r in llm.requests] == [REQUEST, "Write a haiku about the sea."]
    assert theirs.json()["choices"][0]["message"]["content"] == "December 22, 2027."
    assert unrelated.json()["choices"][0]["message"]["content"] == "Waves fold into foam."


async def test_a_rewrite_that_breaks_the_code_is_not_kept(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    url, llm = upstream
    code = "```python\ndef format_date(d):\n    return d.strftime('%d/%m/%Y')\n```"
    llm.enqueue(ScriptedReply(content=code), ScriptedReply(content="def format_date(d) return d"))
    settings = settings_for(tmp_path, url, router="always-agent", check_model_tests=0)
    teach(settings)
    async with daemon(settings) as client:
        response = await chat(client, "Write a Python function that formats a date.",
                              "alice")
    assert response.json()["choices"][0]["message"]["content"] == code
    traj = stored(settings, response.headers["x-ghost-trajectory-id"])
    assert traj.extra["agent"]["preferences"]["applied"] is False
    assert traj.extra["agent"]["preferences"]["reason"] == "a code block was lost"


@pytest.mark.parametrize(
    ("reply", "rewrite", "reason"),
    [
        ("It is 4:45 PM.", "It is 16:45.", None),
        ("It is 4:45 PM.", "   ", "empty rewrite"),
        ("It is 4:45 PM.", "It is 4:45 PM.", "unchanged"),
        ("It is 4:45 PM.", "x" * 500, "rewrite ran away"),
        ("```python\ndef f(x):\n    return x\n```", "```python\ndef f(x: int) -> int:\n    return x\n```", None),
        ("```python\ndef f(x):\n    return x\n```", "```python\ndef g(x):\n    return x\n```",
         "the rewritten code lost a function"),
        ("```python\ndef f(x):\n    return x\n```", "```python\ndef f(x:\n```", "the rewritten code does not parse"),
        ("Run:\n```bash\nls\n```", "Run:\n```bash\nls", "a code block was lost"),  # fence marks are counted
    ],
)
def test_accept_keeps_only_rewrites_that_broke_nothing(reply: str, rewrite: str, reason: str | None) -> None:
    assert accept(reply, rewrite, "What time is a quarter to five in the afternoon?") == reason


def test_a_number_copied_from_the_preferences_example_is_refused() -> None:
    wanted = ["I want money written with the currency code after the number, like 12.50 USD."]
    request = "I bought 3 books at 12 dollars each. How much did I spend?"
    copied = accept("3 x 12 dollars = 36 dollars", "3 x 12.50 USD = 37.50 USD", request, wanted)
    assert copied is not None and "12.50" in copied
    assert accept("3 x 12 dollars = 36 dollars", "3 x 12.00 USD = 36.00 USD", request, wanted) is None


def test_a_rewrite_that_breaks_a_requested_form_is_refused() -> None:
    request = "How many legs does a spider have? End with a line 'Answer: <n>'."
    assert accept("Spiders have 8 legs.\nAnswer: 8", "Spiders have eight legs.", request) is not None


def test_clean_rewrite_drops_echoed_scaffolding() -> None:
    assert clean_rewrite("Rewritten reply: 16:45") == "16:45"
    assert clean_rewrite("Here is the rewritten reply:\n16:45") == "16:45"
    echoed = "```sql\nselect 1;\n```\n\nThe user's preference: \"SQL keywords in lowercase\""
    assert clean_rewrite(echoed) == "```sql\nselect 1;\n```"


def test_p_yes_reads_the_first_tokens_top_logprobs_and_falls_back_to_the_word() -> None:
    import math

    from ghost_agent.agent.checking.preferences import p_yes

    def response(top: list[tuple[str, float]], content: str = "No") -> dict[str, Any]:
        first = {"token": content, "logprob": -0.1, "top_logprobs": [{"token": t, "logprob": math.log(p)}
                                                                     for t, p in top]}
        return {"choices": [{"message": {"content": content}, "logprobs": {"content": [first]}}]}

    assert p_yes(response([("Yes", 0.2), ("No", 0.6), (" yes", 0.05), ("Maybe", 0.1)])) == pytest.approx(0.25 / 0.85)
    assert p_yes({"choices": [{"message": {"content": "yes."}}]}) == 1.0
    assert p_yes({"choices": [{"message": {"content": "Perhaps"}}]}) is None
    assert p_yes(response([("Maybe", 0.9)])) is None


@pytest.mark.parametrize(("reply", "rewrite", "refused"), [
    ("About 37 degrees Celsius (98.6 degrees Fahrenheit).", "About 37 degrees Kelvin.", True),
    ("It is 5 miles (8.05 km).", "It is 5 km.", True),
    ("It weighs 3 kg.", "It weighs 3 lbs.", True),
    ("Water freezes at 0 °C (32 °F).", "Water freezes at 0 Kelvin.", True),
    ("About 37 °C.", "About 310.15 K (37 °C).", False),
    ("Bake it at 220°C (425°F).", "Bake it at 493 K.", False),
    ("It is 5 miles.", "It is 5 miles (8.05 km).", False),
])
def test_a_value_relabelled_in_another_unit_without_conversion_is_refused(
    reply: str, rewrite: str, refused: bool
) -> None:
    reason = accept(reply, rewrite, "How warm / far / heavy is it?")
    assert (reason is not None and "relabelled" in reason) is refused, reason


def test_p_yes_reads_nothing_from_a_malformed_response() -> None:
    from ghost_agent.agent.checking.preferences import p_yes

    assert p_yes({"choices": []}) is None and p_yes(None) is None and p_yes({"choices": "x"}) is None
    assert p_yes({"choices": [{"message": {"content": "no"}, "logprobs": {"content": [{"token": "no",
                  "logprob": 0.0, "top_logprobs": ["bad"]}]}}]}) is None
