"""The eval harness's records: a task, one task's outcome, a suite's result (DESIGN §7, seed 001 "Running the eval").

A task is a prompt plus a deterministic verifier named from `eval/verifiers.py` (with its expected value and
keyword arguments). A runner produces the model's reply; the verifier, wrapped by the reward adapter
(`learned/reward.py`), turns it into a `Reward` tuple. `SuiteResult` is the schema-tagged JSON that `freeze`
writes and `compare` reads.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ghost_agent.jsonsafe import JSON

RESULT_SCHEMA = "ghost.eval.suite_result.v1"


@dataclass(frozen=True)
class EvalTask:
    """One prompt and how to check the reply.

    `verifier` names a function in `eval/verifiers.py` (e.g. "numeric_match", "code_tests"); `expected` is
    what it compares against (for code_tests: the test program); `kwargs` go to the verifier (filtered to what
    it accepts). `regression` tasks are the ones the stub runner can pass (it echoes the prompt). `files`
    (relative name -> text) are written into the task's session workspace before the prompt is sent (the
    http runner needs its `workspace_root` for that).
    """

    id: str
    suite: str
    cluster: str
    prompt: str
    verifier: str
    expected: Any = None
    kwargs: JSON = field(default_factory=dict)
    regression: bool = False
    system: str | None = None  # an optional system message sent with the prompt
    files: dict[str, str] = field(default_factory=dict)  # relative name -> content, placed in the workspace

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass
class TaskOutcome:
    """What one task did: the reply, its reward, the time it took and the trajectory it left (http runner)."""

    task_id: str
    cluster: str
    passed: bool
    reward: JSON  # Reward.to_dict(): {success, failure_class, auxiliary, scalar}
    duration_ms: float
    reply: str = ""
    trajectory_id: str | None = None
    error: str | None = None

    def to_dict(self) -> JSON:
        """A JSON-ready dict (the reply clipped to keep result files small)."""
        out = asdict(self)
        out["reply"] = self.reply[:2000]
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> TaskOutcome:
        """Parse a stored outcome (unknown keys are ignored)."""
        return cls(
            task_id=str(data["task_id"]),
            cluster=str(data.get("cluster") or ""),
            passed=bool(data.get("passed")),
            reward=dict(data.get("reward") or {}),
            duration_ms=float(data.get("duration_ms") or 0.0),
            reply=str(data.get("reply") or ""),
            trajectory_id=data.get("trajectory_id"),
            error=data.get("error"),
        )


@dataclass
class SuiteResult:
    """A suite run: every task's outcome, pass rates overall and per cluster, and how the run was made."""

    suite: str
    outcomes: list[TaskOutcome]
    metadata: JSON = field(default_factory=dict)  # runner, model, daemon version, settings hash, started_at, …

    @property
    def pass_rate(self) -> float:
        """Passed / total (0.0 for an empty run)."""
        return sum(o.passed for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def cluster_pass_rates(self) -> dict[str, float]:
        """Pass rate per cluster, clusters sorted by name."""
        by: dict[str, list[bool]] = {}
        for o in self.outcomes:
            by.setdefault(o.cluster, []).append(o.passed)
        return {c: sum(v) / len(v) for c, v in sorted(by.items())}

    def summary(self) -> JSON:
        """The headline figures: suite, pass rate, passed, total, pass rate per cluster."""
        return {
            "suite": self.suite,
            "pass_rate": round(self.pass_rate, 6),
            "passed": sum(o.passed for o in self.outcomes),
            "total": len(self.outcomes),
            "clusters": {c: round(r, 6) for c, r in self.cluster_pass_rates().items()},
        }

    def to_dict(self) -> JSON:
        """The schema-tagged JSON document `freeze` writes."""
        return {
            "schema": RESULT_SCHEMA,
            **self.summary(),
            "metadata": self.metadata,
            "outcomes": [o.to_dict() for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: Any) -> SuiteResult:
        """Parse a stored result; ValueError with the reason for anything that is not one."""
        if not isinstance(data, dict) or data.get("schema") != RESULT_SCHEMA:
            raise ValueError(f"not a suite result (expected schema {RESULT_SCHEMA!r})")
        outcomes = data.get("outcomes")
        if not isinstance(outcomes, list):
            raise ValueError("suite result has no outcomes list")
        return cls(
            suite=str(data.get("suite") or ""),
            outcomes=[TaskOutcome.from_dict(o) for o in outcomes if isinstance(o, dict)],
            metadata=dict(data.get("metadata") or {}),
        )


__all__ = ["EvalTask", "RESULT_SCHEMA", "SuiteResult", "TaskOutcome"]
