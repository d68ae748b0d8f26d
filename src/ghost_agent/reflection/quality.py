"""Lesson quality rules: what a reflection may store, applied after parsing and before the sink.

1. **Scoped to the kind of task.** A lesson is retrieved by matching its text against future requests, so its
   `task` must describe the kind of request it came from — specific enough that similar requests find it
   and unrelated ones do not. A generic task ("any task", "coding", "") is rewritten from the failed request;
   a task sharing no word with the request gets the request's own words appended.
2. **Never a global prohibition.** "Never use python" shown on every python request would cripple the agent.
   Sentences of the solution that ban a tool (or tools in general) or that claim universal scope ("in every
   task", "no matter what") are dropped; a lesson left without a solution is rejected.
3. **Transient failures are not the tool's fault.** Timeouts, upstream errors and sandbox memory/time kills
   say nothing about the approach. A trajectory whose failure is explained by them alone is not reflected
   on unless the user corrected it (then their message is the lesson); either way, solution sentences that
   steer away from a tool ("use bash instead of python") are dropped.
4. **No secrets** — enforced where lessons are stored: `SkillMemory.learn_lesson` redacts every field, and
   the reflection trajectory is redacted by the collector's `append`. Nothing here duplicates that.

Every rewrite or drop is reported in `Vetted.notes` (and logged by the reflector).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ghost_agent.memory.lessons import lesson_tokens
from ghost_agent.reflection.parse import TASK_CHARS, LessonDraft, clean_field
from ghost_agent.trajectories.record import Trajectory

MIN_TASK_TOKENS = 2  # "sql" alone matches every SQL request ever; "sql date filters" is a kind
REQUEST_KIND_CHARS = 120

# Tool words a ban may name: our tools, and the generic ways a model refers to "using tools at all".
# "code fences"/"code blocks" are formatting, not a tool.
_TOOL = (
    r"(?:any\s+|a\s+|an\s+|the\s+)?(?:python|bash|shell|file_system|file[\s_-]system|memory_search|sandbox|"
    r"terminal|interpreter|tools?|code(?:\s+execution)?|scripts?|programs?|commands?|\w+\s+tool)\b"
    r"(?!\s+(?:fences?|blocks?|formatting|comments?|style|snippets?|examples?))"
)
_USE = (r"(?:use|using|run|running|call|calling|invoke|invoking|execute|executing|rely(?:ing)?\s+on|"
        r"resort(?:ing)?\s+to|touch|touching|write\s+and\s+run)")
# "never use python", "don't run code", "avoid the bash tool", "stop calling tools", "do not rely on scripts"
_BAN_RE = re.compile(
    rf"\b(?:(?:never|don'?t|do\s+not|avoid|stop|refrain\s+from|no\s+longer|shouldn'?t|should\s+not|must\s+not|"
    rf"mustn'?t)\s+(?:\w+\s+){{0,2}}?{_USE}|avoid(?:ing)?)\s+{_TOOL}",
    re.I,
)
# "instead of python", "rather than the python tool", "switch from bash", "without using code"
_AVOID_RE = re.compile(
    rf"\b(?:instead\s+of|rather\s+than|switch(?:ing)?\s+(?:away\s+)?from|without|other\s+than|not\s+with)"
    rf"\s+(?:{_USE}\s+)?{_TOOL}",
    re.I,
)
_UNIVERSAL_RE = re.compile(
    r"\b(?:in\s+(?:every|all|any)\s+(?:task|request|case|situation|conversation)s?|"
    r"for\s+(?:every|all|any)\s+(?:task|request|question|problem)s?|no\s+matter\s+what|"
    r"under\s+(?:any|all)\s+circumstances|regardless\s+of\s+the\s+(?:task|request)|at\s+all\s+times|"
    r"from\s+now\s+on,?\s+(?:never|always))\b",
    re.I,
)
# A task made only of these words scopes nothing ("any task", "answering user questions", "coding in general").
_GENERIC_WORDS = frozenset(
    "any all every each general generic various other misc miscellaneous the a an of in for with to kind kinds "
    "type types sort task tasks request requests question questions problem problems thing things case cases "
    "situation situations anything everything whatever coding code programming chat chatting conversation "
    "conversations user users answer answers response responses reply replies replying answering responding "
    "help helping assistance assisting work working stuff".split()
)
_WORD_RE = re.compile(r"[a-z]+")
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+")
_CLAUSE_RE = re.compile(r",\s*|\s+[-–—]\s+|\s+(?=\b(?:but|and\s+then)\b)")

_KILLED_RE = re.compile(r"\[killed:[^\]\n]{0,120}\]")
# Transient failure signatures in step errors and the turn's failure reason.
_TRANSIENT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"timed?\s*out|timeout|deadline\s+exceeded|took\s+too\s+long", re.I)),
    ("memory limit", re.compile(
        r"out\s+of\s+memory|\boom\b|oom[_-]?kill|memory\s+limit|cannot\s+allocate|killed\s+by\s+signal\s+9\b",
        re.I)),
    ("upstream error", re.compile(
        r"backend\s+error|upstream|bad\s+gateway|service\s+unavailable|gateway\s+timeout|\b50[234]\b|"
        r"connection\s+(?:refused|reset|error|aborted)|temporarily\s+unavailable|rate\s+limit|\b429\b|"
        r"server\s+(?:busy|overloaded)|model\s+is\s+busy",
        re.I)),
)


@dataclass(frozen=True)
class Vetted:
    """The result of the quality rules: the lesson to store (None = rejected, `reason` says why) and what
    was changed on the way (`notes`)."""

    lesson: LessonDraft | None
    reason: str = ""
    notes: tuple[str, ...] = field(default=())


def transient_failure(traj: Trajectory) -> str | None:
    """What transient cause explains the trajectory's failure ("timeout: python: timed out after 30.0 s"),
    or None when the failure is (also) something else.

    Transient means: the turn died on an upstream error, or it had failing steps and every one of them
    failed by timeout, memory kill or upstream error. A turn with no failing steps and no backend error is
    not transient (its answer itself was wrong).
    """
    backend_error = traj.extra.get("backend_error")
    reason = traj.failure_reason or ""
    if isinstance(backend_error, dict) or reason.lower().startswith("backend error"):
        detail = reason or str(backend_error)
        return f"upstream error: {detail[:160]}"
    failing = [s for s in traj.steps if not s.ok]
    if not failing:
        return None
    causes: list[str] = []
    for step in failing:
        # The step's error line, plus the sandbox's own "[killed: ...]" status line; never the program's
        # output, where a printed "503" or "timeout" says nothing about why the step failed.
        text = "\n".join([step.error or "", *_KILLED_RE.findall(step.result_preview)])
        cause = next((name for name, pattern in _TRANSIENT if pattern.search(text)), None)
        if cause is None:
            return None
        causes.append(f"{cause}: {clean_field(step.error or step.result_preview, 160)}")
    return causes[-1] if len(set(causes)) == 1 else "; ".join(dict.fromkeys(causes))


def request_kind(request: str, *, whole: bool = False) -> str:
    """A short task description from a request, prefixed so it reads as a kind of request ("requests like:
    ..."): its first line or sentence, clipped — or, `whole`, all of it, clipped. A stated-preference lesson
    takes the whole request: the preference names the convention, not the subject ("I use the 24-hour clock"
    has no "time"; the request "My train leaves at half past two. What time should I put in my calendar?"
    has)."""
    text = " ".join((request or "").split())
    first = re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0] if text and not whole else text
    first = first if len(lesson_tokens(first)) >= MIN_TASK_TOKENS else text
    return "requests like: " + clean_field(first, REQUEST_KIND_CHARS)


def is_generic_task(task: str) -> bool:
    """True for a task that scopes nothing: empty, too few content words, or "any task"-like."""
    text = task.strip().strip(".").strip()
    words = _WORD_RE.findall(text.lower())
    return (not words or all(w in _GENERIC_WORDS for w in words) or bool(_UNIVERSAL_RE.search(text))
            or len(lesson_tokens(text)) < MIN_TASK_TOKENS)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def _rule_broken(text: str, *, transient: bool) -> str | None:
    if _BAN_RE.search(text):
        return "tool ban"
    if _UNIVERSAL_RE.search(text):
        return "universal rule"
    if transient and _AVOID_RE.search(text):
        return "tool avoidance after a transient failure"
    return None


def _strip_solution(solution: str, *, transient: bool) -> tuple[str, list[str]]:
    """The solution without its offending sentences. A tool ban takes only its own clause when the rest of the
    sentence still says something ("Don't run code, just answer." -> "just answer."); a universal rule or a
    tool avoidance takes the whole sentence ("Use bash instead of python." means nothing without its tail)."""
    kept: list[str] = []
    notes: list[str] = []
    for sentence in _sentences(solution):
        broken = _rule_broken(sentence, transient=transient)
        if broken is None:
            kept.append(sentence)
            continue
        clauses = [c for c in _CLAUSE_RE.split(sentence) if c.strip()] if broken == "tool ban" else []
        rest = [c.strip() for c in clauses if _rule_broken(c, transient=transient) is None]
        if len(clauses) > 1 and rest and lesson_tokens(" ".join(rest)):
            kept.append(", ".join(rest))
        notes.append(f"removed {broken}: {sentence[:120]!r}")
    return " ".join(kept).strip(), notes


def vet_lesson(draft: LessonDraft, source: Trajectory, *, transient: str | None = None) -> Vetted:
    """Apply the quality rules to `draft`, reflected from `source` (`transient`: its transient cause, if any).

    Returns the lesson to store (possibly rewritten) or None with the reason. Never raises.
    """
    notes: list[str] = []
    solution, dropped = _strip_solution(draft.solution, transient=transient is not None)
    notes += dropped
    if not lesson_tokens(solution):
        reason = "global prohibition: the lesson only bans a tool" if dropped else "the lesson has no solution"
        if transient is not None and dropped:
            reason = f"transient failure ({transient}): the lesson only blames a tool"
        return Vetted(None, reason, tuple(notes))
    mistake, mistake_dropped = draft.mistake, False
    if _UNIVERSAL_RE.search(mistake):
        mistake, mistake_dropped = _UNIVERSAL_RE.sub("", mistake).strip(" ,;"), True
    if mistake_dropped:
        notes.append("removed universal wording from the mistake")
    task = draft.task
    request_tokens = set(lesson_tokens(source.user_request))
    if is_generic_task(task):
        task = request_kind(source.user_request) if request_tokens else ""
        notes.append(f"rewrote generic task {draft.task!r} from the request")
        if not task:
            return Vetted(None, "the lesson cannot be scoped: no task and an empty request", tuple(notes))
    elif request_tokens and not request_tokens & set(lesson_tokens(task)):
        # The model's description of the kind is kept; the request's words make retrieval find it.
        room = max(TASK_CHARS - len(task) - 10, 40)
        task = f"{task} (e.g. {clean_field(source.user_request, room)})"
        notes.append("task shares no word with the request: appended the request")
    task = clean_field(task, TASK_CHARS + REQUEST_KIND_CHARS)
    return Vetted(LessonDraft(task=task, mistake=mistake, solution=solution), "", tuple(notes))


__all__ = [
    "MIN_TASK_TOKENS",
    "Vetted",
    "is_generic_task",
    "request_kind",
    "transient_failure",
    "vet_lesson",
]
