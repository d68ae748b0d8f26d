"""The JSON action protocol parser: the shapes small models really write, and what counts as broken."""

from __future__ import annotations

import json

import pytest

from ghost_agent.agent.tool_loop.protocol import ParsedAction, parse_action, render_action
from ghost_agent.tools import default_registry

NAMES = default_registry().names
PRIMARY = {"python": "code", "bash": "command"}
CODE = "print(sum(i * i for i in range(1, 101)))"


def parse(text: str) -> ParsedAction:
    return parse_action(text, NAMES, primary_args=PRIMARY)


def assert_python(parsed: ParsedAction, code: str = CODE) -> None:
    assert (parsed.kind, parsed.tool, parsed.args, parsed.error) == ("tool", "python", {"code": code}, None)


ACTION = json.dumps({"tool": "python", "args": {"code": CODE}})


@pytest.mark.parametrize(
    "text",
    [
        ACTION,
        f"  {ACTION}\n",
        f"```json\n{ACTION}\n```",
        f"```\n{ACTION}\n```",
        f"I will compute it with python.\n```json\n{ACTION}\n```\nThen I will report the result.",
        f"Let me run this: {ACTION} and see.",
        f"[{ACTION}]",
        json.dumps({"name": "python", "arguments": json.dumps({"code": CODE})}),
        json.dumps({"name": "python", "arguments": {"code": CODE}}),
        json.dumps({"type": "function", "function": {"name": "python", "arguments": json.dumps({"code": CODE})}}),
        json.dumps({"action": "python", "action_input": {"code": CODE}}),
        f'```json\n{json.dumps({"function": "python", "arguments": {"code": CODE}}, indent=2)}\n```',
        json.dumps({"action": "python", "action_input": json.dumps({"code": CODE})}),
        json.dumps({"tool": "python", "args": json.dumps({"code": CODE})}),
        json.dumps({"tool": "python", "args": CODE}),  # a bare string goes to the single required argument
        json.dumps({"tool": {"name": "python", "arguments": {"code": CODE}}}),
        ACTION[:-1] + ",}",  # trailing comma
        "{'tool': 'python', 'args': {'code': 'print(sum(i * i for i in range(1, 101)))'}}",  # Python quoting
    ],
)
def test_tool_action_shapes(text: str) -> None:
    assert_python(parse(text))


def test_raw_newlines_inside_strings_are_accepted() -> None:
    text = '{"tool": "python", "args": {"code": "for i in range(3):\n    print(i)"}}'
    assert_python(parse(text), "for i in range(3):\n    print(i)")


def test_first_action_wins_and_description_is_kept() -> None:
    first = {"description": "square and sum", "tool": "python", "args": {"code": CODE}}
    second = {"tool": "bash", "args": {"command": "ls"}}
    parsed = parse(f"{json.dumps(first)}\nand later maybe\n{json.dumps(second)}")
    assert_python(parsed)
    assert parsed.description == "square and sum"


def test_unrelated_json_before_the_action_is_skipped() -> None:
    text = f'The data is {{"a": 1, "b": [1, 2]}}. Now: {ACTION}'
    assert_python(parse(text))


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('{"answer": "338350"}', "338350"),
        ('Done.\n```json\n{"final_answer": 338350}\n```', "338350"),
        ('{"action": "Final Answer", "action_input": "It is 338350."}', "It is 338350."),
        ('{"tool": null, "answer": "hi"}', "hi"),
        ("The sum is 338350.", "The sum is 338350."),
        ("  Use `d = {'name': x}` in your code.  ", "Use `d = {'name': x}` in your code."),
        ('A dict like {"name": "Bob"} is fine here.', 'A dict like {"name": "Bob"} is fine here.'),
        ("```python\nprint(1)\n```", "```python\nprint(1)\n```"),
    ],
)
def test_answers(text: str, answer: str) -> None:
    parsed = parse(text)
    assert (parsed.kind, parsed.answer, parsed.tool) == ("answer", answer, None)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"tool": "python", "args": {"code": "print(1)"', "not valid JSON"),
        ('```json\n{"tool": "python" "args": {}}\n```', "not valid JSON"),
        ('Sure! {"answer": "42" extra}', "not valid JSON"),
        ('{"tool": "rm_rf", "args": {}}', "unknown tool 'rm_rf'; available: bash, file_system, memory_search, python"),
        ('{"tool": "python", "args": 5}', "must be a JSON object"),
        ('{"tool": "file_system", "args": "read x"}', "must be a JSON object"),  # no single required argument
        ('{"tool": null, "args": {}}', "names no tool"),
        ('{"answer": ""}', "is empty"),
        ("", "empty"),
        ("   \n", "empty"),
    ],
)
def test_invalid(text: str, reason: str) -> None:
    parsed = parse(text)
    assert parsed.kind == "invalid"
    assert parsed.error is not None and reason in parsed.error


def test_unknown_tool_keeps_the_name_and_any_tool_is_allowed_without_names() -> None:
    parsed = parse('{"tool": "rm_rf", "args": {}}')
    assert parsed.tool == "rm_rf"
    assert parse_action('{"tool": "rm_rf", "args": {"x": 1}}').kind == "tool"


def test_none_and_huge_inputs_never_raise() -> None:
    assert parse_action(None).kind == "invalid"  # type: ignore[arg-type]
    noise = "{" * 50_000 + "x"
    assert parse(noise).kind == "answer"
    deep = "[" * 5000 + "]" * 5000
    assert parse(deep).kind == "answer"


def test_render_action_round_trips() -> None:
    text = render_action("python", {"code": CODE}, "compute")
    assert json.loads(text) == {"description": "compute", "tool": "python", "args": {"code": CODE}}
    assert_python(parse(text))
    assert json.loads(render_action("bash", {"command": "ls"})) == {"tool": "bash", "args": {"command": "ls"}}
