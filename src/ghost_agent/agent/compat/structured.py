"""Structured output: a reply under `response_format` parses, and validates against the client's schema.

The constraint itself is applied where the text is generated (llama.cpp turns `response_format` into a grammar;
an upstream gets it forwarded). This module checks the result and normalises the one harmless deviation a
model makes when a backend ignores the constraint (JSON wrapped in a Markdown fence), so a client's
`json.loads(reply)` works; the caller spends one repair round when the text still does not hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ghost_agent.agent.compat.tool_call_parse import validate
from ghost_agent.agent.strategy import StructuredCheck
from ghost_agent.jsonsafe import JSON

# The whole reply in one fence: the tag right after the backticks and nothing but spaces after it (no CR), the closing
# backticks on a line of their own. Its own rule: no style of text.fences.sole_fence has this opening line.
_FENCED = re.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n[ \t]*```\s*\Z", re.DOTALL)

REPAIR = (
    "Your reply must be only JSON{what}, with nothing before or after it. It was not: {errors}. "
    "Reply again with only the corrected JSON."
)


def kind(response_format: Any) -> str | None:
    """'json_object', 'json_schema', or None (plain text / absent / unknown)."""
    if isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema"):
        return str(response_format["type"])
    return None


def schema(response_format: Any) -> JSON | None:
    """The JSON Schema of a `json_schema` response format (OpenAI nests it under `json_schema.schema`)."""
    if kind(response_format) != "json_schema":
        return None
    spec = response_format.get("json_schema")
    found = spec.get("schema") if isinstance(spec, dict) else None
    return found if isinstance(found, dict) else None


def normalise(text: str) -> str:
    """The reply with a Markdown fence around a whole JSON document removed (nothing else changes)."""
    match = _FENCED.match(text)
    if match:
        inner = match.group(1).strip()
        if _parses(inner):
            return inner
    return text


def problems(text: str, response_format: Any) -> list[str]:
    """Why `text` does not satisfy `response_format` ([] when it does, or when there is no constraint)."""
    if kind(response_format) is None:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"not valid JSON ({exc.msg} at char {exc.pos})"]
    target = schema(response_format)
    if target is None:
        return [] if isinstance(value, dict) else ["the JSON is not an object"]
    return validate(value, target)


def repair_prompt(response_format: Any, errors: list[str]) -> str:
    target = schema(response_format)
    what = f" matching this JSON Schema: {json.dumps(target)[:3000]}" if target else " (one object)"
    return REPAIR.format(what=what, errors="; ".join(errors)[:1000])


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


async def ensure(
    text: str, response_format: Any, ask: Callable[[str], Awaitable[str]]
) -> tuple[str, StructuredCheck | None]:
    """`text` made to satisfy `response_format`: normalised, and when it still fails, one repair round
    (`ask(instruction)` is one more model call under the constraint, continuing from `text`). Returns the text
    and what happened, for the record (None when there is no constraint)."""
    if kind(response_format) is None:
        return text, None
    text = normalise(text)
    errors = problems(text, response_format)
    if not errors:
        return text, StructuredCheck(valid=True, repaired=False)
    fixed = normalise(await ask(repair_prompt(response_format, errors)))
    still = problems(fixed, response_format)
    if not still:
        return fixed, StructuredCheck(valid=True, repaired=True, errors=errors[:5])
    return text, StructuredCheck(valid=False, repaired=False, errors=still[:5])
