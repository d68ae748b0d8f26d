"""run_suite: each suite through the stub (regression tasks pass, the rest fail), the http runner against a real
daemon on loopback (scripted right answers pass, wrong ones fail, a slow one is a TIMEOUT reward, trajectory ids
recorded), bounded concurrency with outcomes in task order, per-task deadlines, the egress guard around the run,
and the run metadata with its settings hash."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from ghost_agent import __version__
from ghost_agent.eval.network_guard import NetworkEgressError, guard_active
from ghost_agent.eval.run import HASHED_KEYS, run_suite, score_reply, settings_hash
from ghost_agent.eval.runners import HttpRunner, RunnerReply, StubRunner
from ghost_agent.eval.suites import load_suite
from ghost_agent.eval.task import JSON, EvalTask, TaskOutcome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.sandbox import SandboxBackend
from tests.conftest import daemon_on_port, make_settings


def task(i: int, *, expected: str = "ok", verifier: str = "contains", cluster: str = "c") -> EvalTask:
    return EvalTask(id=f"t/{i}", suite="unit", cluster=cluster, prompt=f"prompt {i}", verifier=verifier,
                    expected=expected)


class ScriptedRunner:
    """A runner whose replies, delays and failures are set per task id; it records how many run at once."""

    kind = "scripted-runner"

    def __init__(self, replies: dict[str, str] | None = None, delays: dict[str, float] | None = None,
                 raises: dict[str, BaseException] | None = None) -> None:
        self.replies = replies or {}
        self.delays = delays or {}
        self.raises = raises or {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.guarded: list[bool] = []
        self.closed = False

    async def reply(self, task: EvalTask) -> RunnerReply:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.guarded.append(guard_active())
        try:
            await asyncio.sleep(self.delays.get(task.id, 0.0))
            if task.id in self.raises:
                raise self.raises[task.id]
            return RunnerReply(self.replies.get(task.id, "ok"), trajectory_id=f"traj-{task.id}", duration_ms=1.0)
        finally:
            self.in_flight -= 1

    async def describe(self) -> JSON:
        return {"runner": self.kind, "model": "m1", "daemon_version": "9.9"}

    async def aclose(self) -> None:
        self.closed = True


# --- each suite through the stub --------------------------------------------------------------------------------


async def test_the_default_suite_through_the_stub_passes_exactly_the_regression_tasks() -> None:
    tasks = load_suite("default")
    result = await run_suite(tasks, StubRunner(), metadata={"limit": None, "seed": None})
    assert [o.task_id for o in result.outcomes] == [t.id for t in tasks]
    assert any(t.regression for t in tasks) and any(not t.regression for t in tasks)
    for t, o in zip(tasks, result.outcomes, strict=True):
        assert o.passed is t.regression, (t.id, o.reward)
        assert o.reply == t.prompt and o.cluster == t.cluster
        assert o.reward["failure_class"] == ("keep" if t.regression else o.reward["failure_class"])
        assert o.reward["failure_class"] not in ("crash", "timeout", "transport_error"), (t.id, o.reward)
    assert result.suite == "default"
    assert result.pass_rate == pytest.approx(sum(t.regression for t in tasks) / len(tasks))
    assert result.cluster_pass_rates()["regression"] == 1.0
    meta = result.metadata
    assert meta["runner"] == "stub" and meta["model"] == "stub-echo" and meta["daemon_version"] == __version__
    assert meta["suite"] == "default" and meta["tasks"] == len(tasks) and meta["timeout_s"] == 300.0
    assert meta["started_at"] <= meta["finished_at"] and meta["settings_hash"] == settings_hash(meta)


async def test_the_post_learning_suite_through_the_stub_fails_every_task() -> None:
    result = await run_suite(load_suite("post_learning"), StubRunner())
    assert len(result.outcomes) == 5 and not any(o.passed for o in result.outcomes)
    assert {o.reward["failure_class"] for o in result.outcomes} == {"discard"}
    assert result.suite == "post_learning" and result.pass_rate == 0.0


async def test_humaneval_through_the_stub_fails_quickly_in_the_sandbox(sandbox: SandboxBackend) -> None:
    tasks = load_suite("humaneval", limit=3)
    t0 = time.perf_counter()
    result = await run_suite(tasks, StubRunner(), concurrency=3, sandbox=sandbox)
    assert time.perf_counter() - t0 < 30
    assert [o.task_id for o in result.outcomes] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    # The echoed prompt holds only the signature and docstring: it runs (no crash) and fails the tests.
    assert [o.reward["failure_class"] for o in result.outcomes] == ["discard"] * 3
    assert result.pass_rate == 0.0


async def test_a_code_task_with_a_right_reply_passes_in_the_given_sandbox(sandbox: SandboxBackend) -> None:
    [problem] = load_suite("humaneval", ids=["HumanEval/0"])
    from ghost_agent.eval.suites.humaneval import load_problems

    canonical = load_problems()[0]
    right = RunnerReply("```python\n" + canonical["prompt"] + canonical["canonical_solution"] + "```")
    reward = await asyncio.to_thread(score_reply, problem, right, sandbox=sandbox)
    assert reward.success, reward


# --- the http runner against a real daemon ----------------------------------------------------------------------

RIGHT = "I can't see that file yet; let me list the workspace and find it first."
WRONG = "The answer is 8080."


async def test_the_http_runner_scores_scripted_replies_from_a_real_daemon(tmp_path: Path) -> None:
    tasks = load_suite("post_learning")
    scripted = ScriptedBackend(model="scripted-model")
    scripted.enqueue(
        ScriptedReply(content=RIGHT),
        ScriptedReply(content=WRONG),
        ScriptedReply(content=RIGHT, delay_s=5),  # outlives the 0.5 s timeout
        ScriptedReply(error=(500, "upstream exploded")),
        ScriptedReply(content=RIGHT),
    )
    with daemon_on_port(make_settings(tmp_path), scripted) as url:
        runner = HttpRunner(url, timeout_s=0.5)
        try:
            result = await run_suite(tasks, runner, per_task_timeout_s=0.5)
        finally:
            await runner.aclose()
    labels = [o.reward["failure_class"] for o in result.outcomes]
    assert labels == ["keep", "discard", "timeout", "transport_error", "keep"]
    assert [o.passed for o in result.outcomes] == [True, False, False, False, True]
    passed_first, wrong, slow, broken, passed_last = result.outcomes
    assert passed_first.reply == RIGHT and wrong.reply == WRONG
    assert passed_first.trajectory_id and wrong.trajectory_id and passed_last.trajectory_id
    assert len({passed_first.trajectory_id, wrong.trajectory_id, passed_last.trajectory_id}) == 3
    assert slow.error is not None and "timed out" in slow.error and slow.duration_ms < 4000
    assert broken.error is not None and broken.error.startswith("HTTP 5")
    meta = result.metadata
    assert meta["runner"] == "http" and meta["daemon_model"] == "scripted-model"
    assert meta["daemon_version"] == __version__ and meta["backend"] == "scripted"


# --- concurrency, order, deadlines, failures --------------------------------------------------------------------


async def test_concurrency_is_bounded_and_outcomes_stay_in_task_order() -> None:
    tasks = [task(i) for i in range(6)]
    # Later tasks finish first: completion order is the reverse of task order.
    runner = ScriptedRunner(delays={t.id: 0.05 * (6 - i) for i, t in enumerate(tasks)})
    seen: list[tuple[str, int, int]] = []

    def progress(outcome: TaskOutcome, done: int, total: int) -> None:
        seen.append((outcome.task_id, done, total))

    result = await run_suite(tasks, runner, concurrency=3, progress=progress)
    assert runner.max_in_flight == 3
    assert [o.task_id for o in result.outcomes] == [t.id for t in tasks]
    assert [(d, n) for _, d, n in seen] == [(i, 6) for i in range(1, 7)]
    assert [tid for tid, _, _ in seen] != [t.id for t in tasks]  # progress reports completion order
    assert sorted(tid for tid, _, _ in seen) == sorted(t.id for t in tasks)
    assert [o.trajectory_id for o in result.outcomes] == [f"traj-{t.id}" for t in tasks]
    serial = ScriptedRunner()
    await run_suite(tasks, serial)
    assert serial.max_in_flight == 1


async def test_a_task_past_its_deadline_is_a_timeout_reward_and_the_run_goes_on() -> None:
    tasks = [task(0), task(1), task(2)]
    runner = ScriptedRunner(delays={"t/1": 30.0})
    t0 = time.perf_counter()
    result = await run_suite(tasks, runner, concurrency=1, per_task_timeout_s=0.2)
    assert time.perf_counter() - t0 < 5
    assert [o.reward["failure_class"] for o in result.outcomes] == ["keep", "timeout", "keep"]
    slow = result.outcomes[1]
    assert not slow.passed and slow.error == "timed out after 0.2s" and slow.reward["success"] is False


async def test_runner_and_verifier_failures_fail_their_task_only() -> None:
    tasks = [task(0), task(1, verifier="no_such_verifier"), task(2, verifier="regex_match", expected=""), task(3)]
    runner = ScriptedRunner(raises={"t/3": RuntimeError("socket fell over")})
    result = await run_suite(tasks, runner)
    labels = [o.reward["failure_class"] for o in result.outcomes]
    assert labels == ["keep", "crash", "crash", "transport_error"]
    assert "unknown verifier" in (result.outcomes[1].error or "")
    assert "regex_match" in (result.outcomes[2].error or "")
    assert "socket fell over" in (result.outcomes[3].error or "")


async def test_a_wrong_reply_is_a_scored_miss_and_an_empty_one_is_empty() -> None:
    tasks = [task(0, expected="forty-two"), task(1, expected="forty-two")]
    result = await run_suite(tasks, ScriptedRunner(replies={"t/0": "it is seven", "t/1": "   "}))
    assert [o.reward["failure_class"] for o in result.outcomes] == ["discard", "empty"]


async def test_the_run_is_inside_the_egress_guard_and_an_egress_attempt_aborts_it() -> None:
    runner = ScriptedRunner()
    assert not guard_active()
    await run_suite([task(0), task(1)], runner, concurrency=2)
    assert runner.guarded == [True, True] and not guard_active()
    # What the guard raises inside a runner is not a failed task: the run stops and says why. (The guard's
    # refusal itself is tested in test_network_guard; here the runner raises what it would.)
    egress = ScriptedRunner(raises={"t/1": NetworkEgressError("connect to 'x' refused")}, delays={"t/0": 0.2})
    with pytest.raises(NetworkEgressError, match="refused"):
        await run_suite([task(0), task(1)], egress, concurrency=2)
    assert not guard_active()


async def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        await run_suite([task(0)], ScriptedRunner(), concurrency=0)
    with pytest.raises(ValueError, match="per_task_timeout_s"):
        await run_suite([task(0)], ScriptedRunner(), per_task_timeout_s=0)
    empty = await run_suite([], ScriptedRunner(), suite="nothing")
    assert empty.outcomes == [] and empty.suite == "nothing" and empty.pass_rate == 0.0


def test_the_settings_hash_covers_what_changes_a_measurement_and_nothing_else() -> None:
    base: JSON = {key: None for key in HASHED_KEYS} | {"runner": "http", "model": "m", "timeout_s": 300.0}
    same = dict(base, base_url="http://127.0.0.1:9999", concurrency=8, started_at="x", api_key="k")
    assert settings_hash(base) == settings_hash(same)
    assert len(settings_hash(base)) == 64
    for key, value in (("model", "other"), ("daemon_version", "0.2"), ("timeout_s", 60.0), ("limit", 3),
                       ("seed", 1), ("ids", ["a"]), ("learned", {"prm": "abc"})):
        assert settings_hash(dict(base, **{key: value})) != settings_hash(base), key


def test_a_wrapped_egress_error_is_found() -> None:
    from ghost_agent.eval.network_guard import NetworkEgressError
    from ghost_agent.eval.run import _egress_inside

    inner = NetworkEgressError("refused 192.0.2.1")
    try:
        raise ExceptionGroup("task group", [ValueError("other"), inner])
    except ExceptionGroup as group:
        assert _egress_inside(group) is inner
    try:
        try:
            raise inner
        except NetworkEgressError as exc:
            raise RuntimeError("httpx.ConnectError") from exc
    except RuntimeError as wrapped:
        assert _egress_inside(wrapped) is inner
    assert _egress_inside(ValueError("plain")) is None
