"""One self-play pass: pick → generate → the agent's own turn → validate → record → count (DESIGN §8).

The turn is the one a chat request runs, in-process, run by the host (`PracticeHost.practice_turn`: the server
implements it, so nothing here imports the agent or the server). The host writes the task's files into a
fresh session workspace, runs the turn at low priority (a user request cancels it, and the pass ends as
yielded), hands the reply and that workspace to `grade`, and records the trajectory with what `grade`
returned: source `self_play`, the cluster, outcome PASSED/FAILED (a validator's verdict, the "self" reward
source), and `extra.selfplay` {template, seed, difficulty, attempt, reason, reward, detail}. A reward that
says the machinery broke (CRASH, TIMEOUT) leaves the outcome UNKNOWN: noise is not a lesson.

Every passing reply goes into the experience bank when one is given (`selfplay/experience.py`): the task's
request and the verified answer, a worked example for similar requests later. A practice turn may itself be
shown examples of other tasks (never of its own: the experience stage leaves those out).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.reward import Reward
from ghost_agent.logging import get_logger
from ghost_agent.sandbox.base import SandboxBackend
from ghost_agent.selfplay.checks import CheckEnv, validate
from ghost_agent.selfplay.experience import ExperienceBank
from ghost_agent.selfplay.frontier import FrontierTracker, Pick, choose, cluster_evidence, engaged
from ghost_agent.selfplay.task import Task, generate
from ghost_agent.selfplay.templates import by_cluster, find
from ghost_agent.trajectories.collector import TrajectoryCollector

log = get_logger("selfplay")


@dataclass(frozen=True)
class Grade:
    """What the host records for a graded turn."""

    outcome: str  # "passed" | "failed" | "unknown"
    cluster: str
    labels: JSON  # merged into the trajectory's extra: {"selfplay": {...}}
    reward: Reward


# (reply text, the session workspace after the turn, finish_reason) -> the grade
Grader = Callable[[str, Path | None, str | None], Awaitable[Grade]]


@dataclass
class PracticeTurn:
    """What the host reports of one practice turn."""

    reply: str
    trajectory_id: str | None
    grade: Grade | None
    seconds: float


class PracticeHost(Protocol):
    """What a pass needs from the daemon (the server's `AppContext` provides it)."""

    async def practice_turn(
        self, prompt: str, *, session_id: str, files: dict[str, str], grade: Grader, show_examples: bool = True
    ) -> PracticeTurn:
        """Run the chat turn on `prompt` in a fresh workspace holding `files`, grade it, record it
        (`show_examples=False`: without worked examples from the experience bank)."""
        ...


@dataclass
class Attempt:
    """One attempt's summary (for progress bars, the phase result and `selfplay run`)."""

    task_id: str
    cluster: str
    attempt: int
    passed: bool
    failure_class: str
    seconds: float
    reason: str
    trajectory_id: str | None = None


@dataclass
class PassReport:
    """What one pass did."""

    attempts: list[Attempt] = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(a.passed for a in self.attempts)

    def to_dict(self) -> JSON:
        return {
            "tasks": len(self.picks), "attempts": len(self.attempts), "passed": self.passed,
            "by_cluster": {c: [sum(a.passed for a in self.attempts if a.cluster == c),
                               sum(1 for a in self.attempts if a.cluster == c)]
                           for c in sorted({a.cluster for a in self.attempts})},
        }


def session_for(task: Task, attempt: int) -> str:
    """A session id of its own per attempt: a fresh workspace, and no lesson of another session leaks in."""
    digest = hashlib.sha256(task.id.encode()).hexdigest()[:12]
    return f"selfplay-{digest}-{attempt}"


def grader(task: Task, pick: Pick, attempt: int, sandbox: SandboxBackend) -> Grader:
    """The grade of one attempt at `task`: its check run (in a thread: it may run code in the sandbox) on the
    reply, with the turn's workspace for files the turn's tools wrote."""

    async def grade(reply: str, workspace: Path | None, finish_reason: str | None) -> Grade:
        env = CheckEnv(sandbox=sandbox, files=task.files, workspace=workspace)
        reward = await asyncio.to_thread(validate, task.check, reply, env, finish_reason=finish_reason)
        outcome = ("passed" if reward.success else "failed") if reward.is_informational else "unknown"
        labels: JSON = {"selfplay": {
            "task": task.id, "template": task.template, "seed": task.seed, "difficulty": task.difficulty,
            "attempt": attempt, "reason": pick.get("reason"), "reward": reward.to_dict(),
            "check": task.check.to_dict(), "detail": reward.auxiliary.get("detail", ""),
        }}
        return Grade(outcome=outcome, cluster=task.cluster, labels=labels, reward=reward)

    return grade


async def practise(
    host: PracticeHost,
    tracker: FrontierTracker,
    sandbox: SandboxBackend,
    rng: random.Random,
    *,
    tasks: int,
    attempts: int,
    cluster: str | None = None,
    scorer: object = None,
    collector: object = None,
    frontier: bool = True,
    uniform_prob: float = 0.2,
    check_yield: Callable[[], None] = lambda: None,
    on_attempt: Callable[[Attempt], Any] | None = None,
    bank: ExperienceBank | None = None,
    show_examples: bool = True,
) -> PassReport:
    """Set and solve up to `tasks` tasks, `attempts` each (in `cluster` only, when given); the tracker is
    saved after every attempt, so a pass cut short keeps what it learned. `check_yield` runs between steps
    (the phase raises there when a user request is in flight). A passing reply is kept in `bank`;
    `show_examples=False` runs the turns without worked examples."""
    templates = {c: [t.name for t in ts] for c, ts in by_cluster().items() if cluster is None or c == cluster}
    if not templates:
        raise ValueError(f"no templates for cluster {cluster!r}")
    report = PassReport()
    # The store is read once per pass, off the event loop (a big home is a long scan), not once per pick.
    evidence = None
    if frontier and isinstance(collector, TrajectoryCollector) and engaged(scorer, collector):
        evidence = await asyncio.to_thread(cluster_evidence, collector.iter_trajectories(), templates)
    for _ in range(tasks):
        check_yield()
        pick = choose(tracker, rng, templates, scorer=scorer, collector=collector, frontier=frontier,
                      uniform_prob=uniform_prob, evidence=evidence)
        if pick is None:
            log.info("selfplay_nothing_left", saturated=tracker.list_saturated_clusters())
            break
        report.picks.append(pick)
        task = generate(find(pick["cluster"], pick["template"]), pick["seed"], pick["difficulty"])
        for attempt in range(attempts):
            check_yield()
            started = time.perf_counter()
            turn = await host.practice_turn(task.prompt, session_id=session_for(task, attempt), files=task.files,
                                            grade=grader(task, pick, attempt, sandbox), show_examples=show_examples)
            grade = turn.grade
            passed = grade is not None and grade.outcome == "passed"
            if grade is not None and grade.outcome != "unknown":
                tracker.record(task.cluster, task.template, task.seed, task.difficulty, passed)
                tracker.save()
            if passed and bank is not None:
                await keep(bank, task, turn)
            done = Attempt(task.id, task.cluster, attempt, passed,
                           grade.reward.failure_class.value if grade is not None else "none",
                           time.perf_counter() - started, str(pick.get("reason")), turn.trajectory_id)
            report.attempts.append(done)
            log.info("selfplay_attempt", task=task.id, attempt=attempt, passed=passed, reason=pick.get("reason"),
                     failure_class=done.failure_class, seconds=round(done.seconds, 2),
                     trajectory_id=turn.trajectory_id)
            if on_attempt is not None:
                on_attempt(done)
    return report


async def keep(bank: ExperienceBank, task: Task, turn: PracticeTurn) -> None:
    """A passing reply as a worked example (a bank that fails to write costs the example, never the pass)."""
    try:
        kept = await bank.aadd(task.prompt, turn.reply, cluster=task.cluster, task_id=task.id,
                               trajectory_id=turn.trajectory_id or "")
    except Exception as exc:  # noqa: BLE001 - the bank is a bonus
        log.warning("experience_add_failed", task=task.id, error=repr(exc))
        return
    log.info("experience_kept", task=task.id, example=kept.id if kept is not None else None,
             support=kept.support if kept is not None else 0)


__all__ = ["Attempt", "Grade", "Grader", "PassReport", "PracticeHost", "PracticeTurn", "grader", "keep", "practise",
           "session_for"]
