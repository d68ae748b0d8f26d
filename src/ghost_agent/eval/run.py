"""Run a suite: every task through a runner, every reply through its verifier, one `SuiteResult`.

`run_suite` is the whole pipeline. It runs with bounded concurrency, each task under its own deadline, inside
`no_external_network()` — the eval never reaches off the machine, whatever a runner or verifier tries. Scoring
runs in a worker thread (code_tests executes the tests in the sandbox; the event loop stays free for the other
tasks' replies). Outcomes come back in task order whatever order the tasks finish in.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson

from ghost_agent import __version__
from ghost_agent.eval.network_guard import NetworkEgressError, no_external_network
from ghost_agent.eval.runners import Runner, RunnerReply
from ghost_agent.eval.task import EvalTask, SuiteResult, TaskOutcome
from ghost_agent.eval.verifiers import get_verifier
from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.reward import FailureLabel, Reward, RewardAdapter
from ghost_agent.logging import get_logger
from ghost_agent.sandbox.base import SandboxBackend

log = get_logger("eval")

# Called once per finished task, in completion order: (the outcome, tasks done so far, total tasks).
ProgressCallback = Callable[[TaskOutcome, int, int], None]

# What the settings hash covers: the things that change what a run measures. Not covered: the base url (the
# port moves between runs), the api key, the concurrency, timestamps.
HASHED_KEYS = (
    "runner",
    "model",
    "daemon_version",
    "daemon_model",
    "backend",
    "learned",
    "temperature",
    "suite",
    "timeout_s",
    "limit",
    "ids",
    "seed",
)


def settings_hash(metadata: JSON) -> str:
    """sha256 (hex) of the HASHED_KEYS of `metadata` as canonical JSON (sorted keys; a missing key is null).

    Two results with the same hash were made by the same runner against the same daemon version, model,
    backend and learned checkpoints, with the same suite selection (limit, ids, seed) and timeout.
    """
    picked = {key: metadata.get(key) for key in HASHED_KEYS}
    return hashlib.sha256(orjson.dumps(picked, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def score_reply(task: EvalTask, reply: RunnerReply, *, sandbox: SandboxBackend | None = None) -> Reward:
    """The reward for one reply (blocking: code_tests runs the sandbox — call it off the event loop).

    A timed-out reply is a TIMEOUT reward and a runner error (HTTP 500, connection refused) a TRANSPORT_ERROR
    reward; neither reaches the verifier. Otherwise the task's verifier, wrapped in a RewardAdapter with the task's
    kwargs (`pass_threshold` among them, default 1.0), scores `{"predicted": text, "expected": expected}`.
    `sandbox` goes to verifiers that take one (code_tests; default: the detected sandbox).
    """
    if reply.timed_out:
        return Reward.timeout(reply.error or "timed out")
    if reply.error is not None:
        return Reward.transport_error(reply.error)
    threshold = float(task.kwargs.get("pass_threshold", 1.0))
    kwargs = dict(task.kwargs)
    if sandbox is not None:
        kwargs["sandbox"] = sandbox  # the adapter drops it for verifiers that take no sandbox
    adapter = RewardAdapter(get_verifier(task.verifier), pass_threshold=threshold, scorer_kwargs=kwargs)
    return adapter.score({"predicted": reply.text, "expected": task.expected})


async def _run_one(
    task: EvalTask, runner: Runner, per_task_timeout_s: float, sandbox: SandboxBackend | None
) -> TaskOutcome:
    t0 = time.perf_counter()
    try:
        reply = await asyncio.wait_for(runner.reply(task), per_task_timeout_s)
    except TimeoutError:
        reply = RunnerReply(
            "",
            error=f"timed out after {per_task_timeout_s:g}s",
            timed_out=True,
            duration_ms=(time.perf_counter() - t0) * 1000.0,
        )
    except NetworkEgressError:
        raise
    except Exception as exc:  # noqa: BLE001 - a runner bug fails this task, not the run
        egress = _egress_inside(exc)
        if egress is not None:
            # anyio connects inside a task group, so the guard's error can arrive wrapped in an ExceptionGroup
            raise egress from exc
        reply = RunnerReply("", error=f"runner failed: {type(exc).__name__}: {exc}",
                            duration_ms=(time.perf_counter() - t0) * 1000.0)
    try:
        reward = await asyncio.to_thread(partial(score_reply, task, reply, sandbox=sandbox))
        error = reply.error
        if error is None and reward.failure_class is FailureLabel.CRASH:
            error = str(reward.auxiliary.get("error") or "verifier crashed")
    except NetworkEgressError:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. an unknown verifier name: this task crashes, the run goes on
        error = f"scoring failed: {type(exc).__name__}: {exc}"
        reward = Reward.crash(error)
    return TaskOutcome(
        task_id=task.id,
        cluster=task.cluster,
        passed=bool(reward.success),
        reward=reward.to_dict(),
        duration_ms=round(reply.duration_ms, 3),
        reply=reply.text,
        trajectory_id=reply.trajectory_id,
        error=error,
    )


def _egress_inside(exc: BaseException) -> NetworkEgressError | None:
    """The NetworkEgressError an exception is or wraps (ExceptionGroup, `__cause__`), or None."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, NetworkEgressError):
            return current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return None


async def run_suite(
    tasks: Sequence[EvalTask],
    runner: Runner,
    *,
    concurrency: int = 1,
    per_task_timeout_s: float = 300.0,
    progress: ProgressCallback | None = None,
    metadata: JSON | None = None,
    suite: str | None = None,
    sandbox: SandboxBackend | None = None,
) -> SuiteResult:
    """Run `tasks` through `runner` and score them; the outcomes are in task order.

    At most `concurrency` tasks are in flight. A task whose reply takes longer than `per_task_timeout_s` is a
    TIMEOUT outcome, a reply that never arrived a TRANSPORT_ERROR one, a verifier that raised a CRASH one;
    none of them stops the run. The whole run,
    `runner.describe()` included, is inside `no_external_network()`: an egress attempt raises
    NetworkEgressError out of here. `describe()` may raise RunnerError (the daemon is unreachable) before any
    task runs. `sandbox` is where code_tests runs the replies (default: the detected one).

    Metadata: the runner's `describe()` (runner, model, daemon_version, ...), then `metadata` (the caller's:
    suite, limit, ids, seed, ...), then `timeout_s`, `concurrency`, `harness_version`, `tasks`, `started_at`,
    `finished_at`, `duration_s` and `settings_hash` (see `settings_hash`).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if not per_task_timeout_s > 0:
        raise ValueError(f"per_task_timeout_s must be positive, got {per_task_timeout_s}")
    name = suite or (metadata or {}).get("suite") or (tasks[0].suite if tasks else "")
    outcomes: list[TaskOutcome | None] = [None] * len(tasks)
    done = 0
    pending = iter(enumerate(tasks))

    async def worker() -> None:
        nonlocal done
        for index, task in pending:  # one shared iterator: each task is taken by exactly one worker
            outcome = await _run_one(task, runner, per_task_timeout_s, sandbox)
            outcomes[index] = outcome
            done += 1
            log.debug("eval_task_done", task_id=task.id, passed=outcome.passed,
                      failure_class=outcome.reward.get("failure_class"), duration_ms=outcome.duration_ms)
            if progress is not None:
                progress(outcome, done, len(tasks))

    started = time.perf_counter()
    with no_external_network():
        meta: JSON = dict(await runner.describe())
        meta.update(metadata or {})
        meta.update(
            suite=name,
            timeout_s=per_task_timeout_s,
            concurrency=concurrency,
            harness_version=__version__,
            tasks=len(tasks),
            started_at=_now(),
        )
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(concurrency, len(tasks))):
                    group.create_task(worker())
        except BaseExceptionGroup as eg:
            # Surface the first real failure (an egress attempt) rather than an ExceptionGroup wrapper.
            raise eg.exceptions[0] from eg
    meta["finished_at"] = _now()
    meta["duration_s"] = round(time.perf_counter() - started, 3)
    meta["settings_hash"] = settings_hash(meta)
    finished = [o for o in outcomes if o is not None]
    result = SuiteResult(suite=name, outcomes=finished, metadata=meta)
    log.info("eval_suite_done", suite=name, runner=meta.get("runner"), passed=sum(o.passed for o in finished),
             total=len(finished), pass_rate=round(result.pass_rate, 4))
    return result


def tally(outcomes: Sequence[TaskOutcome]) -> dict[str, Any]:
    """Counts by failure class (`keep`, `discard`, `timeout`, ...), for summaries."""
    counts: dict[str, int] = {}
    for outcome in outcomes:
        label = str(outcome.reward.get("failure_class") or ("keep" if outcome.passed else "unknown"))
        counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items()))


__all__ = ["HASHED_KEYS", "ProgressCallback", "run_suite", "score_reply", "settings_hash", "tally"]
