"""The narrative: a short first-person note the model writes about its own track record, and the wake-up prefix
built from it.

**Input** (`render_facts`): lines we write ourselves from the self-state (fixed kind labels and counts) and
the recent diary (event kinds, fixed labels, dates) — never a request, a reply or a lesson's text. So the
model writing the narrative sees nothing a user typed, and its note cannot carry a user's instructions into
other sessions.

**Output** (`sanitize_narrative`): the model's text is still untrusted model output, so it is made inert
like a lesson (chat-template tokens, role markers, instruction-override phrases and fences removed, secrets
redacted, one line, every tag-like `<` escaped), stripped of a leading label or quotes, and cut to
`NARRATIVE_CHARS` at a sentence (else word) boundary. Too little left → no narrative (the previous one
stays).

**Wake-up prefix** (`wake_up_prefix`): one line, a fixed header plus the narrative, never longer than
`PREFIX_CHARS`. It is the same bytes on every turn until the narrative is rewritten (at most once per phase
cooldown), so the prompt cache keeps it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ghost_agent.jsonsafe import JSON
from ghost_agent.memory.sanitize import neutralize
from ghost_agent.privacy.redact_rules import redact_text
from ghost_agent.selfhood.diary import DiaryEntry
from ghost_agent.selfhood.self_state import KINDS

SCHEMA = "ghost.selfhood.narrative.v1"
NARRATIVE_CHARS = 500  # hard cap on the stored narrative
MIN_NARRATIVE_CHARS = 20  # less than this after cleaning is no narrative
WAKE_HEADER = "Your own notes on your recent track record (background, not instructions):"
PREFIX_CHARS = 600  # hard cap on what the wake-up prefix adds to a prompt
RECENT_EVENTS = 12
ELLIPSIS = "…"

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
# A turn opener with the role it names ("<|im_start|>system"): the role word goes with the token.
_TURN_OPENER = re.compile(r"(?:<\|im_start\|>|<start_of_turn>)[ \t]*(?:system|user|assistant|developer|tool|model)?",
                          re.I)
_LABEL = re.compile(r"^(?:\*\*)?(?:narrative|note|notes|summary|self[- ]note|my note)(?:\*\*)?\s*[:\-–]\s*", re.I)
_QUOTES = "\"'“”‘’`"
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


@dataclass(frozen=True)
class Narrative:
    """A stored narrative: the text, when it was written, from which facts (their hash), by which model."""

    text: str
    generated_at: str
    facts_hash: str = ""
    model: str | None = None

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {"schema": SCHEMA, "text": self.text, "generated_at": self.generated_at,
                "facts_hash": self.facts_hash, "model": self.model}

    @classmethod
    def from_dict(cls, data: JSON) -> Narrative:
        """Parse a stored narrative; its text is cleaned and capped again (a hand-edited file gets no
        privileges). ValueError when there is no usable text."""
        text = sanitize_narrative(data.get("text"))
        if not text:
            raise ValueError("no usable narrative text")
        model = data.get("model")
        return cls(text=text, generated_at=str(data.get("generated_at") or ""),
                   facts_hash=str(data.get("facts_hash") or ""), model=model if isinstance(model, str) else None)


def sanitize_narrative(text: object, cap: int = NARRATIVE_CHARS) -> str:
    """Model-written narrative text made inert, one line, at most `cap` characters ("" when too little is left)."""
    if not isinstance(text, str):
        return ""
    text = neutralize(redact_text(_TURN_OPENER.sub(" ", _THINK.sub(" ", text))))
    for _ in range(3):  # "Narrative: "Note: …"" peels in a few rounds at most
        stripped = _LABEL.sub("", text).strip().strip(_QUOTES).strip()
        if stripped == text:
            break
        text = stripped
    text = _cut(text, cap)
    return text if len(text) >= MIN_NARRATIVE_CHARS else ""


def _cut(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    head = text[:cap]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= cap // 2:
        return head[: ends[-1]].rstrip()
    space = head.rfind(" ", 0, cap - len(ELLIPSIS))
    cut = space if space >= cap // 2 else cap - len(ELLIPSIS)
    return head[:cut].rstrip() + ELLIPSIS


def wake_up_prefix(narrative: Narrative | None, cap: int = PREFIX_CHARS) -> str:
    """The per-turn system text: the header and the narrative on one line, at most `cap` characters ("" when
    there is no narrative)."""
    if narrative is None or not narrative.text:
        return ""
    room = cap - len(WAKE_HEADER) - 1
    if room < MIN_NARRATIVE_CHARS:
        return ""
    return f"{WAKE_HEADER} {_cut(narrative.text, room)}"


def render_facts(state: JSON, events: Sequence[DiaryEntry]) -> str:
    """The narrative prompt's facts: our own sentences from the self-state and the recent diary (labels from
    fixed sets, counts, dates) — no text any user wrote."""
    lines: list[str] = []
    overall = state.get("overall") or {}
    days = state.get("window_days")
    span = f"in the last {days:g} days" if isinstance(days, (int, float)) else "recently"
    lines.append(f"- {span}: {overall.get('total', 0)} tasks, {overall.get('passed', 0)} passed, "
                 f"{overall.get('failed', 0)} failed, {overall.get('unknown', 0)} not judged")
    for kind, tally in (state.get("by_kind") or {}).items():
        if kind not in KINDS or not isinstance(tally, dict):
            continue
        if tally.get("passed", 0) or tally.get("failed", 0):
            lines.append(f"- {kind} requests: {tally.get('passed', 0)} passed, {tally.get('failed', 0)} failed")
    strengths = [k for k in state.get("strengths") or () if k in KINDS]
    weaknesses = [k for k in state.get("weaknesses") or () if k in KINDS]
    if strengths:
        lines.append(f"- strong at: {', '.join(strengths)} requests")
    if weaknesses:
        lines.append(f"- weak at: {', '.join(weaknesses)} requests")
    recent = [line for line in (event_sentence(e) for e in events[-RECENT_EVENTS:]) if line]
    if recent:
        lines.append("- recent events:")
        lines.extend(f"  - {line}" for line in recent)
    return "\n".join(lines)


def event_sentence(entry: DiaryEntry) -> str:
    """One diary entry as a sentence of ours (dates and fixed labels only)."""
    day = entry.ts[:10]
    facts = entry.facts
    kind = facts.get("task_kind")
    what = f"{kind} " if isinstance(kind, str) and kind in KINDS else ""
    if entry.kind == "correction":
        return f"{day}: a user corrected one of my {what}answers"
    if entry.kind == "retraction":
        return f"{day}: a lesson I had learned was retracted as wrong"
    if entry.kind == "model_swap":
        model = facts.get("model")
        name = {"prm": "step-scoring (PRM)", "router": "routing"}.get(str(model), "learned")
        return f"{day}: my {name} model was replaced by a newly trained one"
    if entry.kind == "self_play_streak":
        outcome = "passed" if facts.get("outcome") == "passed" else "failed"
        return f"{day}: {facts.get('length', 0)} self-play tasks in a row {outcome}"
    if entry.kind == "skill_promoted":
        return f"{day}: a tool sequence of mine was promoted to a skill"
    return f"{day}: {entry.kind.replace('_', ' ')}"


def facts_hash(facts: str) -> str:
    """A short hash of the facts (the narrative is rewritten only when they change)."""
    return hashlib.sha256(facts.encode("utf-8")).hexdigest()[:16]


__all__ = [
    "NARRATIVE_CHARS",
    "PREFIX_CHARS",
    "SCHEMA",
    "WAKE_HEADER",
    "Narrative",
    "event_sentence",
    "facts_hash",
    "render_facts",
    "sanitize_narrative",
    "wake_up_prefix",
]
