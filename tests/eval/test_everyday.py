"""The everyday suite: 44 ordinary chat requests, each graded on whether the reply delivered what was asked.
Every task passes a hand-written good reply (in the sandbox where code, SQL or a regex must run) and fails the
stub's echo, the result in place of the code, a leaked action object and the loop-guard text."""

from __future__ import annotations

import builtins
import re
from collections import Counter

import pytest

from ghost_agent.eval.delivery import failed_checks
from ghost_agent.eval.suites import everyday, load_suite
from ghost_agent.eval.task import EvalTask
from ghost_agent.eval.verifiers import delivered, get_verifier
from ghost_agent.learned.reward import FailureLabel, RewardAdapter
from ghost_agent.sandbox import SandboxBackend
from tests.eval.everyday_replies import (
    GOOD_REPLIES,
    LEAKED_ACTION,
    LEAKED_ANSWER,
    LEAKED_CALL,
    LOOP_GUARD,
    OUTPUT_INSTEAD_OF_CODE,
    py,
)

TASKS = load_suite("everyday")
BY_ID = {t.id: t for t in TASKS}
SIZES = {"code": 8, "tests": 3, "sql": 4, "shell": 4, "regex": 3, "explain": 5, "convert": 4, "list": 4, "facts": 5,
         "arithmetic": 4}


def test_the_mix_of_requests() -> None:
    assert len(TASKS) >= 44 and len(BY_ID) == len(TASKS)
    assert Counter(t.cluster for t in TASKS) == SIZES and tuple(SIZES) == everyday.CLUSTERS
    assert all(t.verifier == "delivered" and t.id == f"everyday/{t.cluster}/{t.id.rsplit('/', 1)[1]}" for t in TASKS)
    for task in TASKS:
        assert failed_checks("", task.expected, validate_only=True) == []  # every check list is well-formed
        if task.cluster == "code":  # the prompt names the function and its signature
            name = task.expected[0]["name"]
            assert re.search(rf"`{name}\(\w+: [\w\[\], ]+\) -> [\w\[\], ]+`", task.prompt), task.prompt


def test_a_caller_cannot_corrupt_the_next_load() -> None:
    task = load_suite("everyday", ids=["everyday/code/is-prime"])[0]
    task.expected[0]["tests"] = "pass"
    assert load_suite("everyday", ids=["everyday/code/is-prime"])[0].expected[0]["tests"] != "pass"


def test_there_is_a_good_reply_for_every_task() -> None:
    assert set(GOOD_REPLIES) == set(BY_ID)
    assert set(OUTPUT_INSTEAD_OF_CODE) == {t.id for t in TASKS if t.cluster in ("code", "tests", "sql")}


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_the_good_reply_passes(task: EvalTask, sandbox: SandboxBackend) -> None:
    reply = GOOD_REPLIES[task.id]
    assert failed_checks(reply, task.expected, sandbox=sandbox) == [], reply
    assert get_verifier(task.verifier)(reply, task.expected, sandbox=sandbox, **task.kwargs) == 1.0


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_the_echo_and_leaked_agent_text_fail(task: EvalTask, sandbox: SandboxBackend) -> None:
    good = GOOD_REPLIES[task.id]
    assert delivered(task.prompt, task.expected, sandbox=sandbox) == 0.0  # the stub runner's reply
    for leaked in (LEAKED_ACTION, LEAKED_ANSWER, LEAKED_CALL, LOOP_GUARD):
        assert delivered(leaked, task.expected, sandbox=sandbox) == 0.0
        assert delivered(f"{good}\n\n{leaked}", task.expected, sandbox=sandbox) == 0.0
    assert delivered(f"{good} [ATTEMPT_ABORTED_LOOP]", task.expected, sandbox=sandbox) == 0.0


@pytest.mark.parametrize("task_id", sorted(OUTPUT_INSTEAD_OF_CODE))
def test_the_result_in_place_of_the_code_fails(task_id: str, sandbox: SandboxBackend) -> None:
    task = BY_ID[task_id]
    assert delivered(OUTPUT_INSTEAD_OF_CODE[task_id], task.expected, sandbox=sandbox) == 0.0


def test_wrong_code_tests_queries_and_patterns_fail(sandbox: SandboxBackend) -> None:
    wrong = {
        "everyday/code/is-prime": py("def is_prime(n):\n    return all(n % d for d in range(2, n))"),  # 0, 1
        "everyday/code/fizzbuzz": py("def fizzbuzz(n):\n    return [str(i) for i in range(1, n + 1)]"),
        "everyday/code/flatten": py("def flatten(nested):\n    return [x for sub in nested for x in sub]"),
        "everyday/tests/median": py("def test_even():\n    assert median([1, 2]) == 1\n    assert median([3]) == 3"),
        "everyday/sql/top-three-salaries": "```sql\nSELECT name FROM employees ORDER BY salary LIMIT 3;\n```",
        "everyday/sql/employees-per-dept": "```sql\nSELECT dept FROM employees GROUP BY dept;\n```",
        "everyday/regex/us-zip": "Use `\\d{5}(-\\d+)?`.",
        "everyday/regex/hex-color": "`^#[0-9a-f]{3,6}$`",
        "everyday/shell/count-lines": "Open access.log in an editor and look at the last line number.",
        "everyday/explain/recursion": "Recursion is when a function calls itself.",  # no base case, too short
        "everyday/list/planets": "Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus, Neptune.",  # not a list
        "everyday/facts/gold-symbol": "The symbol is AU... or maybe Ag.",
        "everyday/arithmetic/percent": "17% of 240 is about 41.",
    }
    for task_id, reply in wrong.items():
        assert delivered(reply, BY_ID[task_id].expected, sandbox=sandbox) == 0.0, task_id


def test_reply_code_never_runs_in_this_process(sandbox: SandboxBackend) -> None:
    reply = py("import builtins\nbuiltins.GHOST_CANARY = 1\n\ndef reverse_string(s):\n    return s[::-1]")
    assert delivered(reply, BY_ID["everyday/code/reverse-string"].expected, sandbox=sandbox) == 1.0
    assert not hasattr(builtins, "GHOST_CANARY")


def test_a_leak_is_a_scored_miss_not_a_crash(sandbox: SandboxBackend) -> None:
    task = BY_ID["everyday/facts/capital-of-australia"]
    adapter = RewardAdapter(delivered, scorer_kwargs={"sandbox": sandbox})
    reward = adapter.score({"predicted": '{"answer": "Canberra"}', "expected": task.expected})
    assert reward.failure_class is FailureLabel.DISCARD
    broken = adapter.score({"predicted": "Canberra", "expected": [{"kind": "vibes"}]})
    assert broken.failure_class is FailureLabel.CRASH
