"""What the code-writing templates share: the hidden tests that call a reply's function on cases, and the shape
of a good reply (a sentence, then the code in a fence)."""

from __future__ import annotations

from typing import Any

from ghost_agent.selfplay.checks import PythonTests

Cases = list[tuple[tuple[Any, ...], Any]]

_CASES_TEST = """
import copy as _copy
import sys as _sys


def _plain(value):
    # a tuple and a list with the same items are the same answer
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {{k: _plain(v) for k, v in value.items()}}
    return value


def _text(value):
    # printed text: trailing spaces and blank lines at the ends are not part of the answer
    if isinstance(value, str):
        return "\\n".join(line.rstrip() for line in value.strip("\\n").splitlines()).strip("\\n")
    return _plain(value)


def _short(value):
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


_cases = {cases!r}
_failed = []
for _args, _want in _cases:
    _got = {fn}(*_copy.deepcopy(_args))
    if {same}(_got) != {same}(_want):
        _failed.append(f"{fn}{{_short(tuple(_args))}} returned {{_short(_got)}}, expected {{_short(_want)}}")
if _failed:
    print(f"{{len(_failed)}} of {{len(_cases)}} {fn} cases failed; first: {{_failed[0]}}", file=_sys.stderr)
    _sys.exit(1)
"""


def case_tests(fn: str, cases: Cases, *, text: bool = False) -> str:
    """Hidden tests: `fn(*args) == want` for each case (tuples and lists compare alike; the arguments are copied,
    so a function that mutates its input is still reported with what it was given). Cases must be literals. With
    `text`, a string result is compared as printed output is (trailing spaces, blank end lines ignored)."""
    return _CASES_TEST.format(fn=fn, cases=[(tuple(args), want) for args, want in cases],
                              same="_text" if text else "_plain")


def function_tests(fn: str, cases: Cases, *, text: bool = False) -> PythonTests:
    """The check that runs `case_tests` on the reply's `fn`."""
    return PythonTests(tests=case_tests(fn, cases, text=text), entry_point=fn)


def code_reply(sentence: str, code: str) -> str:
    """A reply as a good assistant writes it: one short sentence, then the code in a ```python fence."""
    return f"{sentence}\n\n```python\n{code.strip(chr(10))}\n```\n"


__all__ = ["Cases", "case_tests", "code_reply", "function_tests"]
