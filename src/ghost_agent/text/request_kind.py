"""What kind of request a turn answers, as far as checking the answer goes: code to write, a number to compute,
files in the workspace to read, or anything else.

The answer-first turn (`agent/checking/answer_first.py`) picks its checks from this: a code request gets its code run
against tests, a quantitative one gets its numbers computed by a program, a request about workspace files goes
to the tool loop (the draft cannot see the files). Pure and cheap (regexes over the last user message); when
unsure it says "general", which only means no extra work — the draft stands as the bare model wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ghost_agent.text.fences import strip_fences

_CODE_VERB = r"(?:write|implement|complete|create|define|code|fix|correct|refactor|rewrite|give\s+me|make|build|add)"
_CODE_NOUN = r"(?:function|method|class|program|script|snippet|decorator|generator|lambda|routine|code)"
_WANTS_CODE = re.compile(rf"\b{_CODE_VERB}\b[^.?!\n]{{0,80}}?\b{_CODE_NOUN}s?\b", re.I)
_STUB = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\([^)]*\)[^:\n]*:\s*$", re.M)
_CODE_LANG = re.compile(r"\b(?:python|py)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_QUANT_CUE = re.compile(
    r"\b(?:how\s+(?:many|much|long|far|old)|what\s+is|what's|calculate|compute|total|sum|product|average|mean|"
    r"percent(?:age)?|remain(?:s|ing)?|left|altogether|in\s+all|per|each|profit|cost|costs|price|change|"
    r"difference|ratio|area|perimeter|volume|speed|rate|convert|times|twice|half|double|triple)\b|%|[-+*/^×÷=]",
    re.I,
)
_FILE_TOKEN = re.compile(r"(?<![\w/.-])([\w.-]+\.(?:csv|json|jsonl|txt|tsv|md|log|py|xlsx?|parquet|yaml|yml|xml|html?|"
                         r"sqlite|db|ini|toml|cfg))\b", re.I)
_WORKSPACE_WORDS = re.compile(
    r"\b(?:in|from|inside)\s+(?:my|the|your|this|our)\s+(?:workspace|working\s+directory|current\s+directory|"
    r"folder|directory)\b|\bthe\s+file\b|\bthese\s+files\b|\bfiles?\s+in\b",
    re.I,
)


@dataclass(frozen=True)
class RequestKind:
    """The checks a request calls for."""

    code: bool  # asks for code to be written (the answer's code is tested, never replaced by its output)
    quantitative: bool  # asks for a number that can be computed
    files: bool  # refers to files in the session's workspace

    @property
    def label(self) -> str:
        """One word for logs and the trajectory."""
        if self.files:
            return "files"
        if self.code:
            return "code"
        return "quantitative" if self.quantitative else "general"


def classify(request: str, workspace: Path | None = None) -> RequestKind:
    """The kind of `request` (the last user message); `workspace` lets a named file count only if it exists."""
    text = request or ""
    code = bool(_WANTS_CODE.search(text)) or (bool(_STUB.search(text)) and not _asks_output_only(text))
    if not code and _CODE_LANG.search(text) and re.search(r"\b(?:write|implement|give)\b", text, re.I):
        code = True
    numbers = _NUMBER.findall(_without_code(text))
    quantitative = not code and len(numbers) >= 2 and bool(_QUANT_CUE.search(_without_code(text)))
    return RequestKind(code=code, quantitative=quantitative, files=_mentions_files(text, workspace))


def _asks_output_only(text: str) -> bool:
    """A request that shows code but asks what it prints or returns (answer with a value, not code)."""
    return bool(re.search(r"\bwhat\s+(?:does|will|would)\b[^?\n]{0,60}\b(?:print|output|return)", text, re.I))


def _without_code(text: str) -> str:
    """`text` with everything between backticks (a fence, a one-line fence, an unclosed last fence) blanked."""
    return strip_fences(text, " ", "same_line", unclosed=True)


def _mentions_files(text: str, workspace: Path | None) -> bool:
    names = {m.group(1) for m in _FILE_TOKEN.finditer(text)}
    if workspace is not None and names:
        try:
            if any((workspace / name).is_file() for name in names if "/" not in name and name not in (".", "..")):
                return True
        except OSError:
            return False
    return bool(_WORKSPACE_WORDS.search(text)) and (bool(names) or "workspace" in text.lower())


__all__ = ["RequestKind", "classify"]
