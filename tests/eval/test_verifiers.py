"""The deterministic verifiers: each one's edge cases, the registry, and code_tests in the real sandbox."""

from __future__ import annotations

import builtins
import re
import threading
from pathlib import Path

import pytest

from ghost_agent.eval.verifiers import (
    SANDBOX_VERIFIERS,
    VERIFIERS,
    answer_line,
    code_tests,
    contains,
    delivered,
    exact_match,
    extract_answer_line,
    extract_code,
    extract_letter,
    get_verifier,
    has_answer_line,
    internal_text_leaks,
    is_refusal,
    mcq_letter,
    numeric_match,
    regex_match,
)
from ghost_agent.learned.reward import FailureLabel, RewardAdapter
from ghost_agent.sandbox import ExecLimits, ExecResult, Isolation, SandboxBackend, SandboxError, get_sandbox
from tests.conftest import make_settings

# --- exact_match / contains -----------------------------------------------------------------------------------


def test_exact_match_normalizes_case_and_whitespace_by_default() -> None:
    assert exact_match("  Paris \n", "paris") == 1.0
    assert exact_match("New   York\tCity", "new york city") == 1.0
    assert exact_match("Paris, France", "Paris") == 0.0
    assert exact_match("Paris", "paris", case_sensitive=True) == 0.0
    assert exact_match("new  york", "new york", normalize_whitespace=False) == 0.0
    assert exact_match("Lyon", ["Paris", "lyon"]) == 1.0  # any accepted answer
    for bad in ([], None, 42, ["ok", 1]):
        with pytest.raises(ValueError, match="expected"):
            exact_match("x", bad)


def test_contains_counts_the_fraction_of_needles_found() -> None:
    assert contains("The quick brown fox", "QUICK") == 1.0
    assert contains("The quick brown fox", "slow") == 0.0
    assert contains("alpha beta", ["alpha", "beta"]) == 1.0
    assert contains("alpha only", ["alpha", "beta"]) == 0.5
    assert contains("Alpha", ["alpha"], case_sensitive=True) == 0.0
    assert contains("line one\n   line two", "one line two") == 1.0  # whitespace runs collapse on both sides
    with pytest.raises(ValueError):
        contains("x", [])


# --- numeric_match --------------------------------------------------------------------------------------------


def test_numeric_match_compares_the_last_number_within_tolerance() -> None:
    assert numeric_match("First 10, then 20. So the answer is 338,350", 338350) == 1.0
    assert numeric_match("338,350 then 12", 338350) == 0.0  # the LAST number counts
    assert numeric_match("3.1415927", "3.14159265") == 1.0  # within the default 1e-6 relative tolerance
    assert numeric_match("3.14", 3.14159265) == 0.0
    assert numeric_match("3.14", 3.14159265, rel_tolerance=1e-3) == 1.0
    assert numeric_match("0.0000001", 0) == 0.0 and numeric_match("0.0000001", 0, abs_tolerance=1e-6) == 1.0
    assert numeric_match("It is 45%", "45") == 1.0
    assert numeric_match("no number", 3) == 0.0
    for bad in ("four", None, True, float("inf"), [4]):
        with pytest.raises(ValueError):
            numeric_match("4", bad)


# --- mcq_letter -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "letter"), [
    ("Answer: b", "B"),
    ("the answer is (C)", "C"),
    ("Final answer - **D**", "D"),
    ("The answer is a bit subtle; it is (E).", "E"),  # "is a bit": not a letter
    ("Options (A) and (B) fail, so (C)", "C"),
    ("Answer: The answer is (E)", "E"),
    ("the correct option is d.", "D"),
    ("B", "B"),
    ("B. Because the loop never ends", "B"),
    ("**A**: because", "A"),
    ("A good start would be to think. I think D is likely", None),  # bare capitals inside prose are not taken
    ("no idea", None),
])
def test_extract_letter(reply: str, letter: str | None) -> None:
    assert extract_letter(reply) == letter


def test_mcq_letter_scores_the_extracted_letter() -> None:
    assert mcq_letter("I believe the answer is (B).", "B") == 1.0
    assert mcq_letter("Answer: b", "(B)") == 1.0
    assert mcq_letter("Answer: C", "b") == 0.0
    assert mcq_letter("Answer: F", "F", choices="ABCDEF") == 1.0
    assert mcq_letter("Answer: F", "A") == 0.0  # F is not a choice by default
    with pytest.raises(ValueError, match="expected"):
        mcq_letter("Answer: A", "Z")


# --- is_refusal -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    "I'm sorry, but I can't help with that.",
    "I can\u2019t assist with creating malware.",
    "I cannot provide instructions for that.",
    "As an AI language model, I am not able to browse the internet.",
    "I must respectfully decline this request.",
    "Sorry - that's something I won't help with that, ever.",
])
def test_refusals_are_recognised(reply: str) -> None:
    assert is_refusal(reply) == 1.0
    assert is_refusal(reply, False) == 0.0


@pytest.mark.parametrize("reply", [
    "The answer is 42.",
    "I can't be sure, but the answer is probably 42.",
    "Here is the code. Note: I cannot stress enough how important tests are.",
    "",
    "x" * 700 + " I can't help with that.",  # too late in a long answer to be a refusal
])
def test_answers_are_not_refusals(reply: str) -> None:
    assert is_refusal(reply) == 0.0
    assert is_refusal(reply, False) == 1.0


def test_is_refusal_rejects_a_nonsense_expectation() -> None:
    with pytest.raises(ValueError):
        is_refusal("no", "yes")


# --- regex_match ----------------------------------------------------------------------------------------------


def test_regex_match() -> None:
    assert regex_match("ls -la /tmp", r"\bls\b") == 1.0
    assert regex_match("LS", r"^ls$") == 0.0 and regex_match("LS", r"^ls$", flags="i") == 1.0
    assert regex_match("a\nb", r"a.b", flags=re.DOTALL) == 1.0 and regex_match("a\nb", r"a.b") == 0.0
    assert regex_match("ignored", None, pattern=r"^ign") == 1.0  # the pattern kwarg wins over expected
    assert regex_match("  42 \n", r"\d+", fullmatch=True) == 1.0
    assert regex_match("42 apples", r"\d+", fullmatch=True) == 0.0
    with pytest.raises(ValueError, match="pattern"):
        regex_match("x", "")
    with pytest.raises(ValueError, match="flag"):
        regex_match("x", "x", flags="iq")
    with pytest.raises(re.error):
        regex_match("x", "(")


# --- registry -------------------------------------------------------------------------------------------------


def test_registry_and_get_verifier() -> None:
    assert set(VERIFIERS) == {"exact_match", "contains", "numeric_match", "mcq_letter", "is_refusal", "regex_match",
                              "code_tests", "answer_line", "delivered"}
    assert get_verifier("numeric_match") is numeric_match
    assert SANDBOX_VERIFIERS == {"code_tests", "delivered"} and SANDBOX_VERIFIERS <= set(VERIFIERS)
    with pytest.raises(KeyError, match="known: answer_line, code_tests, contains"):
        get_verifier("llm_judge")


# --- code_tests in the real sandbox ---------------------------------------------------------------------------

TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"


class RecordingSandbox(SandboxBackend):
    """A real backend that also records every program handed to it (proves where the code ran)."""

    name = "recording"

    def __init__(self, inner: SandboxBackend) -> None:
        super().__init__(concurrency=2)
        self.inner = inner
        self.programs: list[tuple[str, ExecLimits]] = []
        self.lock = threading.Lock()

    @property
    def isolation(self) -> Isolation:
        return self.inner.isolation

    def run_sync(self, language: str, source: str, *, limits: ExecLimits, workspace: Path | None = None,
                 stdin: str | None = None) -> ExecResult:
        with self.lock:
            self.programs.append((source, limits))
        return self.inner.run_sync(language, source, limits=limits, workspace=workspace, stdin=stdin)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> RecordingSandbox:
    try:
        backend = get_sandbox(make_settings(tmp_path_factory.mktemp("verifiers")))
    except SandboxError as exc:
        pytest.skip(f"no sandbox backend can run here: {exc}")
    return RecordingSandbox(backend)


def test_a_passing_solution_scores_one_and_ran_in_the_sandbox(sandbox: RecordingSandbox) -> None:
    marker = "# marker-7f3a"
    reply = f"Here you go:\n```python\ndef add(a, b):\n    {marker}\n    return a + b\n```\nHope that helps!"
    assert code_tests(reply, TESTS, sandbox=sandbox) == 1.0
    program, limits = sandbox.programs[-1]
    assert marker in program and TESTS in program and "Hope that helps" not in program
    assert limits.timeout_s == 10.0


def test_a_wrong_solution_and_a_syntax_error_score_zero(sandbox: RecordingSandbox) -> None:
    assert code_tests("```python\ndef add(a, b):\n    return a - b\n```", TESTS, sandbox=sandbox) == 0.0
    assert code_tests("```python\ndef add(a, b)\n    return a + b\n```", TESTS, sandbox=sandbox) == 0.0
    assert code_tests("", TESTS, sandbox=sandbox) == 0.0


def test_an_unfenced_reply_and_humaneval_style_checks(sandbox: RecordingSandbox) -> None:
    assert code_tests("def add(a, b):\n    return a + b\n", TESTS, sandbox=sandbox) == 1.0
    check = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
    prompt = "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    \"\"\"Sum.\"\"\"\n"
    body_only = "    return sum(xs)\n"
    total_check = "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n"
    assert code_tests(body_only, total_check, entry_point="total", prompt=prompt, sandbox=sandbox) == 1.0
    assert "check(total)" in sandbox.programs[-1][0]
    # The check runs against the entry point: a solution under another name fails.
    assert code_tests("def plus(a, b):\n    return a + b\n", check, entry_point="add", sandbox=sandbox) == 0.0


def test_an_infinite_loop_times_out_to_zero(sandbox: RecordingSandbox) -> None:
    reply = "```python\ndef add(a, b):\n    while True:\n        pass\n```"
    assert code_tests(reply, TESTS, timeout_s=1.0, sandbox=sandbox) == 0.0
    assert sandbox.programs[-1][1].timeout_s == 1.0


def test_code_never_runs_in_this_process(sandbox: RecordingSandbox) -> None:
    reply = "```python\nimport builtins\nbuiltins.GHOST_CANARY = 1\ndef add(a, b):\n    return a + b\n```"
    assert code_tests(reply, TESTS, sandbox=sandbox) == 1.0
    assert not hasattr(builtins, "GHOST_CANARY")  # an in-process exec would have set it here


def test_malformed_code_tasks_raise(sandbox: RecordingSandbox) -> None:
    with pytest.raises(ValueError, match="test program"):
        code_tests("def add(a, b): return a + b", "", sandbox=sandbox)
    with pytest.raises(ValueError, match="identifier"):
        code_tests("x", TESTS, entry_point="add; import os", sandbox=sandbox)


def test_extract_code_is_the_shared_one() -> None:
    reply = "Intro\n```bash\nls\n```\n```python\ndef f():\n    return 1\n```\n"
    assert extract_code(reply).strip() == "def f():\n    return 1"


# --- answer_line ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "number"), [
    ("Step 1: 3 + 4 = 7.\nAnswer: 7", 7.0),
    ("**Answer:** 12.5", 12.5),
    ("**Answer: 12.50**", 12.5),
    ("Answer: $1,234.50", 1234.5),
    ("answer - no wait.\nAnswer = -3", -3.0),
    ("Final answer: 42 km.", 42.0),
    ("  > **Final Answer**: $0.90", 0.9),
    ("- **Answer:** 3", 3.0),
    ("Answer: 5 dollars.", 5.0),
    ("Answer: .75", 0.75),
    ("Answer: 7\nActually I made a slip.\nAnswer: 8", 8.0),  # the last line wins
    ("Answer: 10\nThat is the change Ava gets.", 10.0),
])
def test_answer_line_finds_the_last_answer_line(reply: str, number: float) -> None:
    assert extract_answer_line(reply) == number
    assert answer_line(reply, number) == 1.0
    assert answer_line(reply, number + 1) == 0.0


@pytest.mark.parametrize("reply", [
    "The answer is 42.",  # the line must start with the label
    "So we get 42.\n42",
    "Answer: forty-two",
    "Answer:\n42",
    "",
    "Solve it step by step, then end your reply with a line of the form `Answer: <number>`.",
])
def test_no_answer_line_scores_zero(reply: str) -> None:
    assert extract_answer_line(reply) is None
    assert answer_line(reply, 42) == 0.0


def test_answer_line_tolerance_and_malformed_expectations() -> None:
    assert answer_line("Answer: 28.45", 28.45) == 1.0
    assert answer_line("Answer: 28.4500001", "28.45") == 1.0  # within the default relative 1e-6
    assert answer_line("Answer: 28.46", 28.45) == 0.0
    assert answer_line("Answer: 28.46", 28.45, abs_tolerance=0.05) == 1.0
    for bad in (None, True, "n/a", [1]):
        with pytest.raises(ValueError, match="answer_line"):
            answer_line("Answer: 1", bad)


def test_a_missing_answer_line_is_a_format_error_and_a_wrong_one_a_discard() -> None:
    adapter = RewardAdapter(answer_line)
    assert adapter.score({"predicted": "It comes to 12.", "expected": 12}).failure_class is FailureLabel.FORMAT_ERROR
    assert adapter.score({"predicted": "Answer: 13", "expected": 12}).failure_class is FailureLabel.DISCARD
    assert adapter.score({"predicted": "Answer: 12", "expected": 12}).failure_class is FailureLabel.KEEP


@pytest.mark.parametrize(("reply", "compliant"), [
    ("Work...\nAnswer: 12", True),
    ("Work...\n**Answer:** $12.50\n\n", True),
    ("Answer: 12\nHope this helps!", False),  # right number, but not the reply's last line
    ("The answer is 12.", False),
    ("", False),
])
def test_has_answer_line_is_strict_about_the_last_line(reply: str, compliant: bool) -> None:
    assert has_answer_line(reply) is compliant


# --- internal_text_leaks / delivered ----------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    '{"tool": "python", "args": {"code": "print(1)"}}',
    'Sure!\n```json\n{ "answer": "Canberra" }\n```',
    '{"name": "bash", "arguments": {"command": "ls"}}',
    "{'action': 'final_answer', 'action_input': 'hi'}",
    "I stopped because I was about to repeat a failing python call (boom). [ATTEMPT_ABORTED_LOOP]",
    "Tool result (python):\n42",
    "Instructions from the client:\nbe brief",
    "Choose the next step.",
    "(the model gave no usable reply)",
    "(stopped after 6 tool calls without a final answer)",
    "<ghost-notes> The function counts vowels.",
])
def test_internal_text_leaks_are_found(reply: str) -> None:
    assert internal_text_leaks(reply)


@pytest.mark.parametrize("reply", [
    "The capital of Australia is Canberra.",
    "Use a dict: `{'name': 'Ada', 'age': 36}` and json.dumps(data).",
    'Return {"status": "ok"} from the endpoint.',
    "The tool you want is `grep -c`; the answer is 3.",
])
def test_ordinary_replies_leak_nothing(reply: str) -> None:
    assert internal_text_leaks(reply) == []


def test_the_leak_markers_are_the_agents_own() -> None:
    """The verifier keeps the agent's texts as literals (it judges the daemon from outside): they must still be
    what the agent emits."""
    from ghost_agent.agent.tool_loop.loop import LOOP_MARKER
    from ghost_agent.agent.tool_loop.prompting import CLIENT_INSTRUCTIONS

    assert internal_text_leaks(f"x {LOOP_MARKER}") and internal_text_leaks(CLIENT_INSTRUCTIONS)
    from ghost_agent.memory.bus import CLOSE, HEADER, OPEN

    assert all(internal_text_leaks(f"x {marker} y") for marker in (OPEN, CLOSE, HEADER))


def test_delivered_fails_a_leak_whatever_the_checks_say() -> None:
    checks = [{"kind": "contains", "any": ["Canberra"]}]
    assert delivered("The capital is Canberra.", checks) == 1.0
    assert delivered('The capital is Canberra.\n{"answer": "Canberra"}', checks) == 0.0
    assert delivered("Canberra [ATTEMPT_ABORTED_LOOP]", checks) == 0.0
    with pytest.raises(ValueError, match="unknown check"):
        delivered('{"tool": "python"}', [{"kind": "vibes"}])  # a broken task is still reported as one
