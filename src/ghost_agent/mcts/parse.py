"""Lenient reading of what a small model writes: tool schemas in, JSON actions and 0–10 ratings out.

Local models (Qwen2.5-Coder) wrap JSON in ```json fences, add prose around it, return one object where an
array was asked for, invent tools, or repeat themselves. Everything here degrades to "nothing found" rather
than raising, so the caller decides between a retry and a default.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.prm.features import ActionCandidate
from ghost_agent.text.lenient_json import SCAN_CHARS, iter_json

_SCORE_RE = re.compile(r"""["']?(?:score|rating)["']?\s*[:=]\s*["']?(-?\d+(?:\.\d+)?)""", re.I)
_NUMBER_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")
_NO_TOOL = frozenset({"", "none", "null", "answer", "direct", "direct_answer", "respond"})


@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent may call: its name, what it does, and its JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: JSON = field(default_factory=dict)

    @classmethod
    def from_any(cls, spec: Any) -> ToolSpec | None:
        """From an OpenAI tool schema, a plain `{name, description, parameters}` dict or an object with those
        attributes; None when no name can be found."""
        if isinstance(spec, ToolSpec):
            return spec
        if isinstance(spec, Mapping):
            fn = spec.get("function")
            inner: Mapping[str, Any] = fn if isinstance(fn, Mapping) else spec
            name, desc, params = inner.get("name"), inner.get("description"), inner.get("parameters")
        else:
            name = getattr(spec, "name", None)
            desc, params = getattr(spec, "description", ""), getattr(spec, "parameters", None)
        if not isinstance(name, str) or not name.strip():
            return None
        return cls(
            name=name.strip(),
            description=desc if isinstance(desc, str) else "",
            parameters=dict(params) if isinstance(params, Mapping) else {},
        )


def normalize_tools(specs: Sequence[Any]) -> list[ToolSpec]:
    """Usable tool specs in the given order; nameless entries dropped, repeated names kept once."""
    out: list[ToolSpec] = []
    seen: set[str] = set()
    for spec in specs or ():
        tool = ToolSpec.from_any(spec)
        if tool is not None and tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
    return out


def _args(raw: Any) -> Any:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)  # OpenAI-style arguments arrive as a JSON string
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping):
            return dict(parsed)
        if not raw.strip():
            return {}
    return {"value": raw}


def candidate_from(item: Any, tool_names: frozenset[str]) -> ActionCandidate | None:
    """One proposed action as an ActionCandidate, or None if it is not an object or names an unknown tool.

    `tool` null / "" / "none" means answering directly; `args` that is not an object becomes
    `{"value": args}` (a JSON-object string is parsed first).
    """
    if not isinstance(item, Mapping):
        return None
    tool = item.get("tool", item.get("tool_name", item.get("name")))
    if isinstance(tool, Mapping):  # {"tool": {"name": ..., "arguments": ...}}
        tool = tool.get("name")
    if tool is not None and not isinstance(tool, str):
        return None
    tool = (tool or "").strip()
    if tool.lower() in _NO_TOOL and tool not in tool_names:
        tool_name: str | None = None
    elif tool in tool_names:
        tool_name = tool
    else:
        return None
    raw_args = next((item[k] for k in ("args", "arguments", "tool_args", "parameters") if k in item), None)
    args = _args(raw_args)
    description = item.get("description", item.get("action", item.get("thought", "")))
    description = description.strip() if isinstance(description, str) else ""
    if not description:
        description = f"use {tool_name}" if tool_name else "answer directly"
    return ActionCandidate(description=description, tool_name=tool_name, tool_args=args)


def _dedupe_key(action: ActionCandidate) -> tuple[Any, ...]:
    args = json.dumps(action.tool_args, sort_keys=True, default=str)
    if action.tool_name is None:  # two direct answers differ by what they would say
        return (None, args, " ".join(action.description.lower().split()))
    return (action.tool_name, args)


def dedupe(actions: Sequence[ActionCandidate]) -> list[ActionCandidate]:
    """Actions in order, a repeat of an earlier one (same tool and args) dropped."""
    seen: set[tuple[Any, ...]] = set()
    out: list[ActionCandidate] = []
    for action in actions:
        key = _dedupe_key(action)
        if key not in seen:
            seen.add(key)
            out.append(action)
    return out


def parse_candidates(text: str, tool_names: frozenset[str], limit: int) -> list[ActionCandidate]:
    """Up to `limit` distinct candidates from a proposal reply ([] when nothing usable is in it).

    Takes the first JSON value in the reply that yields at least one candidate: an array of action objects,
    a single action object, or an object wrapping the array (`{"actions": [...]}` / `{"candidates": [...]}`).
    """
    for value in iter_json(text):
        items: list[Any]
        if isinstance(value, list):
            items = value
        elif isinstance(value, Mapping):
            wrapped = next((value[k] for k in ("actions", "candidates") if isinstance(value.get(k), list)), None)
            items = wrapped if wrapped is not None else [value]
        else:
            continue
        found = [c for c in (candidate_from(item, tool_names) for item in items) if c is not None]
        if found:
            return dedupe(found)[:limit]
    return []


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        f = float(value)
    elif isinstance(value, str):
        m = _NUMBER_RE.match(value)  # "7", "7/10", "7 out of 10"
        if m is None:
            return None
        f = float(m.group(1))
    else:
        return None
    return f if math.isfinite(f) else None


def rating_from_ten(value: float) -> float:
    """A 0–10 rating as a score in [0, 1] (out-of-range ratings clamped)."""
    return min(1.0, max(0.0, value / 10.0))


def parse_rating(text: str) -> tuple[float, JSON] | None:
    """`(score in [0, 1], the reply object)` from a reply rating something 0–10, or None if it has no rating.

    Prefers a JSON object with `score` (or `rating`); falls back to a `score: n` pattern in broken JSON, in
    which case the object is empty.
    """
    for value in iter_json(text):
        if isinstance(value, Mapping):
            raw = value.get("score", value.get("rating"))
            number = _number(raw)
            if number is not None:
                return rating_from_ten(number), dict(value)
    match = _SCORE_RE.search(text[:SCAN_CHARS]) if isinstance(text, str) else None
    if match is not None:
        number = _number(match.group(1))
        if number is not None:
            return rating_from_ten(number), {}
    return None


__all__ = [
    "ToolSpec",
    "candidate_from",
    "dedupe",
    "normalize_tools",
    "parse_candidates",
    "parse_rating",
    "rating_from_ten",
]
