"""The JSON action protocol of the tool loop, read leniently.

The model acts by replying `{"tool": "<name>", "args": {...}}` and finishes with plain text or
`{"answer": "..."}`. Small local models bend this in predictable ways: a ```json fence, prose before or after
the object, OpenAI's `{"name", "arguments"}`, `{"function": "<name>", "arguments"}` or LangChain's
`{"action", "action_input"}` shapes, arguments given as a JSON string, raw newlines inside strings, a trailing
comma. All of those parse.

What does not parse is classified rather than raised: a reply with no JSON object at all is a plain final
answer; a reply that clearly tried to be an action (a quoted `"tool"`/`"answer"`/... key inside a broken
object) or names a tool that does not exist is `invalid`, with a reason the loop can feed back once.

The values are found by `text.lenient_json`'s shared scan (the whole reply, its fences, objects in the prose), with
this module's own decoder: `iter_json` decodes strictly (a raw newline in a code string fails) and does not repair
trailing commas, the two most common ways a small model breaks an action object.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ghost_agent.jsonsafe import JSON
from ghost_agent.text.lenient_json import SCAN_CHARS, json_values
from ghost_agent.tools.base import one_line
from ghost_agent.tools.registry import drop_trailing_commas

Kind = Literal["tool", "answer", "invalid"]

MAX_OBJECT_STARTS = 64  # '{' positions tried (bounds the work on brace-heavy text)

_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines/tabs inside strings are accepted
# A quoted protocol key: the mark of a reply that meant to be an action, as opposed to prose with braces
# (a generic key like "name" counts only next to "arguments", as in OpenAI's function-call shape).
_ACTION_KEY_RE = re.compile(r"""["'](?:tool|tool_name|action|answer|final_answer|function)["']\s*:""")
_NAME_KEY_RE = re.compile(r"""["']name["']\s*:""")
_ARGUMENTS_KEY_RE = re.compile(r"""["'](?:arguments|action_input)["']\s*:""")
_TOOL_KEYS = ("tool", "tool_name")
_ARG_KEYS = ("args", "arguments", "tool_args", "parameters", "input", "action_input")
_ANSWER_KEYS = ("answer", "final_answer", "final")
_ANSWER_ACTIONS = frozenset({"final answer", "final_answer", "answer", "finish", "respond", "final"})
_NO_TOOL = frozenset({"", "none", "null"})


@dataclass
class ParsedAction:
    """What a model reply asks for.

    `kind` is "tool" (`tool` and `args` set; `description` is the model's own note on the step, if any),
    "answer" (`answer` is the final text) or "invalid" (`error` says why, in a form the model can act on).
    """

    kind: Kind
    tool: str | None = None
    args: JSON = field(default_factory=dict)
    answer: str | None = None
    error: str | None = None
    description: str = ""


def parse_action(
    text: str | None,
    tool_names: Collection[str] | None = None,
    *,
    primary_args: Mapping[str, str] | None = None,
) -> ParsedAction:
    """Read one model reply as a tool action, a final answer or an invalid attempt. Never raises.

    `tool_names` (when given) are the tools that exist; naming another is "invalid". `primary_args` maps a
    tool to its single required argument, so `{"tool": "python", "args": "print(1)"}` (a bare string that
    is not a JSON object) becomes `{"code": "print(1)"}`; without an entry such args are "invalid".
    """
    raw = text if isinstance(text, str) else ""
    stripped = raw.strip()
    first_problem: ParsedAction | None = None
    for value in _json_values(raw):
        for obj in _objects_in(value):
            parsed = _interpret(obj, tool_names, primary_args or {})
            if parsed is None:
                continue
            if parsed.kind != "invalid":
                return parsed
            first_problem = first_problem or parsed
    if first_problem is not None:
        return first_problem
    if _looks_like_broken_action(raw):
        return ParsedAction(
            kind="invalid",
            error="the reply looks like a JSON action but is not valid JSON (check quotes, braces and commas)",
        )
    if not stripped:
        return ParsedAction(kind="invalid", error="the reply was empty")
    return ParsedAction(kind="answer", answer=stripped)


def render_action(tool: str, args: Mapping[str, Any], description: str = "") -> str:
    """An action in the protocol's own shape (how a chosen action is written into the conversation)."""
    body: JSON = {"tool": tool, "args": dict(args)}
    if description:
        body = {"description": description, **body}
    return json.dumps(body, ensure_ascii=False, default=str)


# ------------------------------------------------------------------------------------------ extraction


def _json_values(text: str) -> Iterator[Any]:
    """JSON values in `text`, most likely first: the whole reply, each fenced block, then every balanced
    object in the prose, left to right (objects nested in one already yielded are skipped)."""
    return json_values(text, decode=_decode, decode_at=_object_at, opens="{", max_brackets=MAX_OBJECT_STARTS)


def _object_at(text: str, start: int) -> tuple[Any, int] | None:
    """The object whose `{` is at `start` (its balanced span, read by `_decode`) and the index just past it."""
    span = _balanced(text, start)
    value = None if span is None else _decode(text[start:span])
    return None if span is None or value is None else (value, span)


def _decode(chunk: str) -> Any:
    """`chunk` as JSON (raw control characters allowed; then without trailing commas; then as a Python
    literal, for `{'tool': 'python', ...}` written in Python's quoting), else None."""
    for candidate in (chunk, drop_trailing_commas(chunk)):
        try:
            value, end = _DECODER.raw_decode(candidate)
        except (ValueError, RecursionError):
            continue
        if not candidate[end:].strip():
            return value
    if "'" in chunk:
        try:
            return ast.literal_eval(chunk)
        except Exception:  # literal_eval raises a zoo (SyntaxError, ValueError, MemoryError, ...): all "no"
            return None
    return None


def _balanced(text: str, start: int) -> int | None:
    """The index just past the `}` closing the `{` at `start` (string-aware), or None if it never closes."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1 if ch == "}" else None
    return None


def _objects_in(value: Any) -> Iterator[Mapping[str, Any]]:
    """The value itself when it is an object; the objects of a list (a model that wrapped its action)."""
    if isinstance(value, Mapping):
        yield value
    elif isinstance(value, list):
        yield from (item for item in value if isinstance(item, Mapping))


def _looks_like_broken_action(text: str) -> bool:
    """True when an unparseable `{...}` (or an unclosed one) carries a quoted protocol key."""
    text = text[:SCAN_CHARS]
    for n, match in enumerate(re.finditer(r"\{", text)):
        if n >= MAX_OBJECT_STARTS:
            break
        close = _balanced(text, match.start())
        span = text[match.start() : close] if close is not None else text[match.start() :]
        keyed = _ACTION_KEY_RE.search(span) or (_NAME_KEY_RE.search(span) and _ARGUMENTS_KEY_RE.search(span))
        if keyed and _decode(span) is None:
            return True
    return False


# ------------------------------------------------------------------------------------ interpretation


def _interpret(
    obj: Mapping[str, Any], tool_names: Collection[str] | None, primary: Mapping[str, str]
) -> ParsedAction | None:
    """The action an object describes; None when it is no protocol object at all (some other JSON)."""
    description = _text(obj.get("description", obj.get("thought", "")))
    tool, args_raw, is_action = _tool_and_args(obj)
    if is_action and tool is not None and tool.strip().lower().replace("_", " ") in _ANSWER_ACTIONS:
        # LangChain's {"action": "Final Answer", "action_input": "..."}
        answer = _text(args_raw).strip() or _text(obj.get("answer")).strip()
        if not answer:
            return ParsedAction(kind="invalid", error="the final answer is empty")
        return ParsedAction(kind="answer", answer=answer)
    if is_action and tool is not None and tool.strip().lower() not in _NO_TOOL:
        return _tool_action(tool.strip(), args_raw, description, tool_names, primary)
    for key in _ANSWER_KEYS:
        if key in obj:
            answer = _text(obj[key]).strip()
            if not answer:
                return ParsedAction(kind="invalid", error=f"the {key!r} is empty")
            return ParsedAction(kind="answer", answer=answer)
    if is_action:  # shaped like an action, but the tool is missing, null or not a string
        return ParsedAction(kind="invalid", error="the action names no tool (and gives no answer)")
    return None


def _tool_and_args(obj: Mapping[str, Any]) -> tuple[str | None, Any, bool]:
    """(tool name or None, raw args, whether the object is shaped like an action at all)."""
    for key in _TOOL_KEYS:
        if key in obj:
            tool = obj[key]
            if isinstance(tool, Mapping):  # {"tool": {"name": ..., "arguments": ...}}
                return _name(tool.get("name")), _first(tool, _ARG_KEYS, _first(obj, _ARG_KEYS)), True
            return _name(tool), _first(obj, _ARG_KEYS), True
    fn = obj.get("function")
    if isinstance(fn, Mapping) and "name" in fn:  # an OpenAI tool_calls entry pasted as text
        return _name(fn.get("name")), _first(fn, _ARG_KEYS), True
    if isinstance(fn, str) and any(k in obj for k in _ARG_KEYS):  # {"function": "python", "arguments": {...}}
        return fn, _first(obj, _ARG_KEYS), True
    if "name" in obj and any(k in obj for k in ("arguments", "parameters", "args")):
        return _name(obj.get("name")), _first(obj, _ARG_KEYS), True
    if "action" in obj and "action_input" in obj:
        return _name(obj.get("action")), obj.get("action_input"), True
    return None, None, False


def _tool_action(
    tool: str, raw: Any, description: str, tool_names: Collection[str] | None, primary: Mapping[str, str]
) -> ParsedAction:
    if tool_names is not None and tool not in tool_names:
        known = ", ".join(sorted(tool_names)) or "(none)"
        return ParsedAction(kind="invalid", tool=tool, error=f"unknown tool {one_line(tool, 60)!r}; available: {known}")
    args = _args(raw, primary.get(tool))
    if args is None:
        return ParsedAction(
            kind="invalid", tool=tool, error=f"the args of {tool!r} must be a JSON object of named arguments"
        )
    return ParsedAction(kind="tool", tool=tool, args=args, description=description.strip())


def _args(raw: Any, primary: str | None) -> JSON | None:
    """Arguments as a dict: an object as is, a JSON-object string parsed, a bare string given to the tool's
    primary argument; None when none of those fits."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        value = _decode(raw.strip())
        if isinstance(value, Mapping):
            return dict(value)
        if primary:
            return {primary: raw}
    return None


def _first(obj: Mapping[str, Any], keys: tuple[str, ...], default: Any = None) -> Any:
    return next((obj[k] for k in keys if k in obj), default)


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


__all__ = ["ParsedAction", "parse_action", "render_action"]
