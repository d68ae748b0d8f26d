"""The checks: what `selfplay/checks.py` adds for the templates, proved in the real sandbox."""

from __future__ import annotations

from ghost_agent.sandbox import SandboxBackend
from ghost_agent.selfplay.checks import CheckEnv, ScriptOutput
from tests.conftest import sandbox  # noqa: F401 - the module-scoped fixture


def test_script_output_hidden_files_replace_the_shown_data(sandbox: SandboxBackend) -> None:  # noqa: F811
    env = CheckEnv(sandbox=sandbox, files={"n.txt": "1\n2\n3\n", "keep.txt": "k\n"})
    check = ScriptOutput("bash", "5\n", hidden_files={"n.txt": "a\nb\nc\nd\ne\n"})
    assert check.score("```bash\nwc -l < n.txt\n```", env).score == 1.0
    assert check.score("```bash\necho 3\n```", env).score == 0.0  # the count it saw, hardcoded
    # files the overlay does not name are still there
    assert ScriptOutput("bash", "k\n", hidden_files={"n.txt": ""}).score("cat keep.txt", env).score == 1.0
    assert ScriptOutput("bash", "3\n").score("wc -l < n.txt", env).score == 1.0  # no overlay: the task's files


def test_bash_checks_find_awk_in_the_sandbox(sandbox: SandboxBackend) -> None:  # noqa: F811
    env = CheckEnv(sandbox=sandbox, files={"t.csv": "a,1\nb,2\n"})
    check = ScriptOutput("bash", "3\n")
    assert check.score("```bash\nawk -F, '{ s += $2 } END { print s }' t.csv\n```", env).score == 1.0
    piped = "```bash\ncut -d, -f2 t.csv | xargs -n1 echo | bash -c \"awk '{ s += \\$1 } END { print s }'\"\n```"
    assert check.score(piped, env).score == 1.0  # a child bash sees it too


def test_sql_rows_compare_numbers_by_value(sandbox: SandboxBackend) -> None:  # noqa: F811
    from ghost_agent.selfplay.checks import SqlRows

    env = CheckEnv(sandbox=sandbox, files={"setup.sql": "CREATE TABLE t (n INT, x REAL);\n"
                                                        "INSERT INTO t VALUES (3, 1.5), (4, 2.0);\n"})
    check = SqlRows(expected_rows=((3, 1.5), (4, 2)), ordered=True)
    assert check.score("```sql\nSELECT n, x FROM t ORDER BY n\n```", env).score == 1.0
    assert check.score("```sql\nSELECT n * 1.0, x FROM t ORDER BY n\n```", env).score == 1.0  # 3.0 is 3
    assert check.score("```sql\nSELECT n, x FROM t ORDER BY n DESC\n```", env).score == 0.0  # order counts
    assert check.score("SELECT n + 1, x FROM t ORDER BY n", env).score == 0.0


def test_regex_in_reads_the_pattern_a_python_snippet_uses() -> None:
    from ghost_agent.selfplay.checks import regex_in

    snippet = ("Sure:\n```python\nimport re\n\ndef ok(s):\n    pattern = re.compile(r'^\\d{2}/\\d{2}/\\d{4}$')\n"
               "    return bool(pattern.match(s))\n```\n")
    assert regex_in(snippet) == r"^\d{2}/\d{2}/\d{4}$"  # not "import re", the block's first line
    assert regex_in("```python\nimport re\nDATE_RX = r\"\\d+-\\d+\"\nre.findall(DATE_RX, text)\n```") == r"\d+-\d+"
    assert regex_in('```python\nm = re.fullmatch(r"[a-z]+\\"?", s)\n```') == r'[a-z]+\"?'
    assert regex_in("```\n^[A-Z]{3}-\\d{4}$\n```") == r"^[A-Z]{3}-\d{4}$"  # a bare pattern block as before
    assert regex_in("Use `/^a+b$/i` for that.") == "^a+b$"
    assert regex_in("```python\nprint('no pattern here')\n```") == "print('no pattern here')"
