"""Which strategy an `auto` turn takes, from what the request asks (`respond.choose_strategy`)."""

from __future__ import annotations

import pytest

from ghost_agent.agent.stages.respond import choose_strategy
from ghost_agent.text.request_kind import RequestKind, classify


@pytest.mark.parametrize(
    ("request_text", "strategy"),
    [
        # code over data files: the user wants the code (self-play saw the tool loop answer with its printed number)
        ("app.log in the current folder is our service log. Give me a bash one-liner that prints how many WARN "
         "lines there are.", "answer-first"),
        ("setup.sql in the workspace builds a SQLite database: departments(id, name) and employees(id, name, "
         "department_id). Write a query that returns every department's name with its number of employees.",
         "answer-first"),
        ("Write a Python script that reads sales.csv from the workspace and prints the total per region.",
         "answer-first"),
        # a question about the files' contents: the tool loop reads them
        ("What is the total revenue in sales.csv in my workspace?", "action-loop"),
        # code about a program file: an edit of a file the draft cannot see
        ("Write a function in utils.py in my workspace that parses the dates in data.csv.", "action-loop"),
        # no files at all
        ("Write a Python function that reverses a string.", "answer-first"),
    ],
)
def test_auto_strategy(request_text: str, strategy: str) -> None:
    assert choose_strategy("auto", classify(request_text)) == strategy


def test_the_setting_wins_over_auto() -> None:
    files = RequestKind(code=False, quantitative=True, files=True)
    assert choose_strategy("answer-first", files) == "answer-first"
    assert choose_strategy("action-loop", RequestKind(code=True, quantitative=False, files=False)) == "action-loop"
    assert choose_strategy("auto", RequestKind(code=True, quantitative=False, files=True, source_files=True)) \
        == "action-loop"
