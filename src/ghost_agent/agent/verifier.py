"""The turn verifier: one LLM call that audits whether the agent's reply does what the user asked.

The rubric (`prompts/verifier.txt`) leads with constraint satisfaction because the failure it exists for is
the agent answering a different question than the one asked (seed 001: "just give me the code" answered
with "The project has 1,623 lines of code", rubber-stamped as CONFIRMED). Then grounding in the tool output,
then relevance. The verifier never breaks a turn: backend errors, timeouts and unreadable replies all come
back as an UNSURE verdict with `error` set, and UNSURE never retracts anything.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ghost_agent.llm.base import BackendError, LLMBackend
from ghost_agent.llm.wire import reply_text
from ghost_agent.logging import get_logger
from ghost_agent.privacy.redact import redact_text
from ghost_agent.text.excerpt import clip
from ghost_agent.text.lenient_json import iter_json
from ghost_agent.text.prompts import messages

log = get_logger("verifier")

VerdictLabel = Literal["CONFIRMED", "REFUTED", "UNSURE"]

MAX_EVIDENCE = 6  # tool calls shown; the most recent ones, since they led to the reply
EVIDENCE_CHARS = 1_500  # per code and per output
REQUEST_CHARS = 4_000
RESPONSE_CHARS = 4_000
RAW_CHARS = 2_000
NOTE_CHARS = 300
UNPARSEABLE = "unparseable verdict"
DEFAULT_CONFIDENCE = 0.5  # a verdict without a confidence: below the retraction threshold on purpose
_WORD_CONFIDENCE = {"very high": 0.95, "high": 0.9, "medium": 0.6, "moderate": 0.6, "low": 0.3, "very low": 0.1}
_FAILED_NOTE = "The verifier could not check this answer."
_DEFAULT_NOTES: dict[str, str] = {
    "CONFIRMED": "The verifier found the answer consistent with the request.",
    "REFUTED": "The verifier judged that the answer does not do what was asked.",
    "UNSURE": "The verifier could not tell whether the answer does what was asked.",
}

_LABEL = r"(confirmed|refuted|unsure)"
_LABEL_RE = re.compile(rf"\b{_LABEL}\b", re.I)
_VERDICT_KEY_RE = re.compile(r"\bverdict\b", re.I)
_NUM = r"(\d+(?:\.\d+)?)\s*(%?)"
_WORDS = r"(very high|very low|high|medium|moderate|low)"
_CONF_AFTER_KEY_RE = re.compile(rf"confiden(?:ce|t)\W{{0,6}}(?:{_NUM}|{_WORDS}\b)", re.I)
_CONF_BEFORE_KEY_RE = re.compile(rf"(?:{_NUM}|\b{_WORDS})\s+(?:confidence|confident|certain|sure)\b", re.I)
_CONF_AFTER_LABEL_RE = re.compile(rf"^[\s:(\[\-–—,=]{{0,6}}{_NUM}")
_NOTE_KEY_RE = re.compile(r"\b(?:note|reason|because|explanation|why)\b\s*[:=\-]?\s*(.+)", re.I | re.S)
_FRAGMENT_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD_RE = re.compile(r"[A-Za-z]{2,}")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Evidence:
    """One tool call the agent made: which tool, the code or command it ran, what it printed, whether it worked."""

    tool: str
    code: str
    output: str
    ok: bool


@dataclass(frozen=True)
class Verdict:
    """The verifier's judgement of one turn.

    `confidence` is in [0, 1]; `note` is one or two sentences a user can read; `raw` is the model's reply
    (clipped). `error` is set when the verifier itself failed (backend, timeout, unreadable reply); the
    verdict is then UNSURE with confidence 0.
    """

    verdict: VerdictLabel
    confidence: float
    note: str
    raw: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The trajectory record's `verifier` field: `{verdict, confidence, note}` plus `error` when set."""
        out: dict[str, Any] = {"verdict": self.verdict, "confidence": round(self.confidence, 4), "note": self.note}
        if self.error is not None:
            out["error"] = self.error
        return out


def render_evidence(evidence: Sequence[Evidence]) -> str:
    """The tool calls as a bounded prompt block: the last `MAX_EVIDENCE`, oldest first, each part clipped."""
    if not evidence:
        return "(none)"
    shown = list(evidence)[-MAX_EVIDENCE:]
    omitted = len(evidence) - len(shown)
    blocks = [f"({omitted} earlier tool calls omitted)"] if omitted else []
    for n, item in enumerate(shown, start=omitted + 1):
        status = "ok" if item.ok else "FAILED"
        code = clip(item.code, EVIDENCE_CHARS) if item.code.strip() else "(none)"
        output = clip(item.output, EVIDENCE_CHARS) if item.output.strip() else "(no output)"
        blocks.append(f"[{n}] tool {item.tool} ({status})\ncode:\n{code}\noutput:\n{output}")
    return "\n\n".join(blocks)


def _short_note(text: str) -> str:
    """One or two sentences of `text`, whitespace collapsed, at most NOTE_CHARS; redacted before any cut."""
    flat = " ".join(redact_text(text).split()).strip("\"'{}[]:=,- ")  # leftovers of a half-JSON reply around the note
    flat = " ".join(_SENTENCE_END_RE.split(flat)[:2])
    if len(flat) > NOTE_CHARS:
        flat = flat[: NOTE_CHARS - 1].rstrip() + "…"
    return flat


def _number_confidence(number: float, percent: bool) -> float | None:
    if not math.isfinite(number) or number < 0:
        return None
    if percent or number > 10.0:  # 85 and 85% both mean 0.85; anything above 100 is capped
        number = number / 100.0
    elif number > 1.0:  # a 0-10 scale, which small models slip into ("confidence: 8")
        number = number / 10.0
    return min(1.0, number)


def _confidence(value: Any) -> float | None:
    """A confidence in [0, 1] from a JSON value or text (0.85, 85, "85%", "high"); None when not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _number_confidence(float(value), False)
    if isinstance(value, str):
        text = value.strip().lower()
        match = re.fullmatch(_NUM, text)
        if match:
            return _number_confidence(float(match.group(1)), bool(match.group(2)))
        word = re.fullmatch(rf"{_WORDS}(?: confidence)?", text)
        if word:
            return _WORD_CONFIDENCE[word.group(1)]
    return None


def _label(value: Any) -> VerdictLabel | None:
    """The verdict a JSON field names ("REFUTED", "refuted (high)"), or None."""
    if not isinstance(value, str):
        return None
    found = {m.group(1).upper() for m in _LABEL_RE.finditer(value)}
    if len(found) != 1:
        return None
    label = found.pop()
    return "CONFIRMED" if label == "CONFIRMED" else "REFUTED" if label == "REFUTED" else "UNSURE"


def _from_json(text: str) -> Verdict | None:
    for value in iter_json(text):
        if not isinstance(value, Mapping):
            continue
        fields = {str(k).lower(): v for k, v in value.items()}
        label = _label(fields.get("verdict"))
        if label is None:
            continue
        confidence = _confidence(fields.get("confidence"))
        notes = [fields[k] for k in ("note", "reason", "explanation") if isinstance(fields.get(k), str)]
        note = notes[0] if notes else ""
        return Verdict(
            verdict=label,
            confidence=DEFAULT_CONFIDENCE if confidence is None else confidence,
            note=_short_note(note) or _DEFAULT_NOTES[label],
            raw=clip(text, RAW_CHARS),
        )
    return None


def _text_confidence(text: str, label_end: int) -> float | None:
    for regex in (_CONF_AFTER_KEY_RE, _CONF_BEFORE_KEY_RE):
        match = regex.search(text)
        if match:
            number, percent, word = match.groups()
            if word:
                return _WORD_CONFIDENCE[word.lower()]
            return _number_confidence(float(number), bool(percent))
    match = _CONF_AFTER_LABEL_RE.match(text[label_end : label_end + 16])  # "REFUTED - 0.9", "REFUTED (85%)"
    if match:
        return _number_confidence(float(match.group(1)), bool(match.group(2)))
    return None


def _prose(text: str, label: str) -> str:
    """The sentences of `text` that say something beyond the verdict and confidence tokens (a sentence naming
    another verdict is dropped: it is the model weighing options, not its conclusion)."""
    kept = []
    for part in _FRAGMENT_RE.split(text):
        if any(m.group(1).upper() != label for m in _LABEL_RE.finditer(part)):
            continue
        bare = _CONF_BEFORE_KEY_RE.sub("", _CONF_AFTER_KEY_RE.sub("", part))
        bare = _LABEL_RE.sub("", _VERDICT_KEY_RE.sub("", bare))
        if len(_WORD_RE.findall(bare)) >= 2:  # "with high confidence." leaves one word: a token line, not prose
            kept.append(part.strip())
    return " ".join(kept)


def _from_text(text: str) -> Verdict | None:
    key = _VERDICT_KEY_RE.search(text)
    match = _LABEL_RE.search(text, key.end()) if key else None
    if match is None:
        labels = list(_LABEL_RE.finditer(text))
        if len({m.group(1).upper() for m in labels}) != 1:
            return None  # no verdict word, or conflicting ones with nothing saying which is the verdict
        match = labels[0]
    label = _label(match.group(1))
    if label is None:
        return None
    confidence = _text_confidence(text, match.end())
    note_match = _NOTE_KEY_RE.search(text, match.end())
    # The reasoning usually follows the verdict; when it does not, it is whatever prose the reply has.
    note = note_match.group(1) if note_match else (_prose(text[match.end() :], label) or _prose(text, label))
    return Verdict(
        verdict=label,
        confidence=DEFAULT_CONFIDENCE if confidence is None else confidence,
        note=_short_note(note) or _DEFAULT_NOTES[label],
        raw=clip(text, RAW_CHARS),
    )


def failed(error: str, raw: str = "") -> Verdict:
    """The verdict of a verifier that could not judge: UNSURE, confidence 0, `error` set."""
    return Verdict(verdict="UNSURE", confidence=0.0, note=_FAILED_NOTE, raw=clip(raw, RAW_CHARS), error=error)


def parse_verdict(text: str) -> Verdict:
    """The verdict in a model reply, read leniently; never raises.

    A JSON object with a `verdict` field wins (fenced or with prose around it); otherwise plain text
    ("Verdict: REFUTED (confidence 85%)", "refuted - 0.9"): the first verdict word after the word "verdict",
    else the only verdict word present. Confidence may be 0.85, 85, "85%" or high/medium/low; missing →
    0.5. Nothing recognizable (or CONFIRMED and REFUTED both present with nothing saying which) → UNSURE
    with error "unparseable verdict".
    """
    if not isinstance(text, str) or not text.strip():
        return failed(UNPARSEABLE, text if isinstance(text, str) else "")
    return _from_json(text) or _from_text(text) or failed(UNPARSEABLE, text)


class Verifier:
    """Audits a tool-using turn: does the reply satisfy the user's constraints, rest on the tool output, and
    answer the question? One backend call per `verify`, bounded by `timeout_s`.

    `refute_confidence` is the threshold at which a REFUTED verdict retracts the turn's lessons and adds a
    note to the reply (`should_retract`, `note_for_reply`).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        model: str | None = None,
        max_tokens: int = 300,
        timeout_s: float = 60.0,
        refute_confidence: float = 0.7,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number, got {timeout_s}")
        if not (0.0 <= refute_confidence <= 1.0):
            raise ValueError(f"refute_confidence must be in [0, 1], got {refute_confidence}")
        self.backend = backend
        self.model = model
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.refute_confidence = refute_confidence

    def build_messages(self, user_request: str, evidence: Sequence[Evidence], response: str) -> list[dict[str, str]]:
        """The chat messages `verify` sends: the fixed rubric as the system message, the turn as the user one."""
        return messages(
            "verifier",
            request=clip(user_request, REQUEST_CHARS) or "(empty)",
            evidence=render_evidence(evidence),
            response=clip(response, RESPONSE_CHARS) or "(empty)",
        )

    async def verify(self, user_request: str, evidence: Sequence[Evidence], response: str) -> Verdict:
        """Judge one turn. Never raises (except cancellation): any failure is an UNSURE verdict with `error`."""
        start = time.perf_counter()
        text = ""
        try:
            body: dict[str, Any] = {
                "messages": self.build_messages(user_request, evidence, response),
                # A judge should not be creative; a fixed temperature also makes verdicts reproducible.
                "temperature": 0.0,
                "max_tokens": self.max_tokens,
                "stream": False,
            }
            if self.model:
                body["model"] = self.model
            text = reply_text(await asyncio.wait_for(self.backend.complete(body), self.timeout_s))
            verdict = parse_verdict(text)
        except TimeoutError:
            verdict = failed(f"timeout after {self.timeout_s:g}s")
        except BackendError as exc:
            verdict = failed(redact_text(f"backend error {exc.status}: {exc.message}")[:NOTE_CHARS])
        except Exception as exc:  # noqa: BLE001 - a verifier bug must not break the user's turn
            verdict = failed(redact_text(f"{type(exc).__name__}: {exc}")[:NOTE_CHARS], text)
        ms = round((time.perf_counter() - start) * 1000.0, 1)
        if verdict.error is not None:
            log.warning("verifier_failed", error=verdict.error, ms=ms)
        else:
            log.info("verifier_verdict", verdict=verdict.verdict, confidence=verdict.confidence, ms=ms)
        return verdict

    def should_retract(self, verdict: Verdict) -> bool:
        """True for a REFUTED verdict at least `refute_confidence` sure (a failed verifier never retracts)."""
        return verdict.verdict == "REFUTED" and verdict.error is None and verdict.confidence >= self.refute_confidence

    @staticmethod
    def note_for_reply(verdict: Verdict) -> str:
        """The short note appended to the reply when `should_retract` holds (a blockquote after a blank line)."""
        note = " ".join(verdict.note.split()) or _DEFAULT_NOTES["REFUTED"]
        return f"\n\n> Verifier: this answer may not do what you asked: {note}"


__all__ = [
    "DEFAULT_CONFIDENCE",
    "EVIDENCE_CHARS",
    "MAX_EVIDENCE",
    "UNPARSEABLE",
    "Evidence",
    "Verdict",
    "VerdictLabel",
    "Verifier",
    "failed",
    "parse_verdict",
    "render_evidence",
]
