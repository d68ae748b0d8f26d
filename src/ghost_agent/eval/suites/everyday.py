"""The `everyday` suite (a dev set): ordinary requests a user sends a chat assistant, each checked for whether
the reply DELIVERED what was asked - the code, the query, the command, the list - not merely something about it.

Every task uses the `delivered` verifier: `expected` is a list of checks (`eval/delivery.py`), and any reply
showing the agent's internal protocol text (an action object, the loop-guard marker, ...) fails whatever else it
holds. A function request passes only when a ```python block defines the function and it passes hidden asserts
in the sandbox, so "The largest number is 10" in place of the code fails; test-writing replies must run green
against a correct implementation; SQL runs on sqlite3 with the prompt's schema and data; a regex is tried on
positive and negative strings. Clusters: code, tests, sql, shell, regex, explain, convert, list, facts,
arithmetic. No expected answer appears in its prompt, so the stub runner's echo fails every task.
"""

from __future__ import annotations

import copy
from typing import Any

from ghost_agent.eval.task import EvalTask

SUITE = "everyday"
CLUSTERS = ("code", "tests", "sql", "shell", "regex", "explain", "convert", "list", "facts", "arithmetic")

Checks = list[dict[str, Any]]


def _function(name: str, tests: str) -> Checks:
    return [{"kind": "function", "name": name, "tests": tests}]


# --- code: cluster, slug, prompt, checks -------------------------------------------------------------------------

_CODE: tuple[tuple[str, str, Checks], ...] = (
    ("is-prime", "Write a Python function `is_prime(n: int) -> bool` that returns True when n is a prime number.",
     _function("is_prime", "assert [p for p in range(30) if is_prime(p)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]\n"
               "assert not is_prime(-7) and not is_prime(91) and is_prime(97) and is_prime(7919)\n")),
    ("reverse-string", "I need a Python function `reverse_string(s: str) -> str` that returns the string reversed.",
     _function("reverse_string", "assert reverse_string('hello') == 'olleh'\nassert reverse_string('') == ''\n"
               "assert reverse_string('ab c') == 'c ba'\n")),
    ("largest", "Write a Python function `largest(numbers: list[int]) -> int` that returns the largest number in a "
     "non-empty list, for example `largest([3, 10, 2])`.",
     _function("largest", "assert largest([3, 10, 2]) == 10\nassert largest([-5, -2, -9]) == -2\n"
               "assert largest([7]) == 7\nassert largest([1, 1, 0]) == 1\n")),
    ("fizzbuzz", "Write a Python function `fizzbuzz(n: int) -> list[str]` that returns the FizzBuzz sequence from 1 "
     "to n as strings: 'Fizz' for multiples of 3, 'Buzz' for multiples of 5, 'FizzBuzz' for multiples of both, "
     "otherwise the number itself.",
     _function("fizzbuzz", "assert fizzbuzz(5) == ['1', '2', 'Fizz', '4', 'Buzz']\n"
               "assert fizzbuzz(15)[-1] == 'FizzBuzz' and fizzbuzz(15)[8] == 'Fizz'\n"
               "assert len(fizzbuzz(100)) == 100 and fizzbuzz(0) == []\n")),
    ("word-count", "Write a Python function `word_count(text: str) -> dict[str, int]` that counts how often each word "
     "occurs. Words are separated by whitespace and compared case-insensitively; use lower-case keys.",
     _function("word_count", "assert word_count('the cat the hat') == {'the': 2, 'cat': 1, 'hat': 1}\n"
               "assert word_count('A a A') == {'a': 3}\nassert word_count('') == {}\n"
               "assert word_count('one\\ntwo  one') == {'one': 2, 'two': 1}\n")),
    ("flatten", "Please write a Python function `flatten(nested: list) -> list` that flattens an arbitrarily deeply "
     "nested list of lists into one flat list, keeping the order of the elements.",
     _function("flatten", "assert flatten([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]\nassert flatten([]) == []\n"
               "assert flatten([[], [[]]]) == []\nassert flatten(['ab', ['cd']]) == ['ab', 'cd']\n")),
    ("palindrome", "Write a Python function `is_palindrome(s: str) -> bool` that checks whether a string is a "
     "palindrome, ignoring case, spaces and punctuation.",
     _function("is_palindrome", "assert is_palindrome('A man, a plan, a canal: Panama')\n"
               "assert is_palindrome('racecar') and is_palindrome(\"No 'x' in Nixon\")\n"
               "assert not is_palindrome('hello') and not is_palindrome('ab')\n")),
    ("celsius-to-fahrenheit", "Write a Python function `celsius_to_fahrenheit(c: float) -> float` that converts a "
     "temperature from Celsius to Fahrenheit.",
     _function("celsius_to_fahrenheit", "assert celsius_to_fahrenheit(0) == 32\n"
               "assert celsius_to_fahrenheit(100) == 212\nassert celsius_to_fahrenheit(-40) == -40\n"
               "assert abs(celsius_to_fahrenheit(37) - 98.6) < 1e-9\n")),
)

# --- tests: the function is given; the reply's tests must run green against it -----------------------------------

SLUGIFY = '''import re


def slugify(title: str) -> str:
    """Lower-case; each run of characters other than a-z and 0-9 becomes one '-'; no '-' at either end."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
'''
MEDIAN = '''def median(values: list[float]) -> float:
    """The median of a non-empty list: the middle value, or the mean of the two middle values."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
'''
LEAP_YEAR = '''def is_leap_year(year: int) -> bool:
    """Gregorian leap years: divisible by 4, except century years unless divisible by 400."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
'''


def _tests_task(slug: str, name: str, source: str) -> tuple[str, str, Checks]:
    prompt = (f"Write unit tests for this function: pytest-style test functions with plain assert statements, "
              f"covering normal cases and edge cases.\n\n```python\n{source}```")
    return slug, prompt, [{"kind": "tests", "name": name, "reference": source, "min_asserts": 2}]


_TESTS = (
    _tests_task("slugify", "slugify", SLUGIFY),
    _tests_task("median", "median", MEDIAN),
    _tests_task("leap-year", "is_leap_year", LEAP_YEAR),
)

# --- sql: the schema and data are in the prompt; the query runs on them ----------------------------------------

EMPLOYEES = """CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary INTEGER);
INSERT INTO employees VALUES
  (1, 'Ana', 'eng', 120000), (2, 'Bo', 'eng', 95000), (3, 'Cy', 'sales', 70000), (4, 'Di', 'sales', 82000),
  (5, 'Ed', 'ops', 64000), (6, 'Flo', 'eng', 130000), (7, 'Gil', 'ops', 71000);
"""
SHOP = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);
INSERT INTO customers VALUES (1, 'Acme'), (2, 'Globex'), (3, 'Initech'), (4, 'Umbrella'), (5, 'Hooli');
INSERT INTO orders VALUES
  (1, 1, 40.0), (2, 1, 75.5), (3, 2, 20.0), (4, 4, 300.0), (5, 2, 45.0), (6, 1, 10.0), (7, 4, 5.0);
"""


def _sql_task(slug: str, schema: str, ask: str, rows: list[list[Any]], ordered: bool = False) -> tuple[
        str, str, Checks]:
    prompt = f"I have this SQLite database:\n\n```sql\n{schema}```\n\n{ask}"
    return slug, prompt, [{"kind": "sql", "schema": schema, "rows": rows, "ordered": ordered}]


_SQL = (
    _sql_task("employees-per-dept", EMPLOYEES,
              "Write a query that returns each department and its number of employees (columns: dept, n).",
              [["eng", 3], ["sales", 2], ["ops", 2]]),
    _sql_task("top-three-salaries", EMPLOYEES,
              "Write a query that returns the names of the three highest-paid employees, highest salary first "
              "(one column: name).", [["Flo"], ["Ana"], ["Bo"]], ordered=True),
    _sql_task("big-customers", SHOP,
              "Write a query that returns each customer's name and total order amount, only for customers whose "
              "total is over 60 (columns: name, total).", [["Acme", 125.5], ["Globex", 65.0], ["Umbrella", 305.0]]),
    _sql_task("customers-without-orders", SHOP,
              "Write a query that returns the names of the customers who have never placed an order (one column: "
              "name).", [["Initech"], ["Hooli"]]),
)

# --- shell: the command and its flags appear in the reply's code --------------------------------------------------

_SHELL: tuple[tuple[str, str, Checks], ...] = (
    ("count-lines", "What shell command counts the number of lines in the file access.log?",
     [{"kind": "shell", "patterns": [r"\bwc\b[^\n]*\s-(?:\w*l|-lines)|\bgrep\b[^\n]*\s-\w*c|\bawk\b[^\n]*\bNR\b",
                                     r"access\.log"]}]),
    ("count-error-lines", "Give me a one-line shell command that counts how many lines of app.log contain ERROR.",
     [{"kind": "shell", "patterns": [r"\bgrep\b", r"ERROR", r"\s-[a-zA-Z]*c[a-zA-Z]*\b|--count|\|\s*wc\s+-l",
                                     r"app\.log"]}]),
    ("find-python-files", "How do I list all Python (.py) files under the current directory, including "
     "subdirectories, from the command line?",
     [{"kind": "shell", "patterns": [r"\bfind\b[^\n]*-i?name\s+['\"]?\*\.py|\bfd\b[^\n]*(?:-e\s*py|\.py)"
                                     r"|\*\*/\*\.py"]}]),
    ("replace-in-file", "Give me a shell command that replaces every occurrence of foo with bar in config.txt, "
     "editing the file in place.",
     [{"kind": "shell", "patterns": [r"\bsed\b[^\n]*\s-i|\bperl\b[^\n]*\s-\w*i", r"s([/|#:,])foo\1bar\1",
                                     r"config\.txt"]}]),
)

# --- regex: the pattern is tried on strings it must and must not match --------------------------------------------

_REGEX: tuple[tuple[str, str, Checks], ...] = (
    ("us-zip", "Write a regular expression (Python syntax) for a US ZIP code: exactly five digits, optionally "
     "followed by a hyphen and four more digits. It should match the whole string.",
     [{"kind": "regex", "mode": "fullmatch", "positives": ["12345", "02139", "12345-6789"],
       "negatives": ["1234", "123456", "12345-678", "abcde", "12345-"]}]),
    ("iso-date", "I need a regex (Python) that matches a date written as YYYY-MM-DD, with the month 01-12 and the "
     "day 01-31. It should match the whole string.",
     [{"kind": "regex", "mode": "fullmatch", "positives": ["2024-01-31", "1999-12-01", "2000-10-15"],
       "negatives": ["2024-13-01", "2024-1-5", "24-01-01", "2024-00-10", "2024-01-32", "2024/01/01"]}]),
    ("hex-color", "Write a Python regular expression that matches a CSS hex color: a '#' followed by exactly 3 or 6 "
     "hexadecimal digits (the whole string).",
     [{"kind": "regex", "mode": "fullmatch", "positives": ["#fff", "#1A2b3C", "#000000"],
       "negatives": ["fff", "#ffff", "#12345g", "#1234567", "#"]}]),
)

# --- explain: key ideas present (any of a few synonyms) and long enough -------------------------------------------


def _explain(slug: str, prompt: str, groups: list[list[str]], min_words: int) -> tuple[str, str, Checks]:
    return slug, prompt, [{"kind": "terms", "groups": groups, "min_words": min_words}]


_EXPLAIN = (
    _explain("recursion", "Explain what recursion is in programming.",
             [["itself"], ["base case", "stopping condition", "terminat", "stops"]], 40),
    _explain("list-vs-tuple", "What's the difference between a list and a tuple in Python?",
             [["mutable", "cannot be changed", "can't be changed", "can be changed"]], 30),
    _explain("what-is-an-api", "Explain what an API is to someone who doesn't program.",
             [["interface"], ["request", "communicat", "talk", "exchange"]], 40),
    _explain("git-branches", "What are branches in Git used for?",
             [["merge", "merging"], ["parallel", "independent", "isolat", "separate", "without affecting"]], 30),
    _explain("http-vs-https", "Explain the difference between HTTP and HTTPS.",
             [["encrypt"], ["TLS", "SSL", "certificate"]], 30),
)

# --- convert / arithmetic: the value somewhere in the reply; list: enough items; facts: the answer ----------------

_CONVERT: tuple[tuple[str, str, Checks], ...] = (
    ("miles-to-km", "How many kilometres is 5 miles? Round to two decimal places.",
     [{"kind": "number", "value": 8.05, "abs_tolerance": 0.006}]),
    ("fahrenheit-to-celsius", "Convert 98.6 °F to Celsius.", [{"kind": "number", "value": 37, "abs_tolerance": 0.01}]),
    ("hours-to-minutes", "How many minutes are there in 2.75 hours?", [{"kind": "number", "value": 165}]),
    ("format-thousands", "Format the number 1234567.891 with comma thousands separators and two decimal places.",
     [{"kind": "contains", "any": ["1,234,567.89"]}]),
)

_PLANETS = ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_LIST: tuple[tuple[str, str, Checks], ...] = (
    ("programming-languages", "List five programming languages.", [{"kind": "list", "min_items": 5}]),
    ("sleep-tips", "Give me three tips for sleeping better.", [{"kind": "list", "min_items": 3}]),
    ("planets", "List the planets of the solar system in order from the Sun.",
     [{"kind": "list", "min_items": 8}, {"kind": "contains", "all": _PLANETS}]),
    ("weekdays", "List the days of the week, starting with Monday.",
     [{"kind": "list", "min_items": 7}, {"kind": "contains", "all": _DAYS}]),
)

_FACTS: tuple[tuple[str, str, Checks], ...] = (
    ("capital-of-australia", "What is the capital of Australia?", [{"kind": "contains", "any": ["Canberra"]}]),
    ("gold-symbol", "What is the chemical symbol for gold?",
     [{"kind": "contains", "any": ["Au"], "case_sensitive": True}]),
    ("pride-and-prejudice", "Who wrote the novel Pride and Prejudice?", [{"kind": "contains", "any": ["Austen"]}]),
    ("largest-planet", "Which is the largest planet in our solar system?", [{"kind": "contains", "any": ["Jupiter"]}]),
    ("moon-landing", "In what year did humans first land on the Moon?", [{"kind": "contains", "any": ["1969"]}]),
)

_ARITHMETIC: tuple[tuple[str, str, Checks], ...] = (
    ("percent", "What is 17% of 240?", [{"kind": "number", "value": 40.8}]),
    ("order-of-operations", "What is 144 / 12 + 7 * 3?", [{"kind": "number", "value": 33}]),
    ("power", "What is 2 to the power of 10?", [{"kind": "number", "value": 1024}]),
    ("average", "What is the average of 12, 15, 22 and 31?", [{"kind": "number", "value": 20}]),
)

_BY_CLUSTER: dict[str, tuple[tuple[str, str, Checks], ...]] = {
    "code": _CODE, "tests": _TESTS, "sql": _SQL, "shell": _SHELL, "regex": _REGEX, "explain": _EXPLAIN,
    "convert": _CONVERT, "list": _LIST, "facts": _FACTS, "arithmetic": _ARITHMETIC,
}


def tasks() -> list[EvalTask]:
    """Every task, cluster by cluster (CLUSTERS order), ids "everyday/<cluster>/<slug>"; each call builds fresh
    check lists, so a caller mutating one cannot change the next load."""
    return [
        EvalTask(id=f"{SUITE}/{cluster}/{slug}", suite=SUITE, cluster=cluster, prompt=prompt, verifier="delivered",
                 expected=copy.deepcopy(checks))
        for cluster in CLUSTERS
        for slug, prompt, checks in _BY_CLUSTER[cluster]
    ]


__all__ = ["CLUSTERS", "LEAP_YEAR", "MEDIAN", "SLUGIFY", "SUITE", "tasks"]
