"""The registry: OpenAI schemas, a stable prompt block, and `call` turning every problem into a result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from structlog.testing import capture_logs

from ghost_agent.tools import SchemaDefinitionError, Tool, ToolContext, ToolRegistry, ToolResult, default_registry
from ghost_agent.tools.base import cap_text


class Echo(Tool):
    name = "echo"
    description = "Repeat text."
    result_cap = 100
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1, "maximum": 50}},
        "required": ["text"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.success(args["text"] * int(args.get("times", 1)))


class Boom(Tool):
    name = "boom"
    description = "Always raises."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise KeyError("missing thing")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path / "ws", session_id="s1")


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([Echo(), Boom()])


def test_default_registry_openai_schemas() -> None:
    schemas = default_registry().schemas_openai()
    assert [s["function"]["name"] for s in schemas] == ["bash", "file_system", "memory_search", "python"]
    for entry in schemas:
        assert entry["type"] == "function"
        assert set(entry["function"]) == {"name", "description", "parameters"}
        assert entry["function"]["parameters"]["type"] == "object"
        assert entry["function"]["description"]
    json.dumps(schemas)  # JSON-ready as is


def test_schemas_are_copies(registry: ToolRegistry) -> None:
    registry.schemas_openai()[0]["function"]["parameters"]["properties"].clear()
    assert Boom.parameters == {"type": "object", "properties": {}}
    assert registry.schemas_openai()[1]["function"]["parameters"]["properties"]


def test_prompt_block_is_sorted_and_deterministic() -> None:
    a = ToolRegistry([Echo(), Boom()]).describe_for_prompt()
    b = ToolRegistry([Boom(), Echo()]).describe_for_prompt()
    assert a == b
    assert a == "- boom(): Always raises.\n- echo(text: string, times?: integer): Repeat text."
    text = default_registry().describe_for_prompt()
    assert text == default_registry().describe_for_prompt()
    assert "- file_system(action: list|read|write|find, path?: string" in text


def test_registration_checks() -> None:
    registry = ToolRegistry([Echo()])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Echo())

    class Bad(Echo):
        name = "bad"
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"p": {"type": "string",
                                                                                     "format": "uri"}}}

    with pytest.raises(SchemaDefinitionError, match="format"):
        registry.register(Bad())


async def test_call_with_dict_and_json_string(registry: ToolRegistry, ctx: ToolContext) -> None:
    assert (await registry.call("echo", {"text": "hi", "times": 2}, ctx)).to_message() == "hihi"
    result = await registry.call("echo", '{"text": "yo"}', ctx)
    assert result.ok and result.output == "yo" and result.tool == "echo" and result.duration_ms > 0
    fenced = await registry.call("echo", '```json\n{"text": "f"}\n```', ctx)
    assert fenced.ok and fenced.output == "f"
    backticks = await registry.call("echo", '```json\n{"text": "a ```py``` b"}\n```', ctx)  # the LAST ``` closes
    assert backticks.ok and backticks.output == "a ```py``` b"
    assert (await registry.call("boom", "", ctx)).error == "boom: internal error: KeyError: 'missing thing'"


async def test_unknown_tool_lists_the_available_ones(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("shell", {"cmd": "ls"}, ctx)
    assert not result.ok
    assert result.error == "shell: unknown tool 'shell'; available tools: boom, echo"
    assert result.to_message() == "ERROR: shell: unknown tool 'shell'; available tools: boom, echo"


async def test_trailing_commas_are_forgiven_outside_strings(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("echo", '{"text": "a,} \\",]",\n}', ctx)
    assert result.ok and result.output == 'a,} ",]'


async def test_bad_json_is_a_clear_error(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("echo", "{text: 'a'}", ctx)
    assert not result.ok and result.error is not None
    assert result.error == ("echo: arguments are not valid JSON (Expecting property name enclosed in double quotes "
                            "at line 1 column 2); expected {text: string, times?: integer}")
    result = await registry.call("echo", '{"text": "a"', ctx)
    assert result.error is not None and result.error.startswith("echo: arguments are not valid JSON (")
    assert result.error.endswith("; expected {text: string, times?: integer}")
    not_object = await registry.call("echo", "[1, 2]", ctx)
    assert not_object.error == "echo: arguments must be a JSON object (got array); expected {text: string, " \
        "times?: integer}"
    assert (await registry.call("echo", 42, ctx)).error.startswith("echo: arguments must be a JSON object (got int")


async def test_validation_error_text(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("echo", {"times": 0, "loud": True}, ctx)
    assert result.error == (
        "echo: missing required argument 'text'; 'times' must be >= 1 (got 0); unexpected argument 'loud' "
        "(allowed: text, times); expected {text: string, times?: integer}"
    )
    assert "\n" not in result.error


async def test_a_raising_tool_becomes_an_error_result_and_is_logged(registry: ToolRegistry,
                                                                    ctx: ToolContext) -> None:
    with capture_logs() as logs:
        result = await registry.call("boom", {}, ctx)
    assert not result.ok
    assert result.to_message() == "ERROR: boom: internal error: KeyError: 'missing thing'"
    events = {e["event"]: e for e in logs}
    assert events["tool_error"]["tool"] == "boom" and events["tool_error"]["error_type"] == "KeyError"
    assert events["tool_call"]["ok"] is False


async def test_every_call_is_logged(registry: ToolRegistry, ctx: ToolContext) -> None:
    with capture_logs() as logs:
        await registry.call("echo", {"text": "a"}, ctx)
        await registry.call("nope", {}, ctx)
    calls = [e for e in logs if e["event"] == "tool_call"]
    assert [(c["tool"], c["ok"], c["truncated"]) for c in calls] == [("echo", True, False), ("nope", False, False)]
    assert all(isinstance(c["ms"], float) and c["session"] == "s1" for c in calls)


async def test_result_cap_keeps_head_and_tail_with_a_marker(registry: ToolRegistry, ctx: ToolContext) -> None:
    text = "".join(f"{i:03d}" for i in range(100))  # 300 chars; the echo tool caps at 100
    result = await registry.call("echo", {"text": text}, ctx)
    assert result.ok and result.truncated
    message = result.to_message()
    assert "[... truncated 200 chars ...]" in message
    assert message.startswith(text[:66]) and message.endswith(text[-34:])
    assert result.data["truncated_chars"] == 200
    assert result.to_dict()["truncated"] is True


def test_to_dict_preview_is_bounded() -> None:
    result = ToolResult.success("x" * 5000)
    result.tool = "echo"
    d = result.to_dict()
    assert d["ok"] and d["error"] is None and d["tool"] == "echo"
    assert len(d["result_preview"]) < 600 and "truncated" in d["result_preview"]
    json.dumps(d)


def test_the_preview_is_redacted_before_it_is_cut() -> None:
    # Cut first, the head would end in a key too short for its rule, and the tail would keep a key block's
    # last lines without the BEGIN line that marks them.
    lines = [f"{n:02d}QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw{'abcdefghij' * 2}" for n in range(40)]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    key = "sk-proj-" + "Ab1Cd2Ef3G" * 6
    result = ToolResult.success("y" * 320 + " " + key + " " + "z" * 1000 + "\n" + pem)
    preview = result.to_dict()["result_preview"]
    assert "truncated" in preview and "<REDACTED_PRIVATE_KEY>" in preview
    assert "sk-proj" not in preview and not any(line in preview for line in lines)


def test_failure_error_is_one_line() -> None:
    result = ToolResult.failure("x", "bad\nthing\n", hint="try\tagain")
    assert result.error == "x: bad thing; try again"
    assert cap_text("short", 100) == ("short", 0)
