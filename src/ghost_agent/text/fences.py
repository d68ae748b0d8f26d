"""Fenced code blocks in a model's reply: one reader, with its real variations as parameters.

A block is an opening run of three backticks with an optional info string (```` ```python ````, its first word
is the language tag), a body, and a closing run of three backticks. Small models bend Markdown (a fence opened
mid-sentence, a closing fence missing because the reply hit max_tokens, a whole JSON answer on one line between
backticks), and the readers of this code base accept different amounts of that. Their rules are kept exactly
(issue 19 moved them here without a behaviour change), as three styles and two options:

- `"line"` (Markdown, the default): the opening backticks start a line (spaces/tabs before them allowed); the
  rest of that line is the info string (anything, backticks too) and the body starts on the next line; the block
  closes at the first later line holding only three backticks (spaces/tabs around them). A closing line with
  anything else on it (a `\\r` of a CRLF reply, a fourth backtick) does not close it.
- `"inline"`: the opening backticks may sit anywhere ("Here it is: ```json"); the rest of their line is the info
  string (no backtick in it) and the body starts on the next line; the block closes at the next three backticks,
  wherever they are. ```` ```x``` ```` on one line is no block.
- `"same_line"`: like `"inline"`, but the opening line needs no line break: after the backticks come an optional
  tag (letters, digits, `_`, `-`) and the body (```` ```{"a": 1}``` ````, ```` ```json {"a": 1}``` ````). Every
  three backticks open a block, so this is also "everything between backticks" (the lenient JSON readers).
- `unclosed=True`: the last block may run to the end of the text (a reply cut off mid-block).
- `languages`: only an opening line whose info string is one of these (spaces/tabs around it allowed; compared
  case-insensitively; "" for an untagged fence) opens a block. Any other opening line is no fence at all, so the
  backticks that close it can open a block of their own (the request-code reader has always worked so).

Who reads which way: "line" the answer checks (`agent/claims`, `agent/code_program`, `eval/delivery`), "inline"
the form fix-ups and request code (`agent/form`, `agent/code_tests` with `languages`, `eval/conventions`),
"same_line" the JSON readers and request classification (`text/lenient_json`, `agent/protocol`,
`text/request_kind`). Four rules stay their own, each saying why: the tool-call fence (`agent/tool_call_parse`),
the whole-reply fences of structured output and tool arguments (`agent/structured`, `tools/registry`), and the
code_block form check (`agent/form`).

Blocks are found left to right and never overlap. Functions: `find_fences` (every block), `sole_fence` (the text
is one block and nothing else), `strip_fences` (the text without its blocks), `is_fence_line` (a line that opens
or closes a fence, for line-by-line readers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

FENCE = "```"
Style = Literal["line", "inline", "same_line"]

_TAG = r"[\w+.-]*"  # the language tag at the head of an info string ("python3", "c++", "shell-session")
_SAME_LINE_TAG = r"[A-Za-z0-9_-]*"  # in "same_line" the tag ends where the body begins, so it is narrower
_BACKTICKS = {"line": r"^[ \t]*```", "inline": "```", "same_line": "```"}
_INFO = {  # the info string after the opening backticks, and the line break that ends it
    "line": rf"(?P<info>[ \t]*(?P<lang>{_TAG})[^\n]*)\n",
    "inline": rf"(?P<info>[ \t]*(?P<lang>{_TAG})[^\n`]*)\n",
    "same_line": rf"(?P<info>[ \t]*(?P<lang>{_SAME_LINE_TAG})[ \t]*)\r?\n?",
}
_CLOSERS = {"line": r"^[ \t]*```[ \t]*$", "inline": "```", "same_line": "```"}
_FLAGS = {"line": re.M | re.S, "inline": re.S, "same_line": re.S}


@dataclass(frozen=True)
class Fence:
    """One fenced block of a text.

    `language` is the info string's first word as written ("" when untagged; compare it lower-cased), `info` the
    whole info string (stripped), `body` the text between the opening line and the closing backticks as written,
    `start`/`end` the block's span in the text (from the opening line's indentation in "line" style, to just past
    the closing backticks and, in "line" style, the spaces/tabs after them), and `closed` False only for an
    unclosed last block (`unclosed=True`), whose body runs to the end of the text.
    """

    language: str
    info: str
    body: str
    start: int
    end: int
    closed: bool


@lru_cache(maxsize=32)
def _pattern(style: Style, unclosed: bool, languages: tuple[str, ...] | None) -> re.Pattern[str]:
    info = _INFO[style]
    if languages is not None:
        if style == "same_line":
            raise ValueError("languages needs a style whose info string ends with its line ('line' or 'inline')")
        alternatives = "|".join(re.escape(language) for language in languages) if languages else "(?!)"
        info = rf"(?P<info>[ \t]*(?P<lang>(?i:{alternatives}))[ \t]*)\n"
    closer = rf"(?P<close>{_CLOSERS[style]})"
    end = rf"(?:{closer}|\Z)" if unclosed else closer
    return re.compile(rf"{_BACKTICKS[style]}{info}(?P<body>.*?){end}", _FLAGS[style])


def _compiled(style: Style, unclosed: bool, languages: Iterable[str] | None) -> re.Pattern[str]:
    wanted = None if languages is None else tuple(sorted({language.lower() for language in languages}))
    return _pattern(style, unclosed, wanted)


def _fence(match: re.Match[str]) -> Fence:
    return Fence(
        language=match.group("lang"),
        info=match.group("info").strip(),
        body=match.group("body"),
        start=match.start(),
        end=match.end(),
        closed=match.group("close") is not None,
    )


def find_fences(
    text: str, style: Style = "line", *, unclosed: bool = False, languages: Iterable[str] | None = None
) -> list[Fence]:
    """Every fenced block of `text`, left to right, read in `style` (see the module docstring)."""
    return [_fence(m) for m in _compiled(style, unclosed, languages).finditer(text)]


def sole_fence(text: str, style: Style = "line", *, unclosed: bool = False) -> Fence | None:
    """The block when `text` is one fenced block and nothing else (whitespace around it aside), else None."""
    match = _compiled(style, unclosed, None).search(text)
    if match is None or text[: match.start()].strip() or text[match.end() :].strip():
        return None
    return _fence(match)


def strip_fences(text: str, replacement: str = "", style: Style = "line", *, unclosed: bool = False) -> str:
    """`text` with each fenced block (opening line, body and closing backticks) replaced by `replacement`."""
    return _compiled(style, unclosed, None).sub(lambda _: replacement, text)


def is_fence_line(line: str) -> bool:
    """Whether one line of text opens or closes a fence: it starts with three backticks after any whitespace."""
    return line.lstrip().startswith(FENCE)


__all__ = ["FENCE", "Fence", "Style", "find_fences", "is_fence_line", "sole_fence", "strip_fences"]
