"""Hypothesis strategies for replies with fenced blocks in the shapes small models write, and the ways they bend.

A reply is prose and fenced blocks in any order. A block varies in each part a fence reader might disagree on:
indentation, the number of backticks, the info string (tags with digits, `+`, `.`, `_`, `-`, Unicode, trailing
words, backticks), the opening line's end (LF, CRLF, none: a one-line fence), the body (JSON, Python, SQL, empty,
backticks inside), the closing line (indented, trailing spaces, CR, text or a fourth backtick after it) or no closing
line at all. Prose carries brackets, quotes, stray backticks and the whitespace a line reader sees (tabs, NBSP, CR).
"""

from __future__ import annotations

from hypothesis import strategies as st

TAGS = [
    "", "python", "py", "Python", "PY", "python3", "py3", "python3.11", "json", "JSON", "json5", "jsonc", "json-ld",
    "sql", "SQL", "sqlite", "bash", "sh", "shell-session", "c++", "c#", "text", "output", "console", "tool_call",
    "js", "javascript", "1", "_x", "-x", "pythön", "python title=x.py", "json {", "py`", " python", "python ",
    "\tjson", "py\t",
]
BODIES = [
    "",
    "\n",
    '{"a": 1}',
    '{"tool": "python", "args": {"code": "print(1)"}}\n',
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '[1, 2, {"b": [3]}]\n',
    "{'a': 1,}\n",
    '{"a": 1,}',
    "def f(x):\n    return x + 1\n",
    "import math\nprint(math.sqrt(16))\n",
    "x = 1\nprint(x)",
    "SELECT name FROM t WHERE id = 1;\n",
    "select 1;",
    "ls -la\n",
    "42\n",
    "Output: 42\n",
    "has ``` inside\n",
    "`inline` code\n",
    "code\r\n",
    "line one\n\nline three\n",
    "get_weather(city=\"Paris\")\n",
]
PROSE = st.lists(
    st.sampled_from(list("ab xyz\n\n\t{}[]\":,'`#.0123-=\xa0") + ["\r\n", "Answer: 7", "Output:", "```", '"a": 1']),
    max_size=20,
).map("".join)
JSON_PROSE = st.sampled_from([
    '{"tool": "python", "args": {"code": "x"}}', '{"answer": "4"}', "[1, 2]", "{'a': 1}", '{"a": 1,}', '{"a": "x\ny"}',
    "null", '{"a": {"b": 1}}', '{"a": [1, {"b": 2}]} and [3]', "{", "}", "[", "]", '"{"', "[" * 70, "{}" * 40,
    "[1] " * 25, '{"a": 1} {"a": 1}', '{"name": "f", "arguments": "{}"}', "{{'a': 1}}", "[[[[1]]]]",
    "[" + ", ".join(["{}"] * 210) + "]",
])
INDENT = st.sampled_from(["", "", "", "  ", "    ", "\t", "\xa0"])
EOL = st.sampled_from(["\n", "\n", "\n", "\r\n", "", " \n"])


@st.composite
def block(draw: st.DrawFn) -> str:
    """One fenced block, maybe malformed."""
    ticks = draw(st.sampled_from(["```", "```", "```", "```", "````", "``"]))
    opening = draw(INDENT) + ticks + draw(st.sampled_from(TAGS)) + draw(EOL)
    body = draw(st.sampled_from(BODIES) | PROSE | JSON_PROSE)
    if draw(st.integers(0, 5)) == 0:
        return opening + body  # unclosed: the reply was cut off
    lead = draw(st.sampled_from(["\n", "\n", "", "\r\n"])) if body and not body.endswith("\n") else ""
    closing = draw(INDENT) + draw(st.sampled_from(["```", "```", "```", "````"]))
    closing += draw(st.sampled_from(["", "", "", " ", "\r", "x", "python", "\n"]))
    return opening + body + lead + closing


@st.composite
def reply(draw: st.DrawFn) -> str:
    """Prose and fenced blocks, in any order and number."""
    parts = draw(st.lists(st.one_of(block(), PROSE, JSON_PROSE), max_size=5))
    sep = st.sampled_from(["", "\n", "\n\n", " ", "\r\n", ": "])
    seps = draw(st.lists(sep, min_size=len(parts), max_size=len(parts)))
    return "".join(sep + part for sep, part in zip(seps, parts, strict=True))
