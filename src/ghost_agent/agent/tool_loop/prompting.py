"""The tool loop's conversation: the system prompt, the format reminder, the final-answer nudges.

The system message starts with a prefix that depends only on the tool registry (`system_prefix`), so it is
byte-identical from turn to turn and the backend's prompt cache keeps it; what varies (the selfhood prefix,
the client's own system prompt) comes after it. Memory-bus lessons are not system text at all: they are
untrusted data, shown as a delimited notes block in front of the last user message (`with_notes`), so the
whole conversation before that message stays cacheable too and a lesson never speaks with system authority.
Prompt text lives in `prompts/agent_system.txt` and `prompts/agent_final.txt`, loaded with the MCTS loader
(`[section]` files of `string.Template`s).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ghost_agent.text.prompts import NOTHING_YET, load_prompt
from ghost_agent.tools.base import one_line
from ghost_agent.tools.registry import ToolRegistry
from ghost_agent.trajectories.record import Step

Message = dict[str, Any]

CLIENT_INSTRUCTIONS = "Instructions from the client:"
SUMMARY_ARGS_CHARS = 160
SUMMARY_RESULT_CHARS = 200
_SYSTEM_ROLES = frozenset({"system", "developer"})


def system_prefix(registry: ToolRegistry) -> str:
    """The stable start of the system message: role, tools (`describe_for_prompt`) and the action protocol.

    A pure function of the registry's tools, which the registry describes sorted by name.
    """
    tools = registry.describe_for_prompt() or "(no tools are available: answer directly)"
    return load_prompt("agent_system")["system"].substitute(tools=tools)


def content_text(content: Any) -> str:
    """A message's content as text: a string as is, the text parts of a content-part list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def build_conversation(
    prefix: str, extra_system: str, client_messages: Sequence[Any], notes: str = ""
) -> list[Message]:
    """The loop's opening conversation.

    One system message: `prefix`, then `extra_system` (the selfhood prefix) when non-empty, then the client's
    system/developer content under "Instructions from the client:". Then the client's other messages in
    order (malformed entries are dropped), the last user message carrying the `notes` block (`with_notes`).
    """
    client_system = [
        content_text(m.get("content")).strip()
        for m in client_messages
        if isinstance(m, Mapping) and m.get("role") in _SYSTEM_ROLES
    ]
    parts = [prefix]
    if extra_system.strip():
        parts.append(extra_system.strip())
    client_text = "\n\n".join(t for t in client_system if t)
    if client_text:
        parts.append(f"{CLIENT_INSTRUCTIONS}\n{client_text}")
    conversation: list[Message] = [{"role": "system", "content": "\n\n".join(parts)}]
    conversation.extend(
        dict(m) for m in client_messages if isinstance(m, Mapping) and m.get("role") not in _SYSTEM_ROLES
    )
    return with_notes(conversation, notes)


def direct_messages(extra_system: str, client_messages: Sequence[Any], notes: str = "") -> list[Message]:
    """The client's messages as the fast path sends them: the per-turn system text (selfhood) in front when
    present, the `notes` block (lessons) in the last user message (`with_notes`). What the bare model answers
    (the answer-first draft, the tool loop's fallback)."""
    out: list[Message] = [dict(m) for m in client_messages if isinstance(m, Mapping)]
    if extra_system.strip():
        out.insert(0, {"role": "system", "content": extra_system.strip()})
    return with_notes(out, notes)


def with_notes(messages: Sequence[Message], notes: str) -> list[Message]:
    """`messages` (copied; the input is never changed) with the `notes` block put in front of the text of the
    last user message, separated by a blank line; a content-part list gets it as a leading text part.

    Why there: the notes are data the user's request may use, not instructions, so they go in the user turn,
    clearly delimited (`memory/bus.py`), never in a system message; and last, so the byte-identical system
    prefix and the whole earlier conversation stay a cacheable prefix. No separate message: some chat
    templates reject two user messages in a row. Without notes, or a last user message with text content,
    nothing is added.
    """
    out = [dict(m) for m in messages]
    notes = notes.strip()
    if not notes:
        return out
    last = next((m for m in reversed(out) if m.get("role") == "user"), None)
    content = last.get("content") if last is not None else None
    if last is not None and isinstance(content, str):
        last["content"] = f"{notes}\n\n{content}"
    elif last is not None and isinstance(content, list):
        last["content"] = [{"type": "text", "text": notes}, *content]
    return out


def format_reminder(reason: str, tool_names: Sequence[str]) -> str:
    """The user message sent after an unusable reply: what was wrong, the protocol, the tool names."""
    names = ", ".join(tool_names) or "(none)"
    return load_prompt("agent_system")["retry"].substitute(reason=reason.rstrip("."), tool_names=names)


def final_nudge(kind: Literal["max_steps", "answer"]) -> str:
    """The "answer now, no more tools" user message: after the step budget, or when MCTS chose to answer."""
    return load_prompt("agent_final")[kind].substitute()


def tool_result_message(tool: str, result: str) -> str:
    """How a tool result reaches the model on the JSON-protocol path (a user message)."""
    return f"Tool result ({tool}):\n{result}"


def repeat_reminder(step_number: int, result_preview: str) -> str:
    """What the model gets instead of re-running a call that already succeeded unchanged."""
    return (
        f"You already made exactly this call in step {step_number}; its result was:\n{result_preview}\n"
        "Use that result to answer now (plain text), or do something different."
    )


def plan_summary(steps: Sequence[Step]) -> str:
    """The turn's progress as text for the MCTS prompts: one line per step (tool, args, outcome)."""
    if not steps:
        return NOTHING_YET
    lines = []
    for step in steps:
        args = one_line(json.dumps(step.tool_args, ensure_ascii=False, default=str), SUMMARY_ARGS_CHARS)
        outcome = "ok" if step.ok else f"FAILED ({one_line(step.error or 'error', SUMMARY_RESULT_CHARS)})"
        result = one_line(step.result_preview, SUMMARY_RESULT_CHARS)
        lines.append(f"{step.i + 1}. {step.tool_name} {args} -> {outcome}: {result}")
    return "\n".join(lines)


__all__ = [
    "CLIENT_INSTRUCTIONS",
    "build_conversation",
    "content_text",
    "direct_messages",
    "final_nudge",
    "format_reminder",
    "plan_summary",
    "system_prefix",
    "tool_result_message",
    "with_notes",
]
