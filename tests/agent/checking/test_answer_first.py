"""The answer-first turn: a scripted model, the real tool registry and the real sandbox.

Every test scripts the ScriptedBackend call by call (an unscripted extra call fails with a 500) and asserts on
`.requests`, so how many model calls a turn costs, and what each one saw, is part of what is tested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ghost_agent.agent.checking import code_tests
from ghost_agent.agent.checking.answer_first import AnswerFirst, CheckConfig, splice_code
from ghost_agent.agent.strategy import CaseTally, LoopEvent, LoopResult, StrategyContext
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox import ExecLimits, Workspaces
from ghost_agent.text.request_kind import classify
from ghost_agent.tools import ToolContext, ToolRegistry

JSON = dict[str, Any]

SPEC = '''Complete this function:
```python
def double(x):
    """Return twice x.
    >>> double(2)
    4
    >>> double(-1)
    -2
    """
```'''
WRONG = "Here you go:\n```python\ndef double(x):\n    return x + 2\n```\nIt adds."
WRONG_TOO = "```python\ndef double(x):\n    return x + 3\n```"
RIGHT = "```python\ndef double(x):\n    return 2 * x\n```"
BROKEN = "```python\ndef double(x):\n    return x +\n```"


def backend(*replies: str | ScriptedReply) -> ScriptedBackend:
    items = [r if isinstance(r, ScriptedReply) else ScriptedReply(content=r) for r in replies]
    return ScriptedBackend(replies=items, default="error", model="scripted-model")


async def answer(llm: ScriptedBackend, ctx: ToolContext, registry: ToolRegistry, request: str,
                 config: CheckConfig | None = None, **kw: Any) -> LoopResult:
    agent = AnswerFirst(llm, registry, config or CheckConfig(model_tests=0, samples=0))
    given = StrategyContext(messages=[{"role": "user", "content": request}], tool_ctx=ctx, user_request=request,
                            kind=classify(request, ctx.workspace), **kw)
    return await agent.run(given)


def last_user(request: JSON) -> str:
    return str(request["messages"][-1]["content"])


# ------------------------------------------------------------------------------------------ the draft


async def test_a_plain_question_is_one_call_with_the_clients_own_messages_and_parameters(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend("Paris.")
    body = {"temperature": 0.3, "seed": 7, "stop": ["\n\n"], "max_completion_tokens": 50, "top_p": 0.9,
            "messages": "ignored", "tools": "ignored"}
    result = await answer(llm, ctx, registry, "What is the capital of France?", client_body=body)
    assert result.final_text == "Paris." and result.steps == [] and result.llm_calls == 1
    [sent] = llm.requests
    assert sent["messages"] == [{"role": "user", "content": "What is the capital of France?"}]
    assert (sent["temperature"], sent["seed"], sent["stop"], sent["max_tokens"], sent["top_p"]) == (
        0.3, 7, ["\n\n"], 50, 0.9)
    assert "tools" not in sent


async def test_system_extra_goes_in_front_and_lesson_notes_into_the_user_message(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend("ok")
    notes = "<ghost-notes>\n1. x\n</ghost-notes>"
    await answer(llm, ctx, registry, "hello", extra_system="Selfhood: awake", notes=notes)
    assert llm.requests[0]["messages"] == [{"role": "system", "content": "Selfhood: awake"},
                                           {"role": "user", "content": notes + "\n\nhello"}]


async def test_without_a_sandbox_the_draft_stands(tmp_path: Path, registry: ToolRegistry) -> None:
    workspaces = Workspaces(tmp_path / "w", quota_mb=8, max_age_days=1)
    no_sandbox = ToolContext.for_session(workspaces, "s", sandbox=None, limits=ExecLimits())
    llm = backend(WRONG)
    result = await answer(llm, no_sandbox, registry, SPEC)
    assert result.final_text == WRONG and result.steps == []


# --------------------------------------------------------------------------------------------- code


async def test_a_code_answer_failing_the_requests_examples_is_repaired_showing_only_the_failures(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(WRONG, RIGHT)
    result = await answer(llm, ctx, registry, SPEC)
    # the user keeps the draft's prose; its code is the repaired one
    assert result.final_text.startswith("Here you go:") and "return 2 * x" in result.final_text
    assert "x + 2" not in result.final_text
    first, second = result.steps
    assert (first.ok, second.ok) == (False, True)
    assert first.extra["source"] == "check" and first.extra["passed"] == {"user": 1, "model": 0}
    revision = last_user(llm.requests[1])
    assert "double(-1)" in revision and "got 1" in revision and "double(2)" not in revision
    assert llm.requests[1]["messages"][-2] == {"role": "assistant", "content": WRONG}
    assert result.info.code is not None
    assert result.info.code.chosen == "revision" and result.info.code.user_cases.passed == 2


async def test_a_code_answer_passing_its_examples_costs_no_further_call(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(RIGHT)
    result = await answer(llm, ctx, registry, SPEC)
    assert result.final_text == RIGHT and result.llm_calls == 1
    [step] = result.steps
    assert step.ok and step.tool_name == "python"


async def test_a_worse_revision_keeps_the_draft(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend(WRONG, BROKEN)
    result = await answer(llm, ctx, registry, SPEC)
    assert result.final_text == WRONG and result.info.code is not None and result.info.code.chosen == "draft"


async def test_a_fresh_sample_is_drawn_only_when_the_repair_still_fails(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend(WRONG, WRONG_TOO, RIGHT)
    config = CheckConfig(model_tests=0, samples=2, sample_temperature=0.7)
    result = await answer(llm, ctx, registry, SPEC, config)
    assert "return 2 * x" in result.final_text and result.info.code is not None
    assert result.info.code.chosen == "sample"
    assert len(llm.requests) == 3  # the second sample was never needed
    assert llm.requests[2]["temperature"] == 0.7 and llm.requests[2]["messages"] == llm.requests[0]["messages"]


async def test_model_written_assertions_check_a_request_without_examples(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "Write a Python function is_even(n) that tells whether n is even."
    draft = "```python\ndef is_even(n):\n    return n % 2 == 1\n```"
    fixed = "```python\ndef is_even(n):\n    return n % 2 == 0\n```"
    tests = "```python\nassert is_even(2)\nassert not is_even(3)\nassert is_even(0)\nprint('x')\n```"
    llm = backend(draft, tests, fixed)
    result = await answer(llm, ctx, registry, request, CheckConfig(model_tests=3, samples=0))
    assert "n % 2 == 0" in result.final_text
    # the assertions are written from the spec alone, never from the code they will judge
    assert "is_even" in last_user(llm.requests[1]) and "n % 2 == 1" not in str(llm.requests[1]["messages"])
    assert result.info.code is not None and result.info.code.model_cases == CaseTally(passed=3, total=3)
    # no user examples: nothing to confirm or refute with the user's authority
    assert result.info.code.user_cases.total == 0


async def test_a_code_request_keeps_its_code_when_there_is_nothing_to_test(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "Write a function that reverses a string."
    draft = "```python\ndef reverse_string(s):\n    return s[::-1]\n\nprint(reverse_string('hello'))\n```"
    llm = backend(draft)
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == draft and result.llm_calls == 1
    [step] = result.steps  # the code was loaded once to see that it runs
    assert step.ok


async def test_code_in_another_language_is_not_run_as_python(ctx: ToolContext, registry: ToolRegistry) -> None:
    """A Ruby `def` would fail to load as Python, and the repair round would turn the answer into Python."""
    request = "Write a Ruby method total(prices) that returns the sum of an array of prices, e.g. total([1, 2]) == 3."
    draft = "```ruby\ndef total(prices)\n  prices.sum\nend\n```"
    llm = backend(draft)
    result = await answer(llm, ctx, registry, request)
    assert result.info.kind == "code" and result.final_text == draft
    assert result.llm_calls == 1 and result.steps == [] and result.info.computed is None
    assert result.info.checks_skipped == "the answer's code is not Python: no tests run"


@pytest.mark.parametrize(("request_text", "reply", "applies"), [
    ("Write a function f(x).", "```python\ndef f(x):\n    return x\n```", True),
    ("Write a function f(x).", "```\ndef f(x):\n    return x\n```", True),
    ("Write a function f(x).", "def f(x):\n    return x", True),  # an unfenced reply is read as Python
    ("Write a SQL query for the totals.", "```sql\nSELECT SUM(x) FROM t;\n```", False),
    ("Write a bash one-liner that sums column 2.", "```bash\nawk '{s+=$2} END {print s}' f\n```", False),
    ("Write a Ruby method f(x).", "```\ndef f(x)\n  x\nend\n```", False),  # untagged, not Python
    ("Write a Ruby method f(x).", "def f(x)\n  x\nend", False),
    ("Port this Ruby method to Python: def f(x) x end", "```\ndef f(x):\n    return x\n```", True),
])
def test_tests_apply_only_to_python_code(request_text: str, reply: str, applies: bool) -> None:
    assert code_tests.tests_apply(request_text, reply) is applies


def test_splice_replaces_only_the_defining_block() -> None:
    draft = "Use it like this:\n```python\ndef f(x):\n    return x\n```\nand\n```python\nprint(f(1))\n```"
    out = splice_code(draft, "```python\ndef f(x):\n    return x + 1\n```", ["f"])
    assert "return x + 1" in out and "print(f(1))" in out and out.startswith("Use it like this:")


# ------------------------------------------------------------------------------------ numbers, outputs


async def test_an_invented_output_is_replaced_by_the_real_one(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = "What is the sum of the squares of 1 to 100? Show the code."
    draft = "```python\nprint(sum(i * i for i in range(1, 101)))\n```\nOutput:\n```\n5050\n```"
    llm = backend(draft, "The sum is 338350.")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == "The sum is 338350." and result.llm_calls == 2
    assert "338350" in last_user(llm.requests[1]) and llm.requests[1]["messages"][-2]["content"] == draft


async def test_a_disagreeing_computation_gets_a_second_opinion_then_the_program_wins(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "Tom has 3 boxes of 12 apples and eats 5. How many apples are left?"
    program = "```python\nboxes = 3\napples = boxes * 12 - 5\nprint(apples)\n```"
    llm = backend("He has 30 apples left.", program, "```python\nprint(36 - 5)\n```",
                  "3 boxes of 12 make 36 apples; 36 - 5 = 31 apples are left.")
    result = await answer(llm, ctx, registry, request, CheckConfig(model_tests=0, samples=0, sample_temperature=0.6))
    assert result.final_text == "3 boxes of 12 make 36 apples; 36 - 5 = 31 apples are left."
    assert llm.requests[1]["temperature"] == 0.0 and llm.requests[2]["temperature"] == 0.6
    explain = last_user(llm.requests[3])
    assert request in explain and "boxes * 12 - 5" in explain and "31" in explain
    assert [s.result_preview.strip() for s in result.steps] == ["31", "31"]
    assert result.info.computed is not None
    assert result.info.computed.to_json() == {"value": 31.0, "draft": 30.0, "source": "program", "second": 31.0,
                                              "trusted": True}


async def test_a_second_opinion_siding_with_the_draft_keeps_it(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = "Tom has 3 boxes of 12 apples and eats 5. How many apples are left?"
    llm = backend("36 - 5 = 31 apples.", "```python\nprint(3 * 12 - 6)\n```", "```python\nprint(3 * 12 - 5)\n```")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == "36 - 5 = 31 apples." and result.llm_calls == 3


async def test_a_second_program_that_fails_is_no_majority_against_the_draft(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "Ben is 12 years older than Chloe. In 8 years he will be twice her age. How old is Ben now?"
    llm = backend("Chloe is 4, so Ben is 16.", "```python\nprint(2)\n```", "```python\nraise SystemExit(1)\n```")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == "Chloe is 4, so Ben is 16." and result.llm_calls == 3
    assert result.info.computed is not None and result.info.computed.voted and result.info.computed.second is None
    assert result.info.computed.to_json() == {"value": 2.0, "draft": 16.0, "source": "program", "second": None}


async def test_the_drafts_own_program_is_the_computation(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = "What is 17 * 23 + 4? Answer with the number."
    draft = "```python\nprint(17 * 23 + 4)\n```\nThis prints 395."
    llm = backend(draft, "```python\nprint(17 * 23 + 4)\n```", "17 * 23 = 391, plus 4 is 395.")
    result = await answer(llm, ctx, registry, request)
    assert result.info.computed is not None
    assert result.info.computed.source == "draft" and result.info.computed.value == 395.0
    assert "395" in result.final_text


async def test_an_agreeing_computation_changes_nothing(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = "Tom has 3 boxes of 12 apples and eats 5. How many apples are left?"
    llm = backend("3 * 12 - 5 = 31 apples.", "```python\nprint(3 * 12 - 5)\n```")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == "3 * 12 - 5 = 31 apples." and result.llm_calls == 2


DATE_QUESTION = "If today is March 3, 2026, what is the date 45 days from now?"
DATE_PROGRAM = ("```python\nfrom datetime import date, timedelta\n"
                "print(date(2026, 3, 3) + timedelta(days=45))\n```")


async def test_a_date_answer_is_computed_and_compared_as_a_date(ctx: ToolContext, registry: ToolRegistry) -> None:
    # Read as numbers, "April 17, 2026" ends in 2026 and the program's "2026-04-17" in 17: they would disagree.
    llm = backend("45 days from March 3, 2026 is April 17, 2026.", DATE_PROGRAM)
    result = await answer(llm, ctx, registry, DATE_QUESTION)
    assert result.final_text == "45 days from March 3, 2026 is April 17, 2026." and result.llm_calls == 2
    assert "YYYY-MM-DD" in last_user(llm.requests[1]) and "final number" not in last_user(llm.requests[1])
    assert result.info.computed is not None
    assert result.info.computed.to_json() == {"value": None, "draft": None, "source": "program",
                                              "day": {"printed": "2026-04-17", "draft": "2026-04-17", "second": None}}


async def test_a_wrong_date_from_memory_is_replaced_when_two_programs_agree(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend("That would be April 15, 2026.", DATE_PROGRAM,
                  "```python\nimport datetime\nd = datetime.date(2026, 3, 3) + datetime.timedelta(45)\nprint(d)\n```",
                  "March has 28 days left after the 3rd, and 17 more in April: April 17, 2026.")
    result = await answer(llm, ctx, registry, DATE_QUESTION + " End with a line `Answer: <date>`.")
    explain = last_user(llm.requests[3])
    assert "It prints: April 17, 2026" in explain and "timedelta(days=45)" in explain
    assert result.final_text.startswith("March has 28 days left") and "April 17, 2026" in result.final_text
    # the requested line carries the computed date (no extra call), never its digits as a number ("Answer: 17")
    assert result.final_text.endswith("\n\nAnswer: April 17, 2026") and result.llm_calls == 4
    assert result.info.computed is not None and result.info.computed.trusted
    assert result.info.computed.to_json()["day"] == {"printed": "2026-04-17", "draft": "2026-04-15",
                                                     "second": "2026-04-17"}


async def test_a_program_that_prints_a_remembered_date_computes_nothing(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend("That would be April 15, 2026.", "```python\nprint('2026-04-18')\n```")
    result = await answer(llm, ctx, registry, DATE_QUESTION)
    assert result.final_text == "That would be April 15, 2026." and result.llm_calls == 2
    assert result.info.computed is None


async def test_a_second_date_program_that_disagrees_keeps_the_draft(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("That would be April 15, 2026.", DATE_PROGRAM,
                  "```python\nfrom datetime import date, timedelta\nprint(date(2026, 3, 3) + timedelta(46))\n```")
    result = await answer(llm, ctx, registry, DATE_QUESTION)
    assert result.final_text == "That would be April 15, 2026." and result.llm_calls == 3
    assert result.info.computed is not None and not result.info.computed.trusted


async def test_a_backend_failure_after_the_draft_keeps_the_draft(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = "Tom has 3 boxes of 12 apples and eats 5. How many apples are left?"
    llm = backend("31 apples.", ScriptedReply(error=(503, "busy")))
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == "31 apples."


async def test_events_report_each_check(ctx: ToolContext, registry: ToolRegistry) -> None:
    events: list[LoopEvent] = []

    async def on_event(event: LoopEvent) -> None:
        events.append(event)

    await answer(backend(WRONG, RIGHT), ctx, registry, SPEC, on_event=on_event)
    assert [e.kind for e in events] == ["step_start", "step_end", "step_start", "step_end", "answer"]


# --------------------------------------------------------------------------------------------- form

FORMAT = "Solve it step by step, then end your reply with a line of the form `Answer: <number>`."


async def test_the_requested_answer_line_is_added_without_rewriting_the_content(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = f"Tom has 3 boxes of 12 apples and eats 5. How many apples are left? {FORMAT}"
    draft = "3 * 12 = 36 apples, and 36 - 5 = 31.\nSo he has \\boxed{31} apples."
    llm = backend(draft, "```python\nprint(3 * 12 - 5)\n```")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == draft + "\n\nAnswer: 31" and result.llm_calls == 2
    assert result.info.form_fixed == ["answer_line"]


async def test_a_form_the_reply_cannot_be_fixed_into_deterministically_costs_one_short_call(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "Is 7 a prime number? Answer with yes or no."
    llm = backend("Seven has no divisors other than 1 and itself, so it is prime.", "Yes")
    result = await answer(llm, ctx, registry, request)
    assert result.final_text.startswith("Yes") and "so it is prime" in result.final_text
    assert result.llm_calls == 2 and llm.requests[1]["max_tokens"] <= 64


async def test_only_json_is_extracted_from_a_chatty_reply(ctx: ToolContext, registry: ToolRegistry) -> None:
    request = 'Give me a JSON object with keys "name" and "age" for Ada, 36. Reply with only JSON.'
    llm = backend('Sure! Here it is:\n```json\n{"name": "Ada", "age": 36}\n```\nLet me know.')
    result = await answer(llm, ctx, registry, request)
    assert result.final_text == '{"name": "Ada", "age": 36}' and result.llm_calls == 1


# --------------------------------------------------------------------- pasted data and program repair

CSV_REQUEST = ("here is a CSV of last month's sales:\n\nregion,product,units,revenue\nWest,widget,3,120\n"
               "East,gadget,1,80\nWest,gizmo,2,200.5\nNorth,widget,4,99\n\nWhat is the total revenue for the West "
               "region? Reply with just the number.")


async def test_pasted_data_is_handed_to_the_program_and_a_failing_program_is_repaired_once(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    undefined = "```python\ntotal = sum(float(r['revenue']) for r in data if r['region'] == 'West')\nprint(total)\n```"
    reads_file = ("```python\nimport csv\nrows = csv.DictReader(open('request-data.csv'))\n"
                  "print(sum(float(r['revenue']) for r in rows if r['region'] == 'West'))\n```")
    llm = backend("250", undefined, reads_file, reads_file, "The West rows are 120 and 200.5, so 320.5.")
    result = await answer(llm, ctx, registry, CSV_REQUEST)
    program_prompt, repair_prompt = last_user(llm.requests[1]), last_user(llm.requests[2])
    assert "`request-data.csv`" in program_prompt  # told where the pasted table is
    assert "NameError" in repair_prompt and "name 'data' is not defined" in repair_prompt
    assert undefined.split("\n")[1] in repair_prompt and "`request-data.csv`" in repair_prompt
    assert result.info.computed is not None
    assert result.info.computed.to_json() == {"value": 320.5, "draft": 250.0, "source": "program", "repair": "ok",
                                              "data": 1, "second": 320.5, "trusted": True}
    assert result.final_text == "320.5"
    assert not (ctx.workspace / "request-data.csv").exists()  # the copy is removed after the checks


async def test_a_repair_that_fails_too_leaves_the_draft(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("250", "```python\nprint(data)\n```", "```python\nprint(undefined_again)\n```")
    result = await answer(llm, ctx, registry, CSV_REQUEST)
    assert result.final_text == "250" and result.llm_calls == 3
    assert result.info.computed is not None and result.info.computed.repair == "failed"
    assert result.info.computed.value is None


async def test_a_users_own_file_of_that_name_is_never_overwritten(ctx: ToolContext, registry: ToolRegistry) -> None:
    (ctx.workspace / "request-data.csv").write_text("mine\n")
    llm = backend("250", "```python\nprint(1)\n```", "```python\nprint(1)\n```", "It is 1.")
    await answer(llm, ctx, registry, CSV_REQUEST)
    assert (ctx.workspace / "request-data.csv").read_text() == "mine\n"
    assert "request-data.csv" not in last_user(llm.requests[1])


DATES = "I write dates as DD/MM/YYYY."
# The model's rewrite and check, as for any preference (a date pattern is applied by rule by default).
MODEL_ONLY = CheckConfig(model_tests=0, samples=0, rules=False)


async def test_a_reply_judged_not_to_follow_the_preference_is_repaired_once(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    request = "When is Christmas Day in 2025?"
    llm = backend("It is December 25, 2025.", "It is December 25, 2025.", "no", "It is 25/12/2025.")
    result = await answer(llm, ctx, registry, request, config=MODEL_ONLY, preferences=[DATES])
    assert result.final_text == "It is 25/12/2025." and result.llm_calls == 4
    judge, repair = llm.requests[2], llm.requests[3]
    assert judge["max_tokens"] == 1 and judge["top_logprobs"] == 5 and f'"{DATES}"' in last_user(judge)
    assert repair["messages"][-2] == {"role": "assistant", "content": "It is December 25, 2025."}
    assert "still does not follow" in last_user(repair)
    assert result.info.preferences is not None
    assert result.info.preferences.to_json() == {"count": 1, "applied": False, "reason": "unchanged",
                                                 "followed": 0.0, "repaired": True}


async def test_a_rewrite_that_changes_the_computed_date_is_refused_and_a_reformatted_one_kept(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    draft = "45 days from March 3, 2026 is April 17, 2026."
    llm = backend(draft, DATE_PROGRAM, "It is 18/04/2026.", "no", "It is 17/04/2026.")
    result = await answer(llm, ctx, registry, DATE_QUESTION, config=MODEL_ONLY, preferences=[DATES])
    assert result.final_text == "It is 17/04/2026."  # the same day, in the user's format
    assert result.info.preferences is not None
    assert result.info.preferences.reason == "the rewrite no longer states the checked answer"
    assert result.info.preferences.repaired is True


async def test_a_repair_that_breaks_the_answer_keeps_the_reply(ctx: ToolContext, registry: ToolRegistry) -> None:
    draft = "45 days from March 3, 2026 is April 17, 2026."
    llm = backend(draft, DATE_PROGRAM, "It is 17/04/2026.", "no", "It is 16/04/2026.")
    result = await answer(llm, ctx, registry, DATE_QUESTION, config=MODEL_ONLY, preferences=[DATES])
    assert result.final_text == "It is 17/04/2026."
    assert result.info.preferences is not None and result.info.preferences.repaired is False


async def test_a_failed_judgement_keeps_the_accepted_rewrite(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("It is December 25, 2025.", "It is 25/12/2025.", ScriptedReply(error=(503, "busy")))
    result = await answer(llm, ctx, registry, "When is Christmas Day in 2025?", config=MODEL_ONLY,
                          preferences=[DATES])
    assert result.final_text == "It is 25/12/2025."


# ------------------------------------------------------------------------- preferences applied by rule

async def test_a_preference_of_a_known_kind_is_applied_by_rule_without_a_model_call(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    llm = backend("It is December 25, 2025.")
    result = await answer(llm, ctx, registry, "When is Christmas Day in 2025?", preferences=[DATES])
    assert result.final_text == "It is 25/12/2025." and result.llm_calls == 1
    assert result.info.preferences is not None
    assert result.info.preferences.to_json() == {"count": 1, "applied": True, "reason": "by rule",
                                                 "rules": ["date DD/MM/YYYY"]}


async def test_a_computed_date_is_put_in_the_users_pattern(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("45 days from March 3, 2026 is April 17, 2026.", DATE_PROGRAM)
    result = await answer(llm, ctx, registry, DATE_QUESTION, preferences=[DATES])
    assert result.final_text == "45 days from 03/03/2026 is 17/04/2026." and result.llm_calls == 2


async def test_the_rule_converts_values_and_leaves_code_alone(ctx: ToolContext, registry: ToolRegistry) -> None:
    draft = "Water freezes at 0 °C (32 °F). In code: `freeze_c = 0 °C`"
    llm = backend(draft)
    result = await answer(llm, ctx, registry, "At what temperature does water freeze?",
                          preferences=["Give me temperatures in kelvin, not Celsius or Fahrenheit."])
    assert result.final_text == "Water freezes at 273.15 K. In code: `freeze_c = 0 °C`"


async def test_a_request_naming_the_form_wins_over_the_rule(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("It starts at 2:30 PM.")
    result = await answer(llm, ctx, registry, "When does it start? Answer in AM/PM.",
                          preferences=["I use the 24-hour clock."])
    assert result.final_text == "It starts at 2:30 PM."


async def test_rules_and_the_models_rewrite_share_a_turn(ctx: ToolContext, registry: ToolRegistry) -> None:
    lists = "Put lists on one line, separated by semicolons."
    llm = backend("Bring:\n- notes\n- laptop\nThe call is at 3 pm.", "Bring: notes; laptop. The call is at 3 pm.",
                  "yes")
    result = await answer(llm, ctx, registry, "What should I bring to the call at 3 pm?",
                          preferences=["I use the 24-hour clock.", lists])
    assert result.final_text == "Bring: notes; laptop. The call is at 15:00." and result.llm_calls == 3
    rewrite = last_user(llm.requests[1])
    assert lists in rewrite and "24-hour" not in rewrite  # the model is asked only what no rule does
    assert result.info.preferences is not None and result.info.preferences.rules == ("clock 24",)


async def test_rules_switched_off_leave_the_preference_to_the_model(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("It is December 25, 2025.", "It is 25/12/2025.", "yes")
    result = await answer(llm, ctx, registry, "When is Christmas Day in 2025?", config=MODEL_ONLY,
                          preferences=[DATES])
    assert result.final_text == "It is 25/12/2025." and result.llm_calls == 3


async def test_every_model_call_is_timed_with_its_purpose(ctx: ToolContext, registry: ToolRegistry) -> None:
    llm = backend("45 days from March 3, 2026 is April 17, 2026.", DATE_PROGRAM)
    result = await answer(llm, ctx, registry, DATE_QUESTION)
    calls = result.info.to_json()["calls"]
    assert [c["purpose"] for c in calls] == ["draft", "program"] and all(c["ms"] >= 0 for c in calls)
