"""What a tool-loop run reports (LoopEvent, LoopResult), the state it accumulates (LoopRun), and the small
pure helpers it records with. `ghost_agent.agent.loop` re-exports the public names."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.logging import get_logger
from ghost_agent.tools.base import ToolContext
from ghost_agent.tools.registry import ToolRegistry
from ghost_agent.trajectories.record import Step

log = get_logger("agent.loop")

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def call_key(tool: str, args: Mapping[str, Any]) -> str:
    """An identity for a call: the tool and its arguments in canonical JSON (key order does not matter)."""
    return tool + "\x00" + json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def evidence_of(tool: str, args: Mapping[str, Any], output: str, ok: bool) -> tuple[str, str, str, bool]:
    """A verifier evidence row: (tool, the code or command run — else the JSON arguments, output, ok)."""
    for key in ("code", "command"):
        value = args.get(key)
        if isinstance(value, str):
            return tool, value, output, ok
    return tool, json.dumps(args, sort_keys=True, ensure_ascii=False, default=str), output, ok


def has_model(scorer: Any) -> bool:
    """True when `scorer` has a loaded model right now (a broken duck-typed scorer means no model)."""
    try:
        return scorer is not None and getattr(scorer, "has_model", False) is True
    except Exception:  # a broken duck-typed scorer means "no model", not a failed turn
        return False


def message_of(reply: Any) -> Mapping[str, Any]:
    """The first choice's message of a `chat.completion` dict ({} when missing)."""
    try:
        message = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return {}
    return message if isinstance(message, Mapping) else {}


def arguments_text(raw: Any) -> str:
    """A native tool call's arguments as the JSON string the wire format carries."""
    if isinstance(raw, str):
        return raw
    return "{}" if raw is None else json.dumps(raw, ensure_ascii=False, default=str)


def primary_args(registry: ToolRegistry) -> dict[str, str]:
    """Tool → its single required argument (so `{"tool": "python", "args": "<code>"}` can be read)."""
    out: dict[str, str] = {}
    for name in registry.names:
        tool = registry.get(name)
        required = tool.parameters.get("required") if tool is not None else None
        if isinstance(required, list) and len(required) == 1 and isinstance(required[0], str):
            out[name] = required[0]
    return out


@dataclass
class LoopEvent:
    """Progress for streaming and logs: `step_start` (the step about to run, not yet with its result),
    `step_end` (the finished step) or `answer` (no step; `text` is the final answer's first line)."""

    kind: str
    step: Step | None
    text: str


@dataclass
class LoopResult:
    """What the loop produced.

    `aborted` is None, "loop" (loop guard) or "max_steps"; `llm_calls` counts every model request this loop
    made, MCTS's included; `usage` sums the `usage` of every response, the MCTS search's included;
    `evidence` is (tool, code-or-command, output as the model saw it, ok) per executed call; `recovered` is
    True when a step failed and a later one succeeded; `native_tools_used` is True when at least one native
    `tool_calls` entry was executed.
    """

    final_text: str
    steps: list[Step]
    aborted: str | None
    llm_calls: int
    usage: dict[str, int]
    evidence: list[tuple[str, str, str, bool]]
    recovered: bool
    native_tools_used: bool
    info: dict[str, Any] = field(default_factory=dict)  # strategy-specific facts for the trajectory's extra.agent
    logprobs: Any = None  # the reply's own logprobs, when the client asked and the reply is one generation


@dataclass
class LoopRun:
    """Everything one `ToolLoop.run` accumulates; `failing` maps the call key of each call that failed
    since the last success to its step index (the loop guard's memory)."""

    conversation: list[dict[str, Any]]
    tool_ctx: ToolContext
    user_request: str
    on_event: Callable[[LoopEvent], Awaitable[None]] | None = None
    steps: list[Step] = field(default_factory=list)
    evidence: list[tuple[str, str, str, bool]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0))
    failing: dict[str, int] = field(default_factory=dict)
    # the last call, when it succeeded (call key → step index): repeating it immediately is not re-run (it
    # cannot tell the model anything new); the second such repeat ends the tool phase
    succeeded: dict[str, int] = field(default_factory=dict)
    repeats: int = 0
    llm_calls: int = 0
    native_used: bool = False
    final_text: str | None = None
    aborted: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    # the client's messages as the bare model would get them: what a failed tool phase falls back to
    direct_messages: list[dict[str, Any]] = field(default_factory=list)

    def add_usage(self, usage: Any) -> None:
        """Add a response's `usage` (missing or non-integer counts are skipped)."""
        if not isinstance(usage, Mapping):
            return
        for key in USAGE_KEYS:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] += value

    async def emit(self, kind: str, step: Step | None, text: str) -> None:
        """Await `on_event`; its exceptions are logged and swallowed (a broken client stream must not end
        the turn; cancellation, not an Exception, still propagates)."""
        if self.on_event is None:
            return
        try:
            await self.on_event(LoopEvent(kind=kind, step=step, text=text))
        except Exception as exc:
            log.warning("agent_event_error", kind=kind, error_type=type(exc).__name__, error=str(exc))

    @property
    def recovered(self) -> bool:
        """True when some step failed and a later step succeeded."""
        failed = False
        for step in self.steps:
            if not step.ok:
                failed = True
            elif failed:
                return True
        return False

    def result(self) -> LoopResult:
        """The finished run as a LoopResult."""
        return LoopResult(
            final_text=self.final_text or "",
            steps=list(self.steps),
            aborted=self.aborted,
            llm_calls=self.llm_calls,
            usage=dict(self.usage),
            evidence=list(self.evidence),
            recovered=self.recovered,
            native_tools_used=self.native_used,
            info=dict(self.info),
        )


__all__ = [
    "USAGE_KEYS",
    "LoopEvent",
    "LoopResult",
    "LoopRun",
    "arguments_text",
    "call_key",
    "evidence_of",
    "has_model",
    "message_of",
    "primary_args",
]
