"""What a turn's stages leave for the stages after them, the finishers and the record: `Turn.state`.

One typed field per fact, grouped by the stage that fills it (module docstrings say who reads it). What is
recorded in the trajectory keeps the shape it always had on disk: `record_extra`, `router_json` and
`verifier_json` write it, each in its old key order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ghost_agent.jsonsafe import JSON

if TYPE_CHECKING:
    from ghost_agent.agent.strategy import RunInfo, StructuredCheck
    from ghost_agent.agent.verifier import Verdict
    from ghost_agent.llm.stream_fold import ChunkFolder
    from ghost_agent.text.request_kind import RequestKind
    from ghost_agent.trajectories.record import Step

# What a turn that never met the router records as its `router` (a pipeline without the router stage).
PASSTHROUGH_ROUTE: JSON = {"decision": "fast", "p": None, "model": None, "reason": "passthrough"}


@dataclass(frozen=True)
class TurnRoute:
    """The router stage's decision (`agent/stages/routing.py`), recorded as `trajectory.router`.

    `confidence` is None unless the learned model chose the route (see `router.dispatch.RouterDecision`).
    """

    decision: Literal["fast", "agent"]
    p: float | None
    reason: str
    model: str | None
    confidence: float | None

    @property
    def agent(self) -> bool:
        """True when the turn goes to the agent path (tool loop or answer-first)."""
        return self.decision == "agent"

    def to_json(self) -> JSON:
        return {"decision": self.decision, "p": self.p, "reason": self.reason, "model": self.model,
                "confidence": self.confidence}


@dataclass
class ChoiceState:
    """Choice `index` of an `n > 1` request (`agent/stages/choices.py`), recorded as `extra.choice`; `started`,
    `delivered` and `error` (what it raised itself) decide what it is finished with."""

    index: int
    n: int
    trajectory_ids: list[str | None]
    started: bool = False
    delivered: bool = False
    error: Exception | None = None

    def to_json(self) -> JSON:
        return {"index": self.index, "n": self.n, "trajectory_ids": self.trajectory_ids}


@dataclass(frozen=True)
class ClientToolsReport:
    """How a fast-path reply's calls to the client's own tools were delivered (`agent/compat/client_tools.py`),
    recorded as `extra.client_tools`: the backend's native `tool_calls` (only their count), or calls parsed
    from the text with the repair / require rounds spent, schema errors and what did not parse."""

    native: bool
    calls: int
    names: list[str] = field(default_factory=list)
    rounds: list[str] = field(default_factory=list)
    schema_errors: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)

    def to_json(self) -> JSON:
        if self.native:
            return {"native": True, "calls": self.calls}
        return {"native": False, "calls": self.calls, "names": self.names, "rounds": self.rounds,
                "schema_errors": self.schema_errors, "unparsed": self.unparsed}


@dataclass(frozen=True)
class AgentCost:
    """What an agent turn spent: model calls (the verifier's included), tokens, sandbox runs."""

    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    sandbox_runs: int

    def to_json(self) -> JSON:
        return {"llm_calls": self.llm_calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "sandbox_runs": self.sandbox_runs}


@dataclass(frozen=True)
class AgentReport:
    """An agent turn that produced its reply, recorded as `extra.agent` (the strategy's own `info` after the
    loop's counts)."""

    strategy: str
    aborted: str | None
    llm_calls: int
    native_tools: bool
    recovered: bool
    ms: float
    cost: AgentCost
    info: RunInfo

    def to_json(self) -> JSON:
        return {"strategy": self.strategy, "aborted": self.aborted, "llm_calls": self.llm_calls,
                "native_tools": self.native_tools, "recovered": self.recovered, "ms": self.ms,
                "cost": self.cost.to_json(), **self.info.to_json()}


@dataclass(frozen=True)
class AgentFailure:
    """An agent turn that died on a backend error, recorded as `extra.agent`."""

    strategy: str
    error: str

    def to_json(self) -> JSON:
        return {"strategy": self.strategy, "error": self.error}


@dataclass
class TurnState:
    """The facts one turn's stages hand on, by the stage that sets them. Defaults = not (yet) known."""

    # prepare (`stages.PrepareStage`) → `stages.ReplyModelStage`: the model name every reply carries
    reply_model: str | None = None

    # correction (`correction.CorrectionStage`): the earlier turn this message corrected; the reflections its
    # hook left to start once this reply is delivered (`agent.reflection_scheduler`: each call starts one; its finisher
    # makes the calls)
    corrected_prior: str | None = None
    reflections_pending: list[Callable[[], object]] = field(default_factory=list)

    # correction, then memory: the user's stated preferences for this reply, their quoted words (what this very
    # message states first, then the preference lessons shown); the router and answer-first apply them
    preferences: list[str] = field(default_factory=list)
    # correction: this message corrected turn X and stated a preference about request R — (X, R); the record
    # stage stashes it with this reply, which becomes the lesson's demonstration if the user accepts it
    demonstrates: tuple[str, str] | None = None

    # memory (`memory_bus.MemoryStage`): the selfhood wake-up prefix (per-turn system text), the lessons block
    # (untrusted data for the last user message, never system text) and what the block showed, for the record;
    # the shown preference lessons' demonstrations (an examples block of replies the user accepted)
    selfhood_prefix: str = ""
    memory_block: str = ""
    memory_block_by_rule: str | None = None  # the block without the preferences a rule applies (None: none shown)
    lessons_shown: list[JSON] | None = None
    demos_block: str = ""
    demonstrations_shown: list[JSON] | None = None

    # experience (`experience.ExperienceStage`): the worked-examples block (untrusted data, shown with the lessons
    # block) and which examples it showed (their ids are what a finisher credits or blames: `examples_ids`)
    examples_block: str = ""
    examples_shown: list[JSON] | None = None

    # router (`routing.RouterStage`)
    route: TurnRoute | None = None

    # `n > 1` (`choices.start_choices`): which choice this turn is
    choice: ChoiceState | None = None

    # the fast path (`respond`, `stages.BackendCallStage`, `client_tools`): the streamed reply as folded for the
    # record, the client-tool delivery, the structured-output check
    folder: ChunkFolder | None = None
    client_tools: ClientToolsReport | None = None
    structured: StructuredCheck | None = None

    # the agent path (`respond.AgentTurn`): the request's kind (classified once per turn), the strategy's report,
    # its steps, the reply text and its logprobs (moved into the completion), the verdict (`verifier_source`
    # "execution" when the request's own examples judged it; `verifier_called`: a verifier model call was made),
    # lessons retracted after a refutation, the lesson a confirmed recovery teaches (`learn.LearnOnRecovery`)
    request_kind: RequestKind | None = None
    agent: AgentReport | AgentFailure | None = None
    steps: list[Step] = field(default_factory=list)
    final_response: str | None = None
    logprobs: JSON | None = None
    verifier: Verdict | None = None
    verifier_source: str | None = None
    verifier_called: bool = False
    lessons_retracted: int | None = None
    lesson_candidate: dict[str, str] | None = None

    @property
    def notes(self) -> str:
        """What goes in front of the last user message: the lessons block, the demonstrations of the preference
        lessons in it, then the worked-examples block."""
        return self.notes_for(by_rule=False)

    def notes_for(self, *, by_rule: bool) -> str:
        """`notes`, for a turn that applies the preferences of a known kind by rule (`by_rule`: their lessons left
        out of the lessons block) or not."""
        lessons = self.memory_block_by_rule if by_rule and self.memory_block_by_rule is not None else self.memory_block
        return "\n\n".join(block for block in (lessons, self.demos_block, self.examples_block) if block)

    @property
    def examples_ids(self) -> list[str]:
        """The ids of the worked examples this turn was shown."""
        return [str(ref["id"]) for ref in self.examples_shown or ()]

    def router_json(self) -> JSON:
        """`trajectory.router`."""
        return self.route.to_json() if self.route is not None else dict(PASSTHROUGH_ROUTE)

    def verifier_json(self) -> JSON | None:
        """`trajectory.verifier`: the verdict's record, with its `source` when not the verifier model."""
        if self.verifier is None:
            return None
        out = self.verifier.to_dict()
        if self.verifier_source is not None:
            out["source"] = self.verifier_source
        return out

    def record_extra(self) -> JSON:
        """What the state adds to `trajectory.extra`, each key only when known, in the order always written."""
        extra: JSON = {}
        if self.lessons_shown is not None:
            extra["lessons_shown"] = self.lessons_shown
        if self.demonstrations_shown is not None:
            extra["demonstrations_shown"] = self.demonstrations_shown
        if self.examples_shown is not None:
            extra["examples_shown"] = self.examples_shown
        if self.agent is not None:
            extra["agent"] = self.agent.to_json()
        if self.corrected_prior is not None:
            extra["corrected_prior"] = self.corrected_prior
        if self.lessons_retracted is not None:
            extra["lessons_retracted"] = self.lessons_retracted
        if self.choice is not None:
            extra["choice"] = self.choice.to_json()
        if self.client_tools is not None:
            extra["client_tools"] = self.client_tools.to_json()
        if self.structured is not None:
            extra["structured"] = self.structured.to_json()
        return extra


__all__ = [
    "PASSTHROUGH_ROUTE",
    "AgentCost",
    "AgentFailure",
    "AgentReport",
    "ChoiceState",
    "ClientToolsReport",
    "TurnRoute",
    "TurnState",
]
