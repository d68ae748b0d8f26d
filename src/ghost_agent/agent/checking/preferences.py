"""Apply what this user said they prefer to a finished reply: one rewrite call, kept only when it is safe.

A preference lesson (`memory/preference.py`: the user's own words from a correction, "I write dates as
DD/MM/YYYY") is shown in the notes block like any lesson, and a small model mostly ignores a note it was
handed before the request: measured on the embedded 1.5B over 11 convention probes with the user's words in
the notes block (three phrasings, in front of the request and after it), the draft followed them 0 times;
asked afterwards to rewrite its finished reply to follow them, it did on 3 of 7, and left a reply the
preference did not concern unchanged. So the answer-first turn drafts as usual
and then asks for that rewrite, only on turns that were shown a preference.

The rewrite replaces the reply only when it cannot have broken it (`accept`): not empty, not runaway, every
code block still there, Python code still parsing and defining the same functions, and every requested form
(`agent/checking/form.py`) that held before still holding. The preferences are quoted user text in the user turn —
data about the reply's form, never system text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ghost_agent.agent.checking import claims, form
from ghost_agent.text.fences import FENCE
from ghost_agent.text.prompts import messages

PROMPT = "agent_preference"
MAX_PREFERENCES = 3
REQUEST_CHARS = 2000
GROWTH = 2.0  # a rewrite longer than this many times the reply (+ slack) ran away
GROWTH_SLACK = 200
_LEAD_RE = re.compile(r"^\s*(?:rewritten\s+reply|reply|here(?:'s| is) the rewritten reply)\s*:\s*", re.I)
_TAIL_RE = re.compile(r"\n\s*(?:the user's preference|request|rewritten reply)\s*:", re.I)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def preference_messages(request: str, reply: str, preferences: Sequence[str]) -> list[dict[str, str]]:
    """The rewrite prompt: the request, the reply and the user's preferences (quoted, "; "-joined)."""
    quoted = "; ".join(f'"{p}"' for p in preferences[:MAX_PREFERENCES])
    return messages(PROMPT, request=request[:REQUEST_CHARS], reply=reply, preferences=quoted)


def clean_rewrite(text: str) -> str:
    """The rewrite without the prompt's scaffolding a small model echoes: a "Rewritten reply:" lead, and
    everything from a trailing "The user's preference:" / "Request:" line on (measured on the 1.5B)."""
    text = _LEAD_RE.sub("", text or "", count=1)
    tail = _TAIL_RE.search(text)
    return (text[: tail.start()] if tail else text).strip()


def _functions(code: str) -> set[str] | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER_RE.findall(text)}


def accept(reply: str, rewrite: str, request: str, wanted: Sequence[str] = ()) -> str | None:
    """Why `rewrite` may not replace `reply` (None = it may). `wanted`: the preferences it was asked to follow
    — a number from their example ("like 12.50 USD") that the reply and request never had is a copied example,
    not a reformatted value (seen on the 1.5B: "12 dollars" became "12.50 USD")."""
    if not rewrite.strip():
        return "empty rewrite"
    if rewrite.strip() == reply.strip():
        return "unchanged"
    if len(rewrite) > GROWTH * len(reply) + GROWTH_SLACK:
        return "rewrite ran away"
    copied = (_numbers(rewrite) & _numbers(" ".join(wanted))) - _numbers(reply) - _numbers(request)
    if copied:
        return f"the rewrite copied the preference's example ({', '.join(sorted(copied))})"
    if rewrite.count(FENCE) < reply.count(FENCE):
        return "a code block was lost"
    before = "\n".join(claims.python_blocks(reply))
    if before.strip():
        old, new = _functions(before), _functions("\n".join(claims.python_blocks(rewrite)))
        if new is None and old is not None:
            return "the rewritten code does not parse"
        if old and new is not None and not old <= new:
            return "the rewritten code lost a function"
    for spec in form.detect_forms(request):
        if form.check(reply, spec).ok and not form.check(rewrite, spec).ok:
            return f"the rewrite broke the requested form ({spec.kind})"
    return None


__all__ = ["MAX_PREFERENCES", "accept", "clean_rewrite", "preference_messages"]
