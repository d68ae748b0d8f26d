"""The turn verifier: the alignment rubric it sends, how it reads verdicts, and that it never breaks a turn."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.agent.verifier import (
    EVIDENCE_CHARS,
    MAX_EVIDENCE,
    RAW_CHARS,
    RESPONSE_CHARS,
    UNPARSEABLE,
    Evidence,
    Verdict,
    Verifier,
)
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from ghost_agent.text.excerpt import clip

JSON = dict[str, Any]

# The seed 001 trace: the user asked for the code, the agent ran it and answered with the number.
SEED_REQUEST = "how can I see how many lines of code is a project? just give me the code"
SEED_EVIDENCE = [Evidence(tool="shell", code="find . -name '*.py' | xargs wc -l | tail -n 1", output="1623 total\n",
                          ok=True)]
SEED_RESPONSE = "The project has **1,623 lines of code**"
SEED_FIXED_RESPONSE = (
    "Here's the command: `find . -name '*.py' | xargs wc -l | tail -n 1`. For this sandbox, the result is "
    "**1,623 lines of code**."
)


def section(text: str, title: str, next_title: str | None) -> str:
    """The body of one `Title:` block of the verifier's user message."""
    start = text.index(title + "\n") + len(title) + 1
    end = text.index("\n\n" + next_title) if next_title else len(text)
    return text[start:end]


class RubricFollowingBackend(ScriptedBackend):
    """A judge that applies the rubric it is sent literally, in the order the system prompt lists the checks.

    Only what the prompt carries is used: if the constraint check is missing or not first, or the request,
    evidence or reply slot is missing, this judge reaches a different verdict and the seed test fails.
    """

    async def complete(self, body: JSON) -> JSON:
        system, user = (m["content"] for m in body["messages"])
        request = section(user, "User request:", "Tools the assistant ran")
        evidence = section(user, "Tools the assistant ran (oldest first):", "Assistant's reply to the user:")
        reply = section(user, "Assistant's reply to the user:", None)
        checks = re.findall(r"^\d\. ([A-Z][a-z]+(?: [a-z]+)?)\b", system, re.M)
        verdict = {"verdict": "CONFIRMED", "confidence": 0.8, "note": "The reply does what was asked."}
        for check in checks:
            if check == "Constraint satisfaction" and "just give me the code" in system:
                asked_for_code = re.search(r"\b(give me|just|only) (the )?(code|command)\b", request, re.I)
                if asked_for_code and "`" not in reply:
                    verdict = {"verdict": "REFUTED", "confidence": 0.9,
                               "note": "The user asked for the code, but the reply gives only a number."}
                    break
            if check == "Grounding":
                claimed = {n.replace(",", "") for n in re.findall(r"\d[\d,]*", reply)}
                if not claimed <= set(re.findall(r"\d+", evidence)):
                    verdict = {"verdict": "REFUTED", "confidence": 0.9, "note": "A number is not in the output."}
                    break
        self.enqueue(ScriptedReply(content="```json\n" + json.dumps(verdict) + "\n```"))
        return await super().complete(body)


def scripted(*contents: str) -> ScriptedBackend:
    return ScriptedBackend(replies=[ScriptedReply(content=c) for c in contents], default="error")


def sent(backend: ScriptedBackend, index: int = -1) -> tuple[str, str]:
    """(system, user) contents of a recorded request."""
    messages = backend.requests[index]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[0]["content"], messages[1]["content"]


def refuted(confidence: float) -> str:
    return json.dumps({"verdict": "REFUTED", "confidence": confidence, "note": "Wrong question."})


async def test_request_body_is_a_deterministic_bounded_call() -> None:
    backend = scripted(refuted(0.9), refuted(0.9))
    await Verifier(backend).verify("q", [], "a")
    body = backend.requests[0]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 300 and body["stream"] is False
    assert "model" not in body  # the backend's default model
    await Verifier(backend, model="judge", max_tokens=77).verify("q", [], "a")
    assert backend.requests[1]["model"] == "judge" and backend.requests[1]["max_tokens"] == 77


async def test_rubric_leads_with_constraint_satisfaction() -> None:
    backend = scripted(refuted(0.9), refuted(0.9))
    verifier = Verifier(backend)
    await verifier.verify(SEED_REQUEST, SEED_EVIDENCE, SEED_RESPONSE)
    await verifier.verify("sum 1..10 in python", [Evidence("python", "print(sum(range(11)))", "55", True)], "55")
    system, _ = sent(backend, 0)
    constraint, grounding, relevance = (system.index(k) for k in
                                        ("1. Constraint satisfaction", "2. Grounding", "3. Relevance"))
    assert constraint < grounding < relevance
    head = system[constraint:grounding]
    for example in ('"just give me the code"', '"in one sentence"', '"as JSON"', '"without using X"', '"only the'):
        assert example in head
    assert "asked for code or a command and the reply gives a number, prose or a result" in head
    assert "that is REFUTED" in head and "even if the tool output is internally" in head
    assert "CONFIRMED requires all three" in system
    assert '{"verdict": "CONFIRMED" or "REFUTED" or "UNSURE", "confidence": <0 to 1>, "note":' in system
    # The rubric is a fixed prefix: identical across turns, so the backend's prompt cache hits.
    assert sent(backend, 1)[0] == system
    assert SEED_REQUEST not in system and SEED_RESPONSE not in system


async def test_request_evidence_and_response_are_in_the_user_message() -> None:
    backend = scripted(refuted(0.9))
    evidence = [Evidence("python", "print(1/0)", "ZeroDivisionError: division by zero", False)] + SEED_EVIDENCE
    await Verifier(backend).verify(SEED_REQUEST, evidence, SEED_RESPONSE)
    _, user = sent(backend)
    assert section(user, "User request:", "Tools the assistant ran") == SEED_REQUEST
    assert section(user, "Assistant's reply to the user:", None) == SEED_RESPONSE
    tools = section(user, "Tools the assistant ran (oldest first):", "Assistant's reply to the user:")
    assert tools.index("[1] tool python (FAILED)") < tools.index("print(1/0)") < tools.index("ZeroDivisionError")
    assert tools.index("ZeroDivisionError") < tools.index("[2] tool shell (ok)") < tools.index("wc -l")
    assert tools.index("wc -l") < tools.index("1623 total")


async def test_evidence_keeps_the_most_recent_calls_oldest_first() -> None:
    backend = scripted(refuted(0.9))
    evidence = [Evidence("python", f"print('step-{n}')", f"out-{n}", True) for n in range(1, 10)]
    await Verifier(backend).verify("q", evidence, "a")
    _, user = sent(backend)
    dropped = len(evidence) - MAX_EVIDENCE
    assert f"({dropped} earlier tool calls omitted)" in user
    for n in range(1, dropped + 1):
        assert f"step-{n}'" not in user and f"out-{n}\n" not in user
    positions = [user.index(f"[{n}] tool python (ok)\ncode:\nprint('step-{n}')\noutput:\nout-{n}")
                 for n in range(dropped + 1, 10)]
    assert positions == sorted(positions)


async def test_no_evidence_and_empty_parts_are_marked() -> None:
    backend = scripted(refuted(0.9), refuted(0.9))
    await Verifier(backend).verify("q", [], "a")
    assert "(oldest first):\n(none)\n" in sent(backend)[1]
    await Verifier(backend).verify("q", [Evidence("shell", "true", "", True)], "")
    _, user = sent(backend)
    assert "output:\n(no output)" in user and user.endswith("Assistant's reply to the user:\n(empty)")


async def test_huge_output_is_clipped_head_and_tail_with_a_marker() -> None:
    backend = scripted(refuted(0.9))
    output = "FIRST-LINE\n" + "x" * 50_000 + "\nLAST-LINE: 1623 total"
    huge_reply = "REPLY-START " + "y" * 20_000 + " REPLY-END"
    await Verifier(backend).verify("q", [Evidence("shell", "cat big.log", output, True)], huge_reply)
    _, user = sent(backend)
    assert "FIRST-LINE" in user and "LAST-LINE: 1623 total" in user
    assert re.search(r"\[… \d+ chars clipped …\]", user)
    assert "x" * EVIDENCE_CHARS not in user
    assert "REPLY-START" in user and "REPLY-END" in user and "y" * RESPONSE_CHARS not in user
    assert len(user) < EVIDENCE_CHARS + RESPONSE_CHARS + 1_000


@pytest.mark.parametrize("limit", [1, 10, 40, 100, 1_500])
def test_clip_never_exceeds_its_limit_and_accounts_for_what_it_dropped(limit: int) -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(5_000))
    out = clip(text, limit)
    assert len(out) <= limit
    marker = re.search(r"\[… (\d+) chars clipped …\]", out)
    if marker:  # head + tail + dropped = the original
        head, tail = out[: marker.start() - 1], out[marker.end() + 1 :]
        assert text.startswith(head) and text.endswith(tail)
        assert len(head) + len(tail) + int(marker.group(1)) == len(text)
    assert clip("short", limit + 5) == "short"


async def test_seed_wrong_question_shape_is_refuted_and_retracts() -> None:
    backend = RubricFollowingBackend(default="error")
    verifier = Verifier(backend)
    verdict = await verifier.verify(SEED_REQUEST, SEED_EVIDENCE, SEED_RESPONSE)
    assert verdict.verdict == "REFUTED" and verdict.error is None
    assert verdict.confidence == pytest.approx(0.9)
    assert "asked for the code" in verdict.note
    assert verifier.should_retract(verdict)
    assert len(backend.requests) == 1


async def test_seed_answer_that_gives_the_command_is_confirmed() -> None:
    backend = RubricFollowingBackend(default="error")
    verifier = Verifier(backend)
    verdict = await verifier.verify(SEED_REQUEST, SEED_EVIDENCE, SEED_FIXED_RESPONSE)
    assert verdict.verdict == "CONFIRMED" and not verifier.should_retract(verdict)
    # An answer inventing a number the tool never printed fails the grounding check.
    invented = await verifier.verify("how many lines?", SEED_EVIDENCE, "It has 2,000 lines.")
    assert invented.verdict == "REFUTED"


async def test_confirmed_verdict_is_recorded_and_logged() -> None:
    backend = scripted(json.dumps({"verdict": "CONFIRMED", "confidence": 0.95, "note": "Gives the command."}))
    verifier = Verifier(backend)
    structlog.reset_defaults()
    with capture_logs() as logs:
        verdict = await verifier.verify(SEED_REQUEST, SEED_EVIDENCE, SEED_FIXED_RESPONSE)
    assert verdict == Verdict("CONFIRMED", 0.95, "Gives the command.", raw=verdict.raw)
    assert json.loads(verdict.raw)["verdict"] == "CONFIRMED"
    assert verdict.to_dict() == {"verdict": "CONFIRMED", "confidence": 0.95, "note": "Gives the command."}
    assert not verifier.should_retract(verdict)
    [event] = [e for e in logs if e["event"] == "verifier_verdict"]
    assert event["verdict"] == "CONFIRMED" and event["confidence"] == 0.95 and event["ms"] >= 0
    assert not [e for e in logs if e["event"] == "verifier_failed"]


@pytest.mark.parametrize(
    ("reply", "verdict", "confidence"),
    [
        ('Sure!\n```json\n{"verdict": "REFUTED", "confidence": 0.85, "note": "n"}\n```\nHope that helps.',
         "REFUTED", 0.85),
        ('My assessment: {"verdict": "CONFIRMED", "confidence": 0.8, "note": "n"} -- done', "CONFIRMED", 0.8),
        ('{"Verdict": "refuted", "Confidence": "85%", "note": "n"}', "REFUTED", 0.85),
        ('{"verdict": "REFUTED", "confidence": "high"}', "REFUTED", 0.9),
        ('{"verdict": "UNSURE", "confidence": "medium"}', "UNSURE", 0.6),
        ('{"verdict": "REFUTED", "confidence": "low"}', "REFUTED", 0.3),
        ('{"verdict": "REFUTED", "confidence": 85}', "REFUTED", 0.85),
        ('{"verdict": "REFUTED"}', "REFUTED", 0.5),
        ("Verdict: REFUTED (confidence 85%)\nThe user wanted the code.", "REFUTED", 0.85),
        ("REFUTED - 0.9", "REFUTED", 0.9),
        ("refuted", "REFUTED", 0.5),
        ("confirmed, with high confidence. The command is given.", "CONFIRMED", 0.9),
        ("The reply is not CONFIRMED by anything; verdict: REFUTED, confidence: 0.75", "REFUTED", 0.75),
        ('It could look CONFIRMED, but {"verdict": "REFUTED", "confidence": 0.9}', "REFUTED", 0.9),
        ("{'verdict': 'refuted', 'confidence': 0.9, 'note': 'User wanted code.'}", "REFUTED", 0.9),
    ],
)
async def test_verdict_parsing_variants(reply: str, verdict: str, confidence: float) -> None:
    result = await Verifier(scripted(reply)).verify("q", [], "a")
    assert result.error is None
    assert (result.verdict, result.confidence) == (verdict, pytest.approx(confidence))
    assert result.note and "\n" not in result.note


async def test_plain_text_note_is_the_reasoning_not_the_verdict_line() -> None:
    verifier = Verifier(scripted("Verdict: REFUTED (confidence 85%)\nThe user wanted the code. It got 1623."))
    verdict = await verifier.verify("q", [], "a")
    assert verdict.note == "The user wanted the code. It got 1623."
    bare = await Verifier(scripted("REFUTED - 0.9")).verify("q", [], "a")
    assert bare.note and "0.9" not in bare.note  # a default sentence, not the token soup


@pytest.mark.parametrize(
    "reply",
    ["I think this is fine overall.", "CONFIRMED or REFUTED: hard to say.", "", '{"verdict": "maybe"}'],
)
async def test_unrecognizable_reply_is_unsure_with_an_error(reply: str) -> None:
    verifier = Verifier(scripted(reply))
    structlog.reset_defaults()
    with capture_logs() as logs:
        verdict = await verifier.verify("q", [], "a")
    assert (verdict.verdict, verdict.confidence, verdict.error) == ("UNSURE", 0.0, UNPARSEABLE)
    assert verdict.raw == reply and not verifier.should_retract(verdict)
    assert [e["error"] for e in logs if e["event"] == "verifier_failed"] == [UNPARSEABLE]


async def test_native_tool_call_reply_is_unparseable_not_a_crash() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(tool_calls=[tool_call("python", '{"code": "1"}')])])
    verdict = await Verifier(backend).verify("q", SEED_EVIDENCE, "a")
    assert verdict.verdict == "UNSURE" and verdict.error == UNPARSEABLE


async def test_backend_error_is_unsure_and_never_raises() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(error=(503, "model busy"))])
    structlog.reset_defaults()
    with capture_logs() as logs:
        verdict = await Verifier(backend).verify(SEED_REQUEST, SEED_EVIDENCE, SEED_RESPONSE)
    assert (verdict.verdict, verdict.confidence) == ("UNSURE", 0.0)
    assert verdict.error == "backend error 503: model busy"
    assert verdict.to_dict() == {"verdict": "UNSURE", "confidence": 0.0, "note": verdict.note,
                                 "error": "backend error 503: model busy"}
    assert [e["error"] for e in logs if e["event"] == "verifier_failed"] == [verdict.error]


class BrokenBackend(ScriptedBackend):
    """A backend with a bug: raises something that is not a BackendError."""

    async def complete(self, body: JSON) -> JSON:
        await super().complete(body)
        raise RuntimeError("connection pool exploded")


async def test_unexpected_backend_exception_is_unsure() -> None:
    verdict = await Verifier(BrokenBackend(replies=[ScriptedReply(content=refuted(0.9))])).verify("q", [], "a")
    assert verdict.verdict == "UNSURE" and verdict.error == "RuntimeError: connection pool exploded"


async def test_timeout_is_unsure_and_cancels_the_call() -> None:
    backend = ScriptedBackend(replies=[ScriptedReply(content=refuted(0.99), delay_s=5.0)])
    verifier = Verifier(backend, timeout_s=0.05)
    started = time.perf_counter()
    verdict = await verifier.verify(SEED_REQUEST, SEED_EVIDENCE, SEED_RESPONSE)
    assert time.perf_counter() - started < 2.0
    assert verdict.verdict == "UNSURE" and verdict.error == "timeout after 0.05s"
    assert backend.cancelled == 1 and not verifier.should_retract(verdict)


async def test_retraction_needs_a_confident_refutation() -> None:
    verifier = Verifier(scripted(refuted(0.69), refuted(0.7), json.dumps({"verdict": "CONFIRMED", "confidence": 1})))
    low, at_threshold, confirmed = [await verifier.verify("q", [], "a") for _ in range(3)]
    assert low.verdict == "REFUTED" and not verifier.should_retract(low)
    assert verifier.should_retract(at_threshold)
    assert not verifier.should_retract(confirmed)
    strict = Verifier(ScriptedBackend(), refute_confidence=0.95)
    assert not strict.should_retract(at_threshold)
    # A missing confidence (0.5) stays below the default threshold: an unsure judge never retracts.
    assert not verifier.should_retract(Verdict("REFUTED", 0.5, "n"))


def test_note_for_reply_format() -> None:
    verdict = Verdict("REFUTED", 0.9, "The user asked for the code,\n  not the count.")
    assert Verifier.note_for_reply(verdict) == (
        "\n\n> Verifier: this answer may not do what you asked: The user asked for the code, not the count."
    )
    assert Verifier.note_for_reply(Verdict("REFUTED", 0.9, "")).startswith("\n\n> Verifier: this answer may not")


async def test_raw_is_clipped_and_the_record_is_serializable() -> None:
    huge = refuted(0.9) + " " + "z" * 10_000
    verdict = await Verifier(scripted(huge)).verify("q", [], "a")
    assert verdict.verdict == "REFUTED" and len(verdict.raw) <= RAW_CHARS
    assert orjson.loads(orjson.dumps(verdict.to_dict())) == verdict.to_dict()


def test_constructor_rejects_nonsense() -> None:
    for kwargs in ({"max_tokens": 0}, {"timeout_s": 0.0}, {"timeout_s": float("nan")}, {"refute_confidence": 1.5}):
        with pytest.raises(ValueError):
            Verifier(ScriptedBackend(), **kwargs)
