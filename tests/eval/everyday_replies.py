"""Hand-written replies for the `everyday` suite: a good one per task (in the shapes real chat models answer in:
prose around fenced code, markdown lists, bold), plus the bad shapes every task must fail."""

from __future__ import annotations

FENCE = "```"


def py(code: str, intro: str = "Here you go:", outro: str = "") -> str:
    return f"{intro}\n\n{FENCE}python\n{code.strip()}\n{FENCE}\n\n{outro}".strip()


GOOD_REPLIES: dict[str, str] = {
    # --- code
    "everyday/code/is-prime": py('''
def is_prime(n: int) -> bool:
    """Return True if n is prime."""
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


print(is_prime(7))  # True
''', outro="It trial-divides up to the square root of n."),
    "everyday/code/reverse-string": py("def reverse_string(s: str) -> str:\n    return s[::-1]\n",
                                       intro="Slicing with a step of -1 does it:"),
    "everyday/code/largest": py('''
def largest(numbers: list[int]) -> int:
    best = numbers[0]
    for n in numbers[1:]:
        if n > best:
            best = n
    return best

if __name__ == "__main__":
    print(largest([3, 10, 2]))  # 10
'''),
    "everyday/code/fizzbuzz": py('''
def fizzbuzz(n: int) -> list[str]:
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
'''),
    "everyday/code/word-count": py('''
from collections import Counter


def word_count(text: str) -> dict[str, int]:
    return dict(Counter(word.lower() for word in text.split()))
''', intro="**Solution** using `collections.Counter`:"),
    "everyday/code/flatten": py('''
def flatten(nested: list) -> list:
    flat = []
    for item in nested:
        if isinstance(item, list):
            flat.extend(flatten(item))
        else:
            flat.append(item)
    return flat
''', outro="Strings are kept whole because only lists are descended into."),
    "everyday/code/palindrome": py('''
def is_palindrome(s: str) -> bool:
    cleaned = [c.lower() for c in s if c.isalnum()]
    return cleaned == cleaned[::-1]
'''),
    "everyday/code/celsius-to-fahrenheit": py('''
def celsius_to_fahrenheit(c: float) -> float:
    return c * 9 / 5 + 32
''', intro="The formula is F = C × 9/5 + 32:"),
    # --- tests
    "everyday/tests/slugify": py('''
from slugify import slugify


def test_basic():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_and_edges():
    assert slugify("  Hello, World!  ") == "hello-world"
    assert slugify("---") == ""
    assert slugify("Python 3.12 Release") == "python-3-12-release"
''', intro="Here are pytest tests:", outro="Run them with `pytest`."),
    "everyday/tests/median": py('''
import pytest

def test_odd_length():
    assert median([3, 1, 2]) == 2

def test_even_length():
    assert median([4, 1, 3, 2]) == 2.5

def test_single_and_negative():
    assert median([7]) == 7
    assert median([-5, -1, -3]) == -3
    assert median([1.5, 2.5]) == pytest.approx(2.0)
'''),
    "everyday/tests/leap-year": py('''
assert is_leap_year(2024)
assert not is_leap_year(2023)
assert not is_leap_year(1900)
assert is_leap_year(2000)
''', intro="A few asserts covering the century rule:"),
    # --- sql
    "everyday/sql/employees-per-dept": "```sql\nSELECT dept, COUNT(*) AS n\nFROM employees\nGROUP BY dept;\n```",
    "everyday/sql/top-three-salaries": (
        "Order by salary descending and keep three rows:\n\n```sql\n-- top earners\nSELECT name\nFROM employees\n"
        "ORDER BY salary DESC\nLIMIT 3;\n```\n\nThat gives Flo, Ana and Bo."),
    "everyday/sql/big-customers": (
        "```sql\nSELECT c.name, SUM(o.amount) AS total\nFROM customers c\nJOIN orders o ON o.customer_id = c.id\n"
        "GROUP BY c.id, c.name\nHAVING SUM(o.amount) > 60;\n```"),
    "everyday/sql/customers-without-orders": (
        "Use a LEFT JOIN and keep the rows with no match:\n\n```sql\nSELECT c.name\nFROM customers AS c\n"
        "LEFT JOIN orders AS o ON o.customer_id = c.id\nWHERE o.id IS NULL;\n```"),
    # --- shell
    "everyday/shell/count-lines": "Use `wc`:\n\n```bash\nwc -l access.log\n```\n\nIt prints the count then the name.",
    "everyday/shell/count-error-lines": "```bash\ngrep -c 'ERROR' app.log\n```",
    "everyday/shell/find-python-files": "Use `find`:\n\n```sh\nfind . -type f -name '*.py'\n```",
    "everyday/shell/replace-in-file": "With GNU sed:\n\n```bash\nsed -i 's/foo/bar/g' config.txt\n```",
    # --- regex
    "everyday/regex/us-zip": (
        "Use `^\\d{5}(?:-\\d{4})?$`.\n\n```python\nimport re\nZIP = re.compile(r\"^\\d{5}(-\\d{4})?$\")\n"
        "print(bool(ZIP.match('12345-6789')))\n```"),
    "everyday/regex/iso-date": (
        "```python\nDATE = r\"^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$\"\n```\n"
        "It does not check the month's length (2024-02-31 passes)."),
    "everyday/regex/hex-color": "Pattern: `^#(?:[0-9a-fA-F]{3}){1,2}$` - three or six hex digits after the '#'.",
    # --- explain
    "everyday/explain/recursion": (
        "Recursion is when a function solves a problem by calling itself on a smaller version of the same problem. "
        "Every recursive function needs a **base case**: an input simple enough to answer directly, which stops "
        "the chain of calls. For example, factorial(n) returns 1 when n is 0, and otherwise n * factorial(n - 1). "
        "Without a base case the calls never end and the program runs out of stack space."),
    "everyday/explain/list-vs-tuple": (
        "The main difference is that a list is **mutable** - you can add, remove and change its elements - while "
        "a tuple is immutable: once created it cannot be changed. Lists use square brackets, tuples parentheses. "
        "Because they are immutable, tuples can be used as dictionary keys and are slightly faster."),
    "everyday/explain/what-is-an-api": (
        "An API (application programming interface) is a set of rules that lets one program talk to another. "
        "Think of a waiter in a restaurant: you don't go into the kitchen, you give the waiter your order, the "
        "waiter takes the request to the kitchen and brings back your food. A weather app works the same way: it "
        "sends a request to a weather service's API and gets back the forecast, without knowing how the service "
        "works inside."),
    "everyday/explain/git-branches": (
        "Branches let you work on something - a feature, a bug fix, an experiment - in an isolated line of "
        "development without affecting the main code. Several people can work in parallel on their own branches, "
        "and when the work is ready you merge the branch back into main (often through a pull request)."),
    "everyday/explain/http-vs-https": (
        "HTTP sends data between your browser and a website as plain text, so anyone on the network path can read "
        "or modify it. HTTPS is HTTP over TLS: the connection is encrypted, and the site proves its identity "
        "with a certificate, so passwords and card numbers stay private and cannot be tampered with."),
    # --- convert
    "everyday/convert/miles-to-km": "5 miles × 1.609344 = **8.05 km** (8.04672 before rounding).",
    "everyday/convert/fahrenheit-to-celsius": "(98.6 − 32) × 5/9 = 37 °C.",
    "everyday/convert/hours-to-minutes": "2.75 hours × 60 = 165 minutes.",
    "everyday/convert/format-thousands": "`1,234,567.89` (in Python: `f\"{1234567.891:,.2f}\"`).",
    # --- list
    "everyday/list/programming-languages": "1. Python\n2. JavaScript\n3. Rust\n4. Go\n5. Java",
    "everyday/list/sleep-tips": (
        "Here are three tips:\n\n- **Keep a schedule**: go to bed and wake up at the same time.\n"
        "- **Avoid screens** for an hour before bed.\n- **Cut caffeine** after early afternoon."),
    "everyday/list/planets": "\n".join(f"{i}. {p}" for i, p in enumerate(
        ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"], start=1)),
    "everyday/list/weekdays": "\n".join(f"- {d}" for d in
                                        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
    # --- facts
    "everyday/facts/capital-of-australia": "The capital of Australia is Canberra.",
    "everyday/facts/gold-symbol": "Gold's chemical symbol is **Au**, from the Latin *aurum*.",
    "everyday/facts/pride-and-prejudice": "Pride and Prejudice was written by Jane Austen and published in 1813.",
    "everyday/facts/largest-planet": "Jupiter is the largest planet in our solar system.",
    "everyday/facts/moon-landing": "Humans first landed on the Moon in 1969 (Apollo 11, 20 July).",
    # --- arithmetic
    "everyday/arithmetic/percent": "17% of 240 = 0.17 × 240 = **40.8**",
    "everyday/arithmetic/order-of-operations": "Division and multiplication first: 144 / 12 = 12, 7 * 3 = 21, so "
                                               "12 + 21 = 33.",
    "everyday/arithmetic/power": "2^10 = 1,024.",
    "everyday/arithmetic/average": "(12 + 15 + 22 + 31) / 4 = 80 / 4 = 20.",
}

# The result instead of the code: what a model that ran its function and reported the output would send.
OUTPUT_INSTEAD_OF_CODE: dict[str, str] = {
    "everyday/code/is-prime": "Yes, 7 is a prime number.",
    "everyday/code/reverse-string": "olleh",
    "everyday/code/largest": "The largest number is 10.",
    "everyday/code/fizzbuzz": "1, 2, Fizz, 4, Buzz, Fizz, 7, 8, Fizz, Buzz, 11, Fizz, 13, 14, FizzBuzz",
    "everyday/code/word-count": "{'the': 2, 'cat': 1, 'hat': 1}",
    "everyday/code/flatten": "[1, 2, 3, 4, 5]",
    "everyday/code/palindrome": "True - 'racecar' is a palindrome.",
    "everyday/code/celsius-to-fahrenheit": "100 °C is 212 °F.",
    "everyday/tests/slugify": "I ran the tests and all 4 passed.",
    "everyday/tests/median": "All tests pass: median([3, 1, 2]) is 2.",
    "everyday/tests/leap-year": "2024 is a leap year and 1900 is not.",
    "everyday/sql/employees-per-dept": "eng | 3\nsales | 2\nops | 2",
    "everyday/sql/top-three-salaries": "Flo, Ana, Bo",
    "everyday/sql/big-customers": "Acme 125.5, Globex 65.0, Umbrella 305.0",
    "everyday/sql/customers-without-orders": "Initech and Hooli have never ordered.",
}

# What the agent's own machinery says, shown to the user as if it were the answer.
LEAKED_ACTION = '{"tool": "python", "args": {"code": "print(1)"}}'
LEAKED_ANSWER = '{"answer": "done"}'
LEAKED_CALL = '{"name": "python", "arguments": {"code": "print(2 ** 10)"}}'
LOOP_GUARD = ("I stopped because I was about to repeat a failing python call (NameError: name 'x' is not "
              "defined). [ATTEMPT_ABORTED_LOOP]")
