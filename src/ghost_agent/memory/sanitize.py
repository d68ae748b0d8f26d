"""Lessons are data, not instructions: the sanitising, bounding and escaping every lesson goes through.

Two places use it (issue 12, item 3):

* **write time** (`clean_field`, called by `SkillMemory.learn_lesson` for every writer): the text is made
  inert — control and format characters, chat-template tokens (`<|im_start|>`, `[INST]`, `<<SYS>>` …),
  role markers ("system:" at a line start, `<assistant>` tags) and instruction-override phrases ("ignore
  previous instructions") are removed, a fenced block (typically pasted or raw tool output) is cut to a short
  one-line excerpt — then redacted (secrets never touch disk) and only then cut to the field's hard cap, so a
  cut can never split a secret the redactor would have recognised.
* **show time** (`neutralize`, called by the memory bus for every lesson it renders, legacy rows included):
  the same sanitising, whitespace squashed to one line, and every tag-like `<` turned into `‹`, so a lesson
  cannot open or close the delimited notes block (`</ghost-notes>`), nor start a line of its own.

The filters are defence in depth, not the defence: what makes a lesson harmless is that it is shown as
delimited, untrusted data after the system prompt (see `memory/bus.py`), and only to the session that wrote
it unless the operator pinned it (see `memory/store.py`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ghost_agent.privacy.redact_rules import redact_text

# Hard caps per field, in characters, applied after redaction. A lesson is a hint, not a transcript: the
# task is a bounded excerpt of the request, the mistake one line of what failed, the solution what fixed it.
TASK_CHARS = 240
MISTAKE_CHARS = 320
SOLUTION_CHARS = 600
FIELD_CAPS = {"task": TASK_CHARS, "mistake": MISTAKE_CHARS, "solution": SOLUTION_CHARS}
FENCE_EXCERPT_CHARS = 200  # what is left of one fenced block (raw output, a pasted file)
INPUT_CHARS = 16_384  # a field's input is bounded (at whitespace) before cleaning: ≥ 27× the largest cap
SESSION_CHARS = 64  # the session id as shown (`lessons ls`); visibility compares a hash of the full id
SOURCE_CHARS = 32
ELLIPSIS = "…"
REMOVED = "[removed]"
TAG_ESCAPE = "‹"  # U+2039: looks like "<" to a reader, opens no tag for a model or a parser
MAX_PASSES = 6

_KEEP_CONTROLS = frozenset("\n\t")
_DROP_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})  # controls, format (bidi, zero-width), surrogates, private

# Special tokens of the chat templates in common use (ChatML/Qwen, Llama 2/3, Gemma, Mistral, Phi…) and
# role tags. A token split by another token (`<|im_<|x|>start|>`) is caught by repeating the pass.
_TEMPLATE_TOKENS = re.compile(
    r"<\|[^<>|\n]{0,64}\|>"
    r"|</?s>"
    r"|\[/?(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]"
    r"|<</?SYS>>"
    r"|<(?:start|end)_of_turn>"
    r"|</?\s*(?:system|user|assistant|developer|tool|human|model|im_start|im_end|instructions?)\b[^<>\n]{0,64}>",
    re.IGNORECASE,
)
_ROLE_MARKER = re.compile(
    r"^[ \t>#*_=-]*(?:system|assistant|user|developer|tool|human|ai|model)(?:\s+(?:prompt|message|note))?"
    r"[ \t]*:[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|of|these|those)\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|system|safety)\s+"
    r"(?:instructions?|rules|prompts?|guidelines|directions|directives|messages|context|guardrails)\b"
    r"|\byou\s+are\s+now\b|\bfrom\s+now\s+on\b|\bnew\s+(?:system\s+)?(?:instructions?|rules|prompt)\b"
    r"|\b(?:system|developer)\s+(?:prompt|override|message|instructions?)\b",
    re.IGNORECASE,
)
_PREFACE = re.compile(
    r"^[ \t>#*_=-]*(?:important|attention|urgent|admin|override|"
    r"note\s+to\s+(?:the\s+)?(?:assistant|ai|model|llm|agent))[ \t]*[:!]+[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
# A preface that addresses the model, wherever in a line it stands ("… IMPORTANT SYSTEM NOTE FOR ALL FUTURE
# SESSIONS: …"): words no code or ordinary request uses together, so removing them mid-line mangles nothing.
_STAFF_NOTE = r"\b(?:system|admin(?:istrator)?|developer|operator)\s+(?:note|notice|message|instruction)s?\b"
_MIDLINE_PREFACE = re.compile(
    rf"(?:{_STAFF_NOTE}"
    r"|\b(?:for|in)\s+(?:all|every)\s+(?:future\s+|other\s+)?(?:sessions?|conversations?|chats?)\b"
    r"|\bnote\s+to\s+(?:the\s+)?(?:assistant|ai|model|llm|agent)\b"
    r")[ \t]*[:!]*[ \t]*",
    re.IGNORECASE,
)
# What reads as an order to the model or a command to run: flagged for the operator (`lessons show` / `pin`),
# never rewritten (a lesson may rightly say "run `pytest -x`").
_INSTRUCTION_FLAGS = re.compile(
    r"\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
    r"|\brm\s+-[a-z]*(?:rf|fr)[a-z]*\b|\bsudo\s+\S+|\bchmod\s+[+0-7]|\bmkfs\b|\bdd\s+if="
    r"|\b(?:run|execute)\s+(?:bash|sh|this|the\s+(?:following|command|script))\b"
    r"|\bbefore\s+(?:answering|replying|responding|you\s+answer)\b"
    r"|\b(?:always|never)\s+(?:run|execute|send|reply|answer|include|mention|tell|reveal|call)\b"
    r"|\byou\s+must\b|\b(?:important|urgent|attention)\s*[:!]"
    rf"|{_STAFF_NOTE}"
    r"|\b(?:for|to)\s+(?:all|every)\s+(?:future\s+|other\s+)?(?:sessions?|conversations?|chats?|users?)\b",
    re.IGNORECASE,
)
FLAG_CONTEXT = 40  # characters shown around a flagged phrase
_FENCE = re.compile(r"(`{3,}|~{3,})[^\n]*\n?(.*?)(?:\1|\Z)", re.DOTALL)
_TAG_OPEN = re.compile(r"<(?=[/!?|A-Za-z<]|\s+/)")  # "<b", "</x", "< /x"; not "a < b"
# In code a `<` right after a name, a bracket or another `<` is an operator; `<` before "ghost" never is.
_CODE_TAG_OPEN = re.compile(r"<(?=\s*/?\s*ghost)|(?<![\w)\]<])<(?=[/!?|A-Za-z<]|\s+/)", re.IGNORECASE)
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_SPACE_RUNS = re.compile(r"[ \t]{2,}")


def strip_controls(text: str) -> str:
    """`text` without control, format, surrogate and private-use characters (newline and tab are kept)."""
    return "".join(
        ch for ch in text if ch in _KEEP_CONTROLS or unicodedata.category(ch) not in _DROP_CATEGORIES
    )


def sanitize_text(text: object) -> str:
    """Make `text` inert as prompt material; no length cap and no redaction (see `clean_field`).

    NFKC first (a fullwidth `＜|im_start|＞` becomes the token it imitates, and is then removed), then the
    filters of the module docstring. Never raises: a non-string is "". Idempotent.
    """
    if not isinstance(text, str) or not text:
        return ""
    text = strip_controls(unicodedata.normalize("NFKC", text))
    for _ in range(MAX_PASSES):  # until stable: removing one marker can join the halves of another
        new = _TEMPLATE_TOKENS.sub("", text)
        new = _FENCE.sub(_fence_excerpt, new)
        new = _ROLE_MARKER.sub("", new)
        new = _PREFACE.sub("", new)
        new = _MIDLINE_PREFACE.sub("", new)
        new = _OVERRIDE.sub(REMOVED, new)
        if new == text:
            break
        text = new
    text = _SPACE_RUNS.sub(" ", _BLANK_RUNS.sub("\n\n", text))
    return text.strip()


def instruction_flags(text: object) -> list[str]:
    """The places in `text` that read as an order to the model or a command to run, each with a little context
    (for the operator to read before pinning; the text itself is not changed)."""
    if not isinstance(text, str):
        return []
    found: list[str] = []
    for match in _INSTRUCTION_FLAGS.finditer(text):
        start, end = max(match.start() - FLAG_CONTEXT, 0), min(match.end() + FLAG_CONTEXT, len(text))
        snippet = " ".join(text[start:end].split())
        found.append(("…" if start else "") + snippet + ("…" if end < len(text) else ""))
    return found


def clean_field(text: object, cap: int) -> str:
    """Write-time cleaning of one lesson field: sanitise, redact, then cut to `cap` characters.

    Redaction runs on the sanitised text (removing a token can join the halves of a secret) and before the
    cut (a cut first could leave half a key the redactor no longer recognises). A very long input is first
    bounded to `INPUT_CHARS` at a whitespace boundary — whole tokens only, so no secret is split — which keeps
    the cost of a megabyte request at milliseconds; what lies beyond could never reach the capped field.
    """
    return clip(redact_text(sanitize_text(_bound(text))), cap)


def clean_label(text: object, cap: int) -> str:
    """A one-line label (session id as shown, source kind): redacted, inert, squashed, cut to `cap`."""
    return clip(" ".join(redact_text(sanitize_text(text)).split()), cap)


def neutralize(text: object) -> str:
    """Show-time form of a stored field: sanitised, one line, every tag-like `<` escaped (no delimiter, role
    tag or template token can be formed from it). Applied to legacy rows too."""
    return _TAG_OPEN.sub(TAG_ESCAPE, " ".join(sanitize_text(text).split()))


def neutralize_lines(text: object) -> str:
    """Show-time form of text whose lines matter (a worked example's code): NFKC (a fullwidth `＜` is a `<`),
    controls and chat-template tokens removed, override phrases replaced, lines and indentation kept, and
    every `<` that could open a tag escaped — except in code's own comparisons and shifts (`a<b`, `x<<2`:
    right after a name, a bracket or another `<`); `<` before `ghost` is escaped everywhere, so no delimiter
    of ours can be formed. Fences are not cut to an excerpt (the code is the point), and role markers at a
    line start are kept (`user: str` is a line of code); what keeps such text harmless is the delimited data
    block it is shown in. Never raises: a non-string is ""."""
    if not isinstance(text, str) or not text:
        return ""
    text = strip_controls(unicodedata.normalize("NFKC", text.replace("\r\n", "\n")))
    for _ in range(MAX_PASSES):
        new = _OVERRIDE.sub(REMOVED, _TEMPLATE_TOKENS.sub("", text))
        if new == text:
            break
        text = new
    return _CODE_TAG_OPEN.sub(TAG_ESCAPE, _BLANK_RUNS.sub("\n\n", text)).strip("\n").rstrip()


def clip(text: str, cap: int) -> str:
    """`text` cut to at most `cap` characters, an ellipsis marking the cut."""
    if len(text) <= cap:
        return text
    return text[: max(cap - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS


def visibility_key(session_id: object) -> str:
    """The key lesson visibility compares: a hash of the full session id ("" for none).

    Not the redacted id: two sessions whose ids redact alike (two e-mail addresses) must not share lessons.
    """
    if not isinstance(session_id, str) or not session_id:
        return ""
    digest = hashlib.sha256(b"ghost-lesson-session\x00" + session_id.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def _bound(text: object) -> object:
    """`text` cut at the last whitespace before `INPUT_CHARS` (unchanged when shorter, not a string, or one
    giant token: that is cleaned whole rather than split)."""
    if not isinstance(text, str) or len(text) <= INPUT_CHARS:
        return text
    cut = max(text.rfind(ws, 0, INPUT_CHARS) for ws in (" ", "\n", "\t"))
    return text[:cut] if cut > 0 else text


def _fence_excerpt(match: re.Match[str]) -> str:
    body = " ".join(match.group(2).split())
    return clip(body, FENCE_EXCERPT_CHARS) if body else ""


__all__ = [
    "instruction_flags",
    "FIELD_CAPS",
    "INPUT_CHARS",
    "MISTAKE_CHARS",
    "SESSION_CHARS",
    "SOLUTION_CHARS",
    "SOURCE_CHARS",
    "TASK_CHARS",
    "TAG_ESCAPE",
    "clean_field",
    "clean_label",
    "clip",
    "neutralize",
    "neutralize_lines",
    "sanitize_text",
    "visibility_key",
    "strip_controls",
]
