"""The code a request itself carries, read from its Python fences (`request_code`)."""

from __future__ import annotations

from ghost_agent.agent.checking.code_tests import request_code


def test_request_code_joins_the_python_and_untagged_fences_that_hold_code() -> None:
    request = ("Complete this:\n```python\nimport math\n\ndef area(r):\n    ...\n```\nand use\n```PY \n"
               "def helper():\n    return 1\n```\nLike so: ```\nnot code at all\n```")
    assert request_code(request) == "import math\n\ndef area(r):\n    ...\n\ndef helper():\n    return 1\n"


def test_request_code_skips_other_languages_and_one_line_fences() -> None:
    assert request_code("```bash\npython area.py\n```") == ""
    assert request_code("```python x = 1```") == ""
    assert request_code("no fences, def f(): pass") == ""
