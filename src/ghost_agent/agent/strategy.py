"""What a strategy (the tool loop, answer-first) is given (StrategyContext), what it reports (LoopEvent,
LoopResult, RunInfo), the state it accumulates (LoopRun), and the small pure helpers it records with.
`ghost_agent.agent.tool_loop.loop` re-exports the public names."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.logging import get_logger
from ghost_agent.text.dates import CalendarAnswer
from ghost_agent.text.request_kind import RequestKind
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


@dataclass(frozen=True)
class StructuredCheck:
    """What `ensure` did to a reply under `response_format`, for the record: whether it holds now, whether a
    repair round made it hold, and (after a failed check) the problems found, at most five."""

    valid: bool
    repaired: bool
    errors: list[str] | None = None

    def to_json(self) -> JSON:
        """As recorded (`extra.structured`, `extra.agent.structured`) and logged: {valid, repaired[, errors]}."""
        out: JSON = {"valid": self.valid, "repaired": self.repaired}
        if self.errors is not None:
            out["errors"] = self.errors
        return out


@dataclass
class LoopEvent:
    """Progress for streaming and logs: `step_start` (the step about to run, not yet with its result),
    `step_end` (the finished step) or `answer` (no step; `text` is the final answer's first line)."""

    kind: str
    step: Step | None
    text: str


OnEvent = Callable[[LoopEvent], Awaitable[None]]


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy is given of the turn.

    `messages`: the client's messages; `tool_ctx`: the session's tools (workspace, sandbox, limits, lesson
    search); `user_request`: the last user message's text; `kind`: what it asks for (`request_kind.classify`,
    once per turn); `extra_system`: the per-turn system text (the selfhood prefix); `notes`: the memory bus's
    lessons block, untrusted data shown in front of the last user message (`prompting.with_notes`);
    `client_body`: the client's request (answer-first drafts with its sampling parameters); `preferences`: the
    user's stated preferences, their quoted words (answer-first applies them to its reply); `on_event`: awaited
    at each step start and end and at the answer; what it raises is logged (`agent_event_error`) and otherwise
    ignored, so a broken client stream cannot break the turn (cancellation still propagates).
    """

    messages: list[JSON]
    tool_ctx: ToolContext
    user_request: str
    kind: RequestKind
    extra_system: str = ""
    notes: str = ""
    client_body: Mapping[str, Any] = field(default_factory=dict)
    preferences: Sequence[str] = ()
    on_event: OnEvent | None = None


@dataclass(frozen=True)
class CaseTally:
    """How many of one kind of test case a code answer passed; `failing` (the user's cases only) describes the
    first five it failed."""

    passed: int
    total: int
    failing: list[str] | None = None

    def to_json(self) -> JSON:
        out: JSON = {"passed": self.passed, "total": self.total}
        if self.failing is not None:
            out["failing"] = self.failing
        return out


@dataclass(frozen=True)
class CodeOutcome:
    """The candidate a code answer ended with (`draft`, `revision` or `sample`) and the cases it passed."""

    chosen: str
    user_cases: CaseTally
    model_cases: CaseTally


@dataclass
class ComputedDay:
    """A calendar answer computed by a program (the question asked for a date or a weekday): what the program
    printed, what the draft arrived at (None: it stated none), and the second program's after a disagreement —
    each as `text.dates` writes it (`2025-04-20`, `Sunday`)."""

    printed: str
    draft: str | None
    second: str | None = None
    answer: CalendarAnswer | None = field(default=None, compare=False)  # `printed` as read (not recorded)

    def to_json(self) -> JSON:
        return {"printed": self.printed, "draft": self.draft, "second": self.second}


@dataclass
class Computed:
    """A quantitative answer computed by a program: its number (`value`, None when it printed none), the
    draft's own final number, whose program it was (`draft` or `program`); after a disagreement the second
    program's number (`second`, asked when `voted`), and `trusted` when it agreed with the first. `repair`:
    the first program failed and was repaired from its traceback ("ok" when the fix ran, "failed" if not);
    `data`: how many pasted data blocks were saved for the program to read. `day`: the answer was a date or a
    weekday, compared as one (`value`, `draft` and `second` then stay None)."""

    value: float | None
    draft: float | None
    source: str
    voted: bool = False
    second: float | None = None
    trusted: bool = False
    repair: str | None = None
    data: int = 0
    day: ComputedDay | None = None

    def to_json(self) -> JSON:
        out: JSON = {"value": self.value, "draft": self.draft, "source": self.source}
        if self.day is not None:
            out["day"] = self.day.to_json()
        if self.repair is not None:
            out["repair"] = self.repair
        if self.data:
            out["data"] = self.data
        if self.voted:
            out["second"] = self.second
        if self.trusted:
            out["trusted"] = True
        return out


@dataclass(frozen=True)
class PreferencesApplied:
    """The rewrite for the user's stated preferences: how many, whether it was kept, why not; then the check:
    P(the reply follows them) as judged (`followed`, None when not judged or unreadable), and whether the one
    repair it called for was kept (`repaired`, None when none was asked)."""

    count: int
    applied: bool
    reason: str
    followed: float | None = None
    repaired: bool | None = None
    rules: tuple[str, ...] = ()  # the preferences applied by rule (`text/format_rules.py`), as "kind form"

    def to_json(self) -> JSON:
        out: JSON = {"count": self.count, "applied": self.applied, "reason": self.reason}
        if self.rules:
            out["rules"] = list(self.rules)
        if self.followed is not None:
            out["followed"] = round(self.followed, 4)
        if self.repaired is not None:
            out["repaired"] = self.repaired
        return out


@dataclass(frozen=True)
class ModelCall:
    """One model call a strategy made: what for, how long it took, its tokens (the status page's turn tree)."""

    purpose: str
    ms: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @classmethod
    def of(cls, purpose: str, ms: float, usage: Any) -> ModelCall:
        return cls(purpose, round(ms, 1), wire.token_count(usage, "prompt_tokens"),
                   wire.token_count(usage, "completion_tokens"))

    def to_json(self) -> JSON:
        return {"purpose": self.purpose, "ms": self.ms, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


@dataclass
class RunInfo:
    """What a strategy reports beyond the loop's own counts, recorded in the trajectory's `extra.agent`.

    Answer-first: the structured-output check; why checks were skipped (no sandbox; code in another language than
    Python, which no check runs); the code candidate chosen and the cases it passed; the computed number; the forms
    fixed; the preferences rewrite; the request's kind; whether the reply differs from the draft, and then the
    draft's start (redacted, cut). Tool loop: why the turn fell back to the bare model's answer (`fallback`).
    None / empty = not reported.
    """

    structured: StructuredCheck | None = None
    checks_skipped: str | None = None
    code: CodeOutcome | None = None
    computed: Computed | None = None
    form_fixed: list[str] = field(default_factory=list)
    preferences: PreferencesApplied | None = None
    kind: str | None = None
    revised: bool | None = None
    draft: str | None = None
    fallback: str | None = None
    calls: list[ModelCall] = field(default_factory=list)  # answer-first's model calls, in order, timed

    def to_json(self) -> JSON:
        """The recorded keys, each only when reported, in the order the strategies report them."""
        out: JSON = {}
        if self.structured is not None:
            out["structured"] = self.structured.to_json()
        if self.checks_skipped is not None:
            out["checks_skipped"] = self.checks_skipped
        if self.code is not None:
            out["chosen"] = self.code.chosen
            out["user_cases"] = self.code.user_cases.to_json()
            out["model_cases"] = self.code.model_cases.to_json()
        if self.computed is not None:
            out["computed"] = self.computed.to_json()
        if self.form_fixed:
            out["form_fixed"] = list(self.form_fixed)
        if self.preferences is not None:
            out["preferences"] = self.preferences.to_json()
        if self.kind is not None:
            out["kind"] = self.kind
        if self.revised is not None:
            out["revised"] = self.revised
        if self.draft is not None:
            out["draft"] = self.draft
        if self.fallback is not None:
            out["fallback"] = self.fallback
        if self.calls:
            out["calls"] = [c.to_json() for c in self.calls]
        return out


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
    info: RunInfo = field(default_factory=RunInfo)  # strategy-specific facts for the trajectory's extra.agent
    logprobs: Any = None  # the reply's own logprobs, when the client asked and the reply is one generation


class Strategy(Protocol):
    """An agent turn's way to its reply (`loop.ToolLoop`, `answer_first.AnswerFirst`)."""

    async def run(self, ctx: StrategyContext) -> LoopResult:
        """The reply and what it took; a BackendError the strategy cannot answer without propagates."""


@dataclass
class LoopRun:
    """Everything one `ToolLoop.run` accumulates; `failing` maps the call key of each call that failed
    since the last success to its step index (the loop guard's memory)."""

    conversation: list[dict[str, Any]]
    tool_ctx: ToolContext
    user_request: str
    on_event: OnEvent | None = None
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
    info: RunInfo = field(default_factory=RunInfo)
    # the client's messages as the bare model would get them: what a failed tool phase falls back to
    direct_messages: list[dict[str, Any]] = field(default_factory=list)

    def add_usage(self, usage: Any) -> None:
        """Add a response's `usage` (missing or non-integer counts are skipped)."""
        for key in USAGE_KEYS:
            self.usage[key] += wire.token_count(usage, key) or 0

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
            info=replace(self.info),
        )


__all__ = [
    "USAGE_KEYS",
    "CaseTally",
    "CodeOutcome",
    "Computed",
    "LoopEvent",
    "LoopResult",
    "LoopRun",
    "ModelCall",
    "OnEvent",
    "PreferencesApplied",
    "RunInfo",
    "Strategy",
    "StrategyContext",
    "arguments_text",
    "call_key",
    "evidence_of",
    "has_model",
    "message_of",
    "primary_args",
]
