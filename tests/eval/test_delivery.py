"""The `delivered` checks one kind at a time: what each accepts and refuses, malformed check lists, and the
checks that execute reply text doing so in the sandbox under a time limit."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ghost_agent.eval.delivery import CHECK_KINDS, failed_checks
from ghost_agent.sandbox import SandboxBackend
from tests.eval.everyday_replies import py

SCHEMA = """CREATE TABLE t (k TEXT, v INTEGER);
INSERT INTO t VALUES ('a', 1), ('a', 2), ('b', 5);
"""


def passes(reply: str, *checks: dict[str, Any], sandbox: SandboxBackend | None = None, **kw: Any) -> bool:
    return failed_checks(reply, list(checks), sandbox=sandbox, **kw) == []


def test_the_kinds() -> None:
    assert set(CHECK_KINDS) == {"function", "tests", "sql", "shell", "regex", "terms", "number", "list", "contains"}


@pytest.mark.parametrize("checks", [None, "contains", [], [{"kind": "vibes"}], ["contains"], {"kind": "list"}])
def test_malformed_check_lists_raise(checks: Any) -> None:
    with pytest.raises(ValueError, match="delivered"):
        failed_checks("reply", checks)


def test_a_check_missing_a_field_raises() -> None:
    with pytest.raises(ValueError, match="'any' or 'all'"):
        failed_checks("x", [{"kind": "contains"}])
    with pytest.raises(ValueError, match="min_items"):
        failed_checks("x", [{"kind": "list"}])


# --- checks that run reply text in the sandbox ------------------------------------------------------------------

ADD = {"kind": "function", "name": "add", "tests": "assert add(2, 3) == 5\n"}


def test_function_needs_a_fenced_python_definition(sandbox: SandboxBackend) -> None:
    assert passes(py("def add(a, b):\n    return a + b"), ADD, sandbox=sandbox)
    assert not passes("def add(a, b):\n    return a + b\n", ADD, sandbox=sandbox)  # no fence
    assert not passes("```bash\ndef add(a, b):\n    return a + b\n```", ADD, sandbox=sandbox)
    assert not passes(py("def plus(a, b):\n    return a + b"), ADD, sandbox=sandbox)
    draft_then_fix = py("def add(a, b):\n    return a - b") + "\n\nOops, fixed:\n\n" + py("def add(a, b):\n    "
                                                                                       "return a + b")
    assert passes(draft_then_fix, ADD, sandbox=sandbox)
    assert not passes(py("def add(a, b):\n    return a - b"), ADD, sandbox=sandbox)


def test_tests_run_against_the_reference(sandbox: SandboxBackend) -> None:
    check = {"kind": "tests", "name": "double", "reference": "def double(x):\n    return 2 * x\n"}
    assert passes(py("from mymodule import double\n\nassert double(2) == 4\nassert double(0) == 0"), check,
                  sandbox=sandbox)
    unittest_style = py("import unittest\n\nclass T(unittest.TestCase):\n    def test_it(self):\n"
                        "        self.assertEqual(double(3), 6)\n        self.assertEqual(double(-1), -2)\n\n"
                        "if __name__ == '__main__':\n    unittest.main()")
    assert passes(unittest_style, check, sandbox=sandbox)
    failing_unittest = unittest_style.replace("6)", "7)").replace("if __name__ == '__main__':\n    unittest.main()",
                                                                  "")
    assert not passes(failing_unittest, check, sandbox=sandbox)
    # a test function is called even when nothing calls it in the reply
    assert not passes(py("def test_it():\n    assert double(3) == 7"), check, sandbox=sandbox)
    assert not passes(py("assert double(2) == 4"), check, sandbox=sandbox)  # one assert is not a test suite


def test_sql_runs_the_query_on_the_schema(sandbox: SandboxBackend) -> None:
    grouped = {"kind": "sql", "schema": SCHEMA, "rows": [["a", 3], ["b", 5]]}
    assert passes("```sql\nSELECT k, SUM(v) FROM t GROUP BY k;\n```", grouped, sandbox=sandbox)
    assert passes("```sql\nSELECT k, SUM(v) FROM t GROUP BY k ORDER BY k DESC;\n```", grouped, sandbox=sandbox)
    assert not passes("```sql\nSELECT k, SUM(v) FROM t GROUP BY k ORDER BY k DESC;\n```",
                      {**grouped, "ordered": True}, sandbox=sandbox)
    assert passes("Run SELECT k, SUM(v) FROM t GROUP BY k; on it.", grouped, sandbox=sandbox)  # unfenced
    # the reply repeating the schema before its query; AVG's float equals an integer row value
    assert passes(f"```sql\n{SCHEMA}\nSELECT k, AVG(v) * COUNT(*) FROM t GROUP BY k;\n```", grouped, sandbox=sandbox)
    assert not passes("```sql\nSELECT k, COUNT(*) FROM t GROUP BY k;\n```", grouped, sandbox=sandbox)
    assert not passes("```sql\nSELEC k FROM t;\n```", grouped, sandbox=sandbox)
    assert not passes("a | 3\nb | 5", grouped, sandbox=sandbox)


def test_regex_candidates_and_modes(sandbox: SandboxBackend) -> None:
    digits = {"kind": "regex", "positives": ["123"], "negatives": ["12a", ""]}
    assert passes("`\\d+`", digits, sandbox=sandbox)
    assert passes("Use /^\\d+$/ in JavaScript.", digits, sandbox=sandbox)
    assert passes(py("import re\nPATTERN = re.compile(r'^[0-9]+$')"), digits, sandbox=sandbox)
    assert passes("It is ^\\d+$.", digits, sandbox=sandbox)
    assert not passes("`\\d*`", digits, sandbox=sandbox)  # matches the empty string
    search = {"kind": "regex", "mode": "search", "positives": ["id=42;"], "negatives": ["id=;"]}
    assert passes("`id=\\d+`", search, sandbox=sandbox)


def test_a_catastrophic_pattern_times_out_in_the_sandbox(sandbox: SandboxBackend) -> None:
    check = {"kind": "regex", "mode": "search", "positives": ["aaaa"], "negatives": ["a" * 40 + "b"]}
    started = time.monotonic()
    assert not passes("`(a+)+$`", check, sandbox=sandbox, timeout_s=1.0)
    assert time.monotonic() - started < 15


# --- string checks ----------------------------------------------------------------------------------------------


def test_shell_looks_at_the_code() -> None:
    check = {"kind": "shell", "patterns": [r"\bwc\s+-l\b", r"log\.txt"]}
    assert passes("```bash\nwc -l log.txt\n```", check)
    assert passes("Run:\n```bash\nwc -l log.txt", check)  # a fence cut off by max_tokens is still code
    assert passes("Run `wc -l log.txt`.", check)
    assert passes("wc -l log.txt", check)  # no code at all: the reply itself
    assert not passes("Use `wc` on log.txt.", check)


def test_terms_stems_synonyms_and_length() -> None:
    check = {"kind": "terms", "groups": [["itself"], ["base case", "terminat"]], "min_words": 8}
    assert passes("A recursive function calls itself until it terminates at some point.", check)
    assert not passes("A recursive function calls itself.", check)
    assert not passes("It calls itself until it reaches a base case.", {**check, "min_words": 20})


def test_number_anywhere_within_tolerance() -> None:
    assert passes("That's 1,024 in total.", {"kind": "number", "value": 1024})
    assert passes("About 8.047 km", {"kind": "number", "value": 8.05, "abs_tolerance": 0.006})
    assert not passes("About 8.1 km", {"kind": "number", "value": 8.05, "abs_tolerance": 0.006})
    assert not passes("none", {"kind": "number", "value": 1})


def test_list_items() -> None:
    check = {"kind": "list", "min_items": 3}
    assert passes("- a\n- b\n- c", check)
    assert passes("1. a\n2) b\n* c", check)
    assert passes("Here:\n\n  • a\n  • b\n  • c\n\nEnjoy.", check)
    assert not passes("a, b and c", check)
    assert not passes("- a\n- b", check)


def test_contains_whole_words_any_all_and_case() -> None:
    assert passes("It is Au.", {"kind": "contains", "any": ["Au"], "case_sensitive": True})
    assert not passes("Jane Austen", {"kind": "contains", "any": ["Au"]})  # not inside a word
    assert not passes("it is au", {"kind": "contains", "any": ["Au"], "case_sensitive": True})
    assert passes("canberra", {"kind": "contains", "any": ["Canberra"]})
    assert not passes("Mercury and Venus", {"kind": "contains", "all": ["Mercury", "Venus", "Earth"]})
    assert passes("1,234,567.89", {"kind": "contains", "any": ["1,234,567.89"]})
    assert not passes("11,234,567.891", {"kind": "contains", "any": ["1,234,567.89"]})
