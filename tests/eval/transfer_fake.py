"""A scripted model for the correction-transfer tests: it answers the suite's requests in the default form, and
follows a family's convention only when told — by the user's correction, or by a lesson in the prompt that
states it. Its critiques turn a correction into a lesson, as a good reflection would.

It is a `ScriptedBackend` (every request recorded) served by the fake upstream on a loopback port, so the
daemon in front of it runs its real correction check, reflection, lesson store and memory bus.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.eval.suites.transfer import FAMILIES, Family, Probe
from ghost_agent.llm import wire
from ghost_agent.llm.fake_server import FakeOpenAIServer, serve_in_thread
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply

# What a lesson must say for the model to follow a family's convention (all of it is in the correction).
MARKERS = {
    "dates": "DD/MM/YYYY",
    "money": "currency code",
    "python_hints": "type hints",
    "sql_case": "lowercase",
    "kelvin": "kelvin",
    "time_24h": "24-hour clock",
    "file_names": "kebab-case",
    "commits": "type prefix",
    "inline_lists": "semicolons",
    "email_sign_off": "Cheers, Sam",
}
CRITIQUE_MARK = "You review one failed turn"
NOTES_END = "</ghost-notes>"


def _section(text: str, head: str, stop: str) -> str:
    found = re.search(re.escape(head) + r"\s*(.*?)\s*(?:" + re.escape(stop) + r"|$)", text, re.S)
    return found.group(1).strip() if found else ""


@dataclass
class ConventionModel(ScriptedBackend):
    """`learns`: follow a convention a lesson in the prompt states (False: ignore lessons). `critique`:
    "lesson" (the correction becomes the solution) or "none" (`{"lesson": null}`). `fail`: prompts answered
    with a 500. Replies come from the suite's example replies; unknown prompts are echoed."""

    families: Sequence[Family] = FAMILIES
    learns: bool = True
    critique: str = "lesson"
    fail: set[str] = field(default_factory=set)
    critiques: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self._prompts: dict[str, tuple[Family, Probe, bool]] = {}
        for family in self.families:
            for probe in (family.teach, *family.probes):
                self._prompts[probe.prompt] = (family, probe, False)
            self._prompts[family.correction] = (family, family.teach, True)

    def _next(self, body: dict[str, Any]) -> ScriptedReply:
        self.requests.append(body)
        everything = json.dumps(body.get("messages"))
        if CRITIQUE_MARK in everything:
            self.critiques += 1
            return self._critique(wire.last_user_text(body))
        text = wire.last_user_text(body)
        notes, _, asked = text.rpartition(NOTES_END)
        asked = asked.strip()
        if asked in self.fail:
            return ScriptedReply(error=(500, "scripted failure"))
        known = self._prompts.get(asked)
        if known is None:
            return ScriptedReply(content=asked)
        family, probe, told = known
        marker = MARKERS.get(family.id, family.convention)
        follows = told or (self.learns and marker.casefold() in notes.casefold())
        return ScriptedReply(content=family.example(probe, good=follows))

    def _critique(self, prompt: str) -> ScriptedReply:
        if self.critique == "none":
            return ScriptedReply(content='{"lesson": null}')
        request = _section(prompt, "User request:", "What the assistant did:")
        correction = _section(prompt, "The user's correction (what they wanted instead):", "\n\n\n")
        lesson = {"task": request.split("?")[0].split(".")[0], "mistake": "ignored the user's convention",
                  "solution": correction}
        return ScriptedReply(content=json.dumps(lesson))

    def asked_with_notes(self, prompt: str) -> bool:
        """True when some request for `prompt` carried a lessons block."""
        for body in self.requests:
            text = wire.last_user_text(body)
            if NOTES_END in text and text.rpartition(NOTES_END)[2].strip() == prompt:
                return True
        return False


@contextlib.contextmanager
def convention_upstream(**kwargs: Any) -> Iterator[tuple[str, ConventionModel]]:
    """The convention model behind the fake OpenAI server on a loopback port: (base url, the model)."""
    model = ConventionModel(model="convention-model", **kwargs)
    with serve_in_thread(FakeOpenAIServer(model)) as url:
        yield url, model
