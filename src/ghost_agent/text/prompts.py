"""Prompt templates: data files in `ghost_agent/prompts/`, rendered into OpenAI chat messages.

A template file is split into sections by lines `[system]`, `[user]`, `[retry]`; each section is a
`string.Template` (`$task`, `$tools`, …) so the JSON examples in the prompts need no brace escaping. The
system section and the task/progress/tools block come first and are identical across one search's calls,
which keeps the backend's prompt cache warm; only the action-specific tail differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from string import Template
from typing import Any

Message = dict[str, str]

_SECTION_RE = re.compile(r"^\[(\w+)\]\s*$", re.M)
NOTHING_YET = "(nothing yet: this is the first step)"


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Mapping[str, Template]:
    """The sections of `prompts/<name>.txt` as templates (read once per process)."""
    text = resources.files("ghost_agent").joinpath("prompts").joinpath(f"{name}.txt").read_text(encoding="utf-8")
    parts = _SECTION_RE.split(text)
    # split() gives [preamble, name1, body1, name2, body2, ...]
    return {parts[i]: Template(parts[i + 1].strip("\n")) for i in range(1, len(parts) - 1, 2)}


def messages(name: str, *, retry_after: str | None = None, **fields: Any) -> list[Message]:
    """Chat messages for prompt `name` with `fields` substituted.

    `retry_after` (the model's previous, unusable reply) appends that reply and the `[retry]` reminder.
    """
    sections = load_prompt(name)
    values = {k: str(v) for k, v in fields.items()}
    out: list[Message] = [
        {"role": "system", "content": sections["system"].substitute(values)},
        {"role": "user", "content": sections["user"].substitute(values)},
    ]
    if retry_after is not None:
        out.append({"role": "assistant", "content": retry_after})
        out.append({"role": "user", "content": sections["retry"].substitute(values)})
    return out


__all__ = ["NOTHING_YET", "Message", "load_prompt", "messages"]
