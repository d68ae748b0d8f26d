"""The wordproblems suite: 48 problems from 12 seeded templates, identical on every load; every answer exact
(at most two decimals) and recomputed in the sandbox by an independent reference; graded by `answer_line`."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction

from ghost_agent.eval.suites import load_suite, wordproblems
from ghost_agent.eval.verifiers import answer_line, extract_answer_line, get_verifier, has_answer_line
from ghost_agent.sandbox import ExecLimits, SandboxBackend


def test_at_least_48_problems_from_12_templates_with_unique_ids() -> None:
    tasks = load_suite("wordproblems")
    assert len(tasks) >= 48
    assert len({t.id for t in tasks}) == len(tasks)
    assert len(wordproblems.TEMPLATES) >= 12 and set(wordproblems.CLUSTERS) == set(wordproblems.TEMPLATES)
    for name in wordproblems.TEMPLATES:
        assert [t.id for t in tasks if t.cluster == name] == [
            f"wordproblems/{name}/{i}" for i in range(1, wordproblems.PER_TEMPLATE + 1)]
    assert all(t.verifier == "answer_line" and t.suite == "wordproblems" and not t.files for t in tasks)


def test_generation_is_deterministic() -> None:
    first = [t.to_dict() for t in load_suite("wordproblems")]
    wordproblems.problems.cache_clear()
    assert [t.to_dict() for t in load_suite("wordproblems")] == first
    # and not one story repeated: each template's four draws differ
    assert len({t["prompt"] for t in first}) == len(first)


def test_every_prompt_is_a_story_plus_the_same_instruction() -> None:
    for task in load_suite("wordproblems"):
        story, instruction = task.prompt.rsplit("\n\n", 1)
        assert instruction == wordproblems.INSTRUCTION and story.rstrip().endswith("?")
        assert extract_answer_line(task.prompt) is None  # the stub's echo has no answer line


def test_answers_are_exact_with_at_most_two_decimals() -> None:
    for problem in wordproblems.problems():
        expected = problem.expected
        assert isinstance(expected, int) or isinstance(expected, float) and not expected.is_integer()
        assert Fraction(str(expected)) == problem.answer, problem  # the float prints as the exact value
        assert -Decimal(str(expected)).as_tuple().exponent <= 2 or isinstance(expected, int)
        assert wordproblems.is_exact(problem.answer) and problem.answer > 0


def test_is_exact() -> None:
    assert wordproblems.is_exact(Fraction(2845, 100)) and wordproblems.is_exact(Fraction(7))
    assert not wordproblems.is_exact(Fraction(1, 3)) and not wordproblems.is_exact(Fraction(1, 1000))
    assert not wordproblems.is_exact(Fraction(0)) and not wordproblems.is_exact(Fraction(-5))


async def test_every_answer_is_recomputed_independently_in_the_sandbox(sandbox: SandboxBackend) -> None:
    """The 48 reference programs (decimal arithmetic, brute-force search, datetime: not the generator's fractions)
    run in one sandboxed process, each in its own namespace."""
    tasks = {t.id: t for t in load_suite("wordproblems")}
    assert set(wordproblems.REFERENCES) == set(tasks)
    sources = {task_id: src for task_id, (lang, src) in wordproblems.REFERENCES.items() if lang == "python"}
    assert len(sources) == len(tasks)
    program = (
        "import contextlib, io, json\n"
        f"sources = {sources!r}\nout = {{}}\n"
        "for task_id, src in sources.items():\n"
        "    buf = io.StringIO()\n"
        "    with contextlib.redirect_stdout(buf):\n"
        "        exec(src, {})\n"
        "    out[task_id] = buf.getvalue().strip()\n"
        "print(json.dumps(out))\n"
    )
    result = await sandbox.run("python", program, limits=ExecLimits(timeout_s=60.0, memory_mb=512))
    assert result.ok, result.stderr[-1000:]
    computed = json.loads(result.stdout)
    for task_id, task in tasks.items():
        assert Decimal(computed[task_id]) == Decimal(str(task.expected)), (task_id, computed[task_id], task.expected)


def test_a_right_reply_passes_and_a_wrong_or_unformatted_one_fails() -> None:
    verify = get_verifier("answer_line")
    for task in load_suite("wordproblems"):
        expected = task.expected
        shown = f"{expected:,.2f}" if isinstance(expected, float) else f"{expected:,}"
        good = f"Let me work it out.\n... {shown} ...\n**Answer:** {shown}"
        assert verify(good, expected, **task.kwargs) == 1.0 and has_answer_line(good), task.id
        assert answer_line(f"Answer: {Decimal(str(expected)) + Decimal('0.01')}", expected) == 0.0, task.id
        assert answer_line(f"So it is {shown}.", expected) == 0.0  # right number, no answer line
        assert answer_line(task.prompt, expected) == 0.0  # the stub's echo


def test_stories_read_naturally() -> None:
    for task in load_suite("wordproblems"):
        assert not re.search(r"\b1 hours\b|\$\d+\.\d(?!\d)", task.prompt), task.prompt  # "$4.5" would be odd
