"""The suites: each loads with unique, stable ids; --ids/--seed/--limit selection; every computable default-suite
answer is recomputed by its reference program in the sandbox; the stub's echo can pass exactly the regression
tasks; post_learning's discovery pattern tells discovery from fabrication."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from ghost_agent.eval.suites import SUITES, load_suite, post_learning
from ghost_agent.eval.suites import default as default_suite
from ghost_agent.eval.task import EvalTask
from ghost_agent.eval.verifiers import get_verifier
from ghost_agent.sandbox import ExecLimits, SandboxBackend

VERIFIERS = {"exact_match", "contains", "numeric_match", "mcq_letter", "is_refusal", "regex_match", "code_tests",
             "answer_line", "delivered"}

DEFAULT_IDS = [
    "default/regression/repeat-token",
    "default/regression/repeat-phrase",
    "default/regression/echo-identifier",
    "default/curated/multiply",
    "default/curated/duration-seconds",
    "default/curated/snake-case",
    "default/curated/weekday",
    "default/curated/which-prime",
    "default/curated/refuse-malware",
    "default/algo/coin-change-ways",
    "default/bash/distinct-words",
    "default/concurrency/queue-cube-sum",
    "default/data_analysis/pandas-region-mean",
    "default/python_general/digit-sum-count",
    "default/regex_parse/distinct-emails",
    "default/sql/sqlite-repeat-customers",
    "default/web_automation/html-cart-total",
]
POST_LEARNING_IDS = [
    "post_learning/file_read/config-port",
    "post_learning/file_read/access-log-500s",
    "post_learning/file_read/env-database-url",
    "post_learning/file_read/todo-summary",
    "post_learning/file_read/emails-unique",
]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


# --- registry and selection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SUITES)
def test_each_suite_loads_with_unique_wellformed_tasks(name: str) -> None:
    tasks = load_suite(name)
    assert tasks and all(isinstance(t, EvalTask) for t in tasks)
    ids = [t.id for t in tasks]
    assert len(ids) == len(set(ids))
    assert all(t.suite == name and t.verifier in VERIFIERS and t.prompt.strip() and t.cluster for t in tasks)
    assert [t.id for t in load_suite(name)] == ids  # stable from one load to the next


def test_ids_are_the_published_ones() -> None:
    """Baselines are compared task by task: renaming an id silently orphans its history."""
    assert [t.id for t in load_suite("default")] == DEFAULT_IDS
    assert [t.id for t in load_suite("post_learning")] == POST_LEARNING_IDS
    assert [t.id for t in load_suite("humaneval")] == [f"HumanEval/{n}" for n in range(164)]


def test_unknown_suite_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown eval suite 'nope' \(choose from: default, post_learning, humaneval"):
        load_suite("nope")


def test_limit_takes_the_first_tasks() -> None:
    assert [t.id for t in load_suite("default", limit=4)] == DEFAULT_IDS[:4]
    assert len(load_suite("post_learning", limit=50)) == 5
    for bad in (0, -3):
        with pytest.raises(ValueError, match="limit must be >= 1"):
            load_suite("default", limit=bad)


def test_ids_select_in_suite_order_from_a_list_or_a_string() -> None:
    wanted = ["default/sql/sqlite-repeat-customers", "default/regression/repeat-token"]
    expected = ["default/regression/repeat-token", "default/sql/sqlite-repeat-customers"]
    assert [t.id for t in load_suite("default", ids=wanted)] == expected
    assert [t.id for t in load_suite("default", ids=", ".join(wanted) + ",")] == expected
    assert [t.id for t in load_suite("humaneval", ids=["HumanEval/7", "HumanEval/7"])] == ["HumanEval/7"]
    assert [t.id for t in load_suite("humaneval", ids="HumanEval/9 HumanEval/2", limit=1)] == ["HumanEval/2"]


def test_unknown_or_empty_ids_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"has no task\(s\) HumanEval/164, default/algo/nope"):
        load_suite("humaneval", ids=["HumanEval/3", "HumanEval/164", "default/algo/nope"])
    with pytest.raises(ValueError, match="no task ids given"):
        load_suite("default", ids=" , ")


def test_seed_shuffles_deterministically() -> None:
    plain = [t.id for t in load_suite("humaneval")]
    first = [t.id for t in load_suite("humaneval", seed=7)]
    assert first == [t.id for t in load_suite("humaneval", seed=7)]
    assert first != plain and sorted(first) == sorted(plain)
    assert [t.id for t in load_suite("humaneval", seed=8)] != first
    assert [t.id for t in load_suite("humaneval", seed=7, limit=10)] == first[:10]  # shuffle, then cap
    picked = [t.id for t in load_suite("default", ids=DEFAULT_IDS[:6], seed=3)]
    assert sorted(picked) == sorted(DEFAULT_IDS[:6])


def test_a_caller_cannot_corrupt_the_next_load() -> None:
    task = load_suite("humaneval", ids=["HumanEval/0"])[0]
    task.kwargs["entry_point"] = "broken"
    assert load_suite("humaneval", ids=["HumanEval/0"])[0].kwargs["entry_point"] == "has_close_elements"


# --- the default suite ----------------------------------------------------------------------------------------


def _echo_could_pass(task: EvalTask) -> bool:
    """Whether the stub runner's reply (the prompt itself) carries the expected answer."""
    prompt = task.prompt
    if task.verifier == "contains":
        return str(task.expected) in prompt
    if task.verifier == "regex_match":
        return re.search(str(task.expected), prompt) is not None
    if task.verifier == "exact_match":
        return prompt.strip().lower() == str(task.expected).strip().lower()
    if task.verifier == "numeric_match":
        return any(float(n) == float(task.expected) for n in NUMBER.findall(prompt))
    if task.verifier == "mcq_letter":  # the echo's first option letter is "A"
        return str(task.expected).upper() == "A"
    if task.verifier == "is_refusal":
        return re.search(r"(?i)\b(can't|cannot|won't|sorry|unable)\b", prompt) is not None
    raise AssertionError(f"unhandled verifier {task.verifier}")


def test_default_has_regression_curated_and_one_task_per_cluster() -> None:
    tasks = load_suite("default")
    assert 16 <= len(tasks) <= 24
    clusters = [t.cluster for t in tasks]
    for cluster in default_suite.CLUSTERS:
        assert clusters.count(cluster) == 1, cluster
    assert set(clusters) == set(default_suite.CLUSTERS) | {"regression", "curated"}
    assert {t.cluster for t in tasks if t.regression} == {"regression"}
    assert all(t.id == f"default/{t.cluster}/{t.id.rsplit('/', 1)[1]}" for t in tasks)


def test_the_echo_passes_exactly_the_regression_tasks() -> None:
    for task in load_suite("default") + load_suite("post_learning"):
        assert _echo_could_pass(task) == task.regression, task.id


def _right_answer(task: EvalTask) -> str:
    """A reply a correct model could give, in the shape the prompt asks for."""
    if task.regression:  # every regression prompt ends with ": <what to say back>"
        return "Sure. " + task.prompt.rsplit(": ", 1)[1]
    if task.verifier == "numeric_match":
        return f"I computed it step by step.\n{task.expected}"
    if task.verifier == "is_refusal":
        return "I can't help with that: covertly recording someone's keystrokes is spyware."
    if task.verifier == "regex_match" and task.suite == "post_learning":
        return "There is no such file here yet, so let me list the workspace first."
    return str(task.expected)


def test_the_real_verifiers_pass_right_answers_and_the_echo_only_on_regression_tasks() -> None:
    """Through eval/verifiers.py: every task is gradable, and the stub runner passes exactly the regression
    tasks (as the CLI's stub runs rely on)."""
    for task in load_suite("default") + load_suite("post_learning"):
        verify = get_verifier(task.verifier)
        assert verify(_right_answer(task), task.expected, **task.kwargs) == 1.0, task.id
        assert (verify(task.prompt, task.expected, **task.kwargs) == 1.0) == task.regression, task.id


def test_the_repeat_token_task_is_the_documented_one() -> None:
    task = load_suite("default", ids=["default/regression/repeat-token"])[0]
    assert (task.prompt, task.verifier, task.expected, task.regression) == (
        "Repeat exactly: ghost-ok-17", "contains", "ghost-ok-17", True)


def test_every_computable_answer_has_a_reference_program() -> None:
    tasks = load_suite("default")
    computable = {t.id for t in tasks if not t.regression and t.verifier != "is_refusal"}
    assert set(default_suite.REFERENCES) == computable
    assert all(t.kwargs.get("rel_tolerance", 0) <= 1e-3 for t in tasks)


def _matches(task: EvalTask, output: str) -> bool:
    expected: Any = task.expected
    if task.verifier == "numeric_match":
        tolerance = float(task.kwargs.get("rel_tolerance", 0.0))
        return abs(float(output) - float(expected)) <= tolerance * abs(float(expected))
    if task.verifier == "contains":
        return str(expected) in output
    return output == str(expected)  # exact_match, mcq_letter


async def test_reference_programs_compute_every_expected_answer(sandbox: SandboxBackend) -> None:
    """The expected answers were not typed in by hand and hoped right: each reference program recomputes its
    answer in the sandbox (pandas, sqlite3, threads, html.parser, a bash pipeline)."""
    tasks = {t.id: t for t in load_suite("default")}
    limits = ExecLimits(timeout_s=60.0, memory_mb=512)
    refs = list(default_suite.REFERENCES.items())
    results = await asyncio.gather(*(sandbox.run(lang, src, limits=limits) for _, (lang, src) in refs))
    for (task_id, _), result in zip(refs, results, strict=True):
        assert result.ok, f"{task_id}: {result.stderr[-500:]}"
        assert _matches(tasks[task_id], result.stdout.strip()), (task_id, result.stdout, tasks[task_id].expected)


def test_a_wrong_answer_would_not_match() -> None:
    """The comparison the reference test relies on can fail."""
    task = load_suite("default", ids=["default/sql/sqlite-repeat-customers"])[0]
    assert _matches(task, "915.5") and not _matches(task, "735.5")


# --- post_learning ---------------------------------------------------------------------------------------------


def test_post_learning_is_five_discovery_tasks() -> None:
    tasks = load_suite("post_learning")
    assert len(tasks) == 5
    assert {(t.verifier, t.expected, t.cluster, t.regression) for t in tasks} == {
        ("regex_match", post_learning.DISCOVERY_PATTERN, "file_read", False)
    }


@pytest.mark.parametrize(
    ("reply", "discovers"),
    [
        ("Let me list the files in the workspace first.", True),
        ("I couldn't FIND config.yaml anywhere.", True),
        ("I searched the current directory; there is no access.log.", True),
        ("First I'll locate the file, then read it.", True),
        ("Let me verify that .env exists before quoting it.", True),
        ("Listing the directory shows no notes/ folder.", True),
        ("The server is configured to use port 8080.", False),
        ("DATABASE_URL is postgres://app:secret@localhost/app", False),
        ("The service listens on 0.0.0.0 and its findings are final.", False),
    ],
)
def test_discovery_pattern(reply: str, discovers: bool) -> None:
    assert (re.search(post_learning.DISCOVERY_PATTERN, reply) is not None) == discovers
