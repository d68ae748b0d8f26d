"""Find the tool calls a model wrote as text, for clients that sent `tools` (issue 14).

Small local models rarely emit their chat template's native tool-call tokens: the embedded Qwen2.5-Coder-1.5B
writes its call as fenced JSON in the content (50 of 50 measured), sometimes inside `<tool_call>` tags, as a
bare object, a list of objects, or a Python-style call `get_weather(city="Paris")`. This module turns any of
those into OpenAI `tool_calls`, and validates each call's arguments against the client's JSON schema.

Only names the client offered count as calls: a JSON answer whose keys happen to be `name`/`arguments` but
whose name is not one of the client's tools stays content. Pure functions; no model calls (the repair round
lives in `client_tools.py`).
"""

from __future__ import annotations

import ast
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.jsonsafe import JSON

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
# A fence around a call: opened anywhere by a line holding only a tag, closed by a later line that starts with
# backticks (a string in the call may hold ``` mid-line) or running to the end. Its own rule: text.fences closes
# an inline opener's block at the next backticks wherever they are.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|$)", re.DOTALL)
_FUNCTION_TAG = re.compile(r"<function=([A-Za-z0-9_.-]+)>\s*(.*?)\s*</function>", re.DOTALL)

# Keys a model uses for the call's name and its arguments, in the shapes seen from small models.
_NAME_KEYS = ("name", "tool", "tool_name", "function_name", "action", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "tool_input", "input", "action_input", "params")


@dataclass
class ParsedCall:
    name: str
    arguments: JSON
    errors: list[str] = field(default_factory=list)  # schema violations, empty when valid

    def wire(self) -> JSON:
        """The OpenAI `tool_calls` entry."""
        return {
            "id": "call_" + secrets.token_hex(12),
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


@dataclass
class Parsed:
    calls: list[ParsedCall]
    text: str  # the content left once the calls are cut out (prose around them), stripped
    broken: list[str] = field(default_factory=list)  # call-shaped text that did not parse, with why

    @property
    def errors(self) -> list[str]:
        return self.broken + [f"{c.name}: {e}" for c in self.calls for e in c.errors]


def tool_names(tools: Any) -> dict[str, JSON]:
    """The client's functions by name -> their JSON schema (`{}` when none given)."""
    out: dict[str, JSON] = {}
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            params = function.get("parameters")
            out[function["name"]] = params if isinstance(params, dict) else {}
    return out


def parse_tool_calls(content: str, tools: Any) -> Parsed:
    """The calls in `content` to functions the client offered, plus the prose around them."""
    schemas = tool_names(tools)
    if not content or not schemas:
        return Parsed([], (content or "").strip())
    spans: list[tuple[int, int]] = []
    calls: list[ParsedCall] = []
    broken: list[str] = []

    def take(start: int, end: int, found: list[ParsedCall], why: str | None) -> None:
        if found:
            calls.extend(found)
            spans.append((start, end))
        elif why:
            broken.append(why)
            spans.append((start, end))

    for match in _TAG.finditer(content):
        found, why = _from_text(match.group(1), schemas)
        take(match.start(), match.end(), found, why or ("empty <tool_call>" if not found else None))
    for match in _FUNCTION_TAG.finditer(content):
        if _inside(match.start(), spans):
            continue
        found, why = _from_json_text(match.group(2), schemas, default_name=match.group(1))
        take(match.start(), match.end(), found, why)
    for match in _FENCE.finditer(content):
        if _inside(match.start(), spans):
            continue
        lang = match.group(1).lower()
        if lang not in ("", "json", "json5", "tool_call", "tool", "python", "py", "javascript", "js"):
            continue
        found, why = _from_text(match.group(2), schemas)
        # A fenced block that is not call-shaped is ordinary content (code in an answer), not a broken call.
        take(match.start(), match.end(), found, why if _call_shaped(match.group(2), schemas) else None)
    if not spans:
        stripped = content.strip()
        found, why = _from_text(stripped, schemas)
        if found or (why and _call_shaped(stripped, schemas)):
            take(0, len(content), found, why)
    text = _cut(content, spans)
    return Parsed(calls, text, broken)


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in spans)


def _cut(content: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(spans):
        out.append(content[last:start])
        last = max(last, end)
    out.append(content[last:])
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


def _call_shaped(text: str, schemas: dict[str, JSON]) -> bool:
    """Does this text look like an attempt at a call (so a parse failure is worth a repair round)?"""
    head = text.strip()[:400]
    if not head:
        return False
    if head[0] in "{[" and any(f'"{key}"' in head for key in _NAME_KEYS):
        return True
    return any(re.match(rf"\s*{re.escape(name)}\s*\(", head) for name in schemas)


def _from_text(text: str, schemas: dict[str, JSON]) -> tuple[list[ParsedCall], str | None]:
    """Calls from one block of text: JSON (object, list, several objects) or a Python-style call."""
    text = text.strip()
    if not text:
        return [], None
    if text[0] in "{[":
        return _from_json_text(text, schemas)
    return _from_python_call(text, schemas)


def _from_json_text(
    text: str, schemas: dict[str, JSON], default_name: str | None = None
) -> tuple[list[ParsedCall], str | None]:
    values, why = _json_values(text)
    if not values:
        return [], why
    calls: list[ParsedCall] = []
    unknown: list[str] = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if default_name is not None and isinstance(item, dict):
                item = {"name": default_name, "arguments": item}
            call = _from_object(item, schemas)
            if call is not None:
                calls.append(call)
            elif (name := _unknown_function(item)) is not None:
                unknown.append(name)
    if calls or not unknown:
        return calls, None
    return [], f"no function named {', '.join(unknown)}; the functions are {', '.join(schemas)}"


def _unknown_function(item: Any) -> str | None:
    """The name of a call to a function the client did not offer (`{"name": "get_wether", "arguments": {}}`);
    None when the object is not call-shaped (a JSON answer that merely has a `name` key, like a person's)."""
    if not isinstance(item, dict):
        return None
    name: str | None = next((item[key] for key in ("name", "tool", "function") if isinstance(item.get(key), str)), None)
    has_args = any(isinstance(item.get(key), (dict, str)) for key in _ARG_KEYS)
    if name and has_args and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
        return name
    return None


def _json_values(text: str) -> tuple[list[Any], str | None]:
    """Every JSON value in `text` (a model may write several objects back to back), leniently.

    Not text.lenient_json's scan, which finds values anywhere in prose: a call block is JSON from its first
    character on (values apart only by whitespace, ',' or ';'), and what breaks it is reported, not skipped."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos, error = 0, None
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,;":
            pos += 1
        if pos >= len(text):
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            lenient = _lenient(text[pos:])
            if lenient is None:
                error = f"invalid JSON: {exc.msg} at char {exc.pos}"
                break
            values.append(lenient)
            break
        values.append(value)
    return values, (error if not values else None)


def _lenient(text: str) -> Any:
    """Python-literal JSON (single quotes, True/None, trailing commas) or a missing closing brace."""
    candidates = [text, text + "}", text + "}}", text + "]"]
    stripped = text.strip()
    if stripped.startswith("{{") and stripped.endswith("}}"):  # braces doubled as a template would escape them
        candidates.append(stripped.replace("{{", "{").replace("}}", "}"))
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
        value = _python_literal(candidate)
        if isinstance(value, (dict, list)):
            return value
    return None


_JSON_NAMES = {"true": True, "false": False, "null": None}


class _JsonNames(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(_JSON_NAMES[node.id]) if node.id in _JSON_NAMES else node


def _python_literal(text: str) -> Any:
    """A Python literal, with JSON's true/false/null read as names (never rewritten inside strings)."""
    try:
        tree = _JsonNames().visit(ast.parse(text.strip(), mode="eval"))
        return ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def call_from_object(item: Any, tools: Any) -> ParsedCall | None:
    """One call object (`{"name", "arguments"}` and the other shapes) to a function the client offered, or None."""
    return _from_object(item, tool_names(tools))


def _from_object(item: Any, schemas: dict[str, JSON]) -> ParsedCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # {"type": "function", "function": {"name", "arguments"}}
        item = function
    name = next((item[key] for key in _NAME_KEYS if isinstance(item.get(key), str)), None)
    name = _known(name, schemas)
    if name is None:
        return None
    raw = next((item[key] for key in _ARG_KEYS if key in item), None)
    if raw is None:  # {"name": "f", "city": "Paris"}: the arguments inline
        raw = {k: v for k, v in item.items() if k not in _NAME_KEYS and k not in ("type", "id")}
    if isinstance(raw, str):
        raw = _json_object(raw)
        if raw is None:
            return ParsedCall(name, {}, ["arguments are not a JSON object"])
    if not isinstance(raw, dict):
        return ParsedCall(name, {}, ["arguments are not a JSON object"])
    return ParsedCall(name, raw, validate(raw, schemas[name]))


def _json_object(text: str) -> JSON | None:
    text = text.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = _lenient(text)
    return value if isinstance(value, dict) else None


def _known(name: str | None, schemas: dict[str, JSON]) -> str | None:
    if name is None:
        return None
    if name in schemas:
        return name
    folded = {key.lower(): key for key in schemas}
    return folded.get(name.strip().lower().removeprefix("functions."))


def _from_python_call(text: str, schemas: dict[str, JSON]) -> tuple[list[ParsedCall], str | None]:
    """`get_weather(city="Paris")` (one or several lines of them), keyword or positional literal arguments."""
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError:
        return [], None
    calls: list[ParsedCall] = []
    for statement in tree.body:
        node = statement.value if isinstance(statement, ast.Expr) else None
        if not isinstance(node, ast.Call):
            return [], None  # code, not a call list: leave it as content
        func = node.func
        name = _known(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None,
                      schemas)
        if name is None:
            return [], None
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
            positional = [ast.literal_eval(a) for a in node.args]
        except (ValueError, SyntaxError):
            return [], f"{name}: arguments are not literals"
        props = list((schemas[name].get("properties") or {}).keys())
        for index, value in enumerate(positional):
            if index < len(props) and props[index] not in args:
                args[props[index]] = value
        calls.append(ParsedCall(name, args, validate(args, schemas[name])))
    return calls, None


def validate(arguments: Any, schema: JSON) -> list[str]:
    """Schema violations of `arguments` (JSON Schema: the client's `parameters`, or a `json_schema` response
    format); [] when valid or no schema."""
    if not schema:
        return []
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        validator = Draft202012Validator(schema)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    except SchemaError:
        return []  # the client's schema is itself invalid: nothing to hold the arguments to
    return [_describe(e) for e in errors[:5]]


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.path)
    return f"{where or 'arguments'}: {error.message}"[:300]
