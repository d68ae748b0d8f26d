"""The Reflector: a critique of a FAILED trajectory → a vetted lesson → the sink (seed 001, "reflect").

Two paths reach it and share one "already reflected" set, so each trajectory is reflected once whichever
comes first:

* real time — a user correction schedules `reflect_one(failed turn, correction=the user's message)`;
* backstop — `run(limit)` (the watchdog's reflection phase) over recent FAILED trajectories nobody has
  reflected on yet, newest first, at most `limit` per pass. "Reflected" also means a reflection record on
  disk (`extra.reflected_from`), so a restart does not reflect the same failures again.

When the user's correcting message states what they wanted ("No, I write dates as DD/MM/YYYY. ..."), their
words are the lesson and no critique is asked for (`_preference_lesson`): stored in milliseconds, without the
model. Otherwise the lesson comes from the critique.

`reflect_one` adds the id to the set BEFORE its first await: a concurrent path that reaches the same
trajectory while the critique is pending sees it and skips. The critique is one model call bounded by
`per_call_timeout_s`; a timeout, a backend error, an unparseable reply or a lesson the quality rules reject
is a "no lesson" result with the reason, logged as a `reflection` event. Transient failures (timeouts,
upstream errors, sandbox kills) are not reflected on at all unless the user corrected the turn.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Protocol, TypeVar

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError, LLMBackend
from ghost_agent.llm.gate import ModelPreempted
from ghost_agent.llm.wire import reply_text
from ghost_agent.logging import get_logger
from ghost_agent.memory.preference import LESSON_SOURCE as PREFERENCE_SOURCE
from ghost_agent.memory.preference import preference_solution, stated_preference
from ghost_agent.reflection.parse import LessonDraft, NoLesson, parse_lesson
from ghost_agent.reflection.quality import request_kind, transient_failure, vet_lesson
from ghost_agent.text.excerpt import clip
from ghost_agent.text.prompts import messages
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Source, Trajectory

log = get_logger("reflection")

T = TypeVar("T")

PROMPT = "reflection"
REQUEST_CHARS = 1_500
RESPONSE_CHARS = 1_200
CORRECTION_CHARS = 1_000
STEP_CHARS = 240
MAX_STEPS_SHOWN = 6
RAW_CHARS = 4_000  # the critique reply as kept in the reflection record
REFLECTABLE_SOURCES = frozenset({Source.CHAT.value, Source.SELF_PLAY.value})
NO_CORRECTION = "(none: the turn was judged failed without the user saying why)"

TRIGGER_CORRECTION = "user_correction"
TRIGGER_BACKSTOP = "backstop"

STATUS_OK = "ok"
STATUS_NO_LESSON = "no_lesson"
STATUS_SKIPPED = "skipped"
STATUS_FAILED = "failed"


class ModelGate(Protocol):
    """Chat-first arbitration of the one model (`llm.gate.ModelGate`): a background model call runs
    through `background(fn, wait=...)` only while no user request is in flight, and is preempted by one."""

    async def background(self, fn: Callable[[], Awaitable[T]], *, wait: bool = False) -> T:
        """Run `fn()` at low priority; `wait=False` raises `ModelPreempted` instead of waiting for users."""
        ...


@dataclass(frozen=True)
class ReflectionRecord:
    """What the sink receives: the reflection as a trajectory (source `reflection`, `extra.reflected_from`),
    the vetted lesson (None when there is none to store), and the provenance to store it with."""

    trajectory: Trajectory
    lesson: LessonDraft | None
    reflected_from: str
    session_id: str
    lesson_source: str = "reflection"


Sink = Callable[[ReflectionRecord], Awaitable[str | None]]
"""Stores a reflection; returns the stored lesson's id (None when no lesson was stored). Must not raise."""


@dataclass(frozen=True)
class ReflectionResult:
    """One reflection attempt: `status` is ok (a lesson was produced; `lesson_id` once stored), no_lesson
    (`reason` says why), skipped (already reflected, not failed, transient) or failed (a bug: `reason`)."""

    status: str
    trajectory_id: str
    trigger: str
    reason: str = ""
    lesson: LessonDraft | None = None
    lesson_id: str | None = None
    reflection_id: str | None = None
    notes: tuple[str, ...] = field(default=())
    ms: float = 0.0

    def to_dict(self) -> JSON:
        """A JSON-ready summary (what the watchdog status and logs show)."""
        out: JSON = {"status": self.status, "trajectory_id": self.trajectory_id, "trigger": self.trigger,
                     "ms": round(self.ms, 1)}
        if self.reason:
            out["reason"] = self.reason
        if self.lesson is not None:
            out["lesson"] = self.lesson.to_dict()
        if self.lesson_id:
            out["lesson_id"] = self.lesson_id
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def render_steps(traj: Trajectory) -> str:
    """The turn's tool calls as a bounded block: the last few, one line each, failures with their error."""
    if not traj.steps:
        return "(no tools: it answered directly)"
    shown = traj.steps[-MAX_STEPS_SHOWN:]
    lines = [f"({len(traj.steps) - len(shown)} earlier steps omitted)"] if len(traj.steps) > len(shown) else []
    for step in shown:
        args = " ".join(str(v) for v in step.tool_args.values())[:120] if step.tool_args else ""
        outcome = f"FAILED: {step.error or step.result_preview}" if not step.ok else f"ok: {step.result_preview}"
        line = f"[{step.i + 1}] {step.tool_name or step.description or 'step'} {args} -> {outcome}"
        lines.append(clip(" ".join(line.split()), STEP_CHARS))
    return "\n".join(lines)


def build_messages(traj: Trajectory, correction: str | None = None) -> list[dict[str, str]]:
    """The critique prompt (`prompts/reflection.txt`) for `traj` and the user's correcting message."""
    return messages(
        PROMPT,
        request=clip(traj.user_request.strip(), REQUEST_CHARS) or "(empty)",
        steps=render_steps(traj),
        response=clip(traj.final_response.strip(), RESPONSE_CHARS) or "(empty)",
        failure=" ".join((traj.failure_reason or "judged failed").split())[:300],
        correction=clip(correction.strip(), CORRECTION_CHARS) if correction and correction.strip() else NO_CORRECTION,
    )


class Reflector:
    """Critique FAILED trajectories into lessons; one instance per daemon (it owns the dedup set).

    `backend` answers the critique (`model` forwarded when set, else the failed turn's own model name);
    `sink` stores results (see `CompositeSink`); `collector` is read by the backstop; `gate`, when given,
    runs each critique at low priority so chat goes first (a correction's reflection waits for users to
    finish; a backstop reflection gives way with `ModelPreempted`). `batch` bounds one backstop pass,
    `lookback_h` how far back it looks.
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        sink: Sink | None = None,
        collector: TrajectoryCollector | None = None,
        model: str | None = None,
        per_call_timeout_s: float = 120.0,
        max_tokens: int = 384,
        temperature: float = 0.2,
        batch: int = 5,
        lookback_h: float = 48.0,
        gate: ModelGate | None = None,
    ) -> None:
        if not (math.isfinite(per_call_timeout_s) and per_call_timeout_s > 0):
            raise ValueError(f"per_call_timeout_s must be a positive number, got {per_call_timeout_s}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.backend = backend
        self.sink = sink
        self.collector = collector
        self.model = model
        self.per_call_timeout_s = per_call_timeout_s
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.batch = batch
        self.lookback_h = lookback_h
        self.gate = gate
        # The one "already reflected" set both paths share (ids are added before the critique's await).
        self.reflected: set[str] = set()

    # ---- one trajectory -------------------------------------------------------------------------------

    async def reflect_one(
        self,
        traj: Trajectory,
        *,
        correction: str | None = None,
        session_id: str | None = None,
        trigger: str = TRIGGER_CORRECTION,
    ) -> ReflectionResult:
        """Reflect on one FAILED trajectory (at most once per id per Reflector) and hand the result to the
        sink. `correction` is the user's correcting message, `session_id` the corrected turn's session (the
        reflection record and the lesson's provenance use it). Timeouts, backend errors and bad replies come
        back as `no_lesson`. Raises `ModelPreempted` when a backstop critique gave way to a user (the id is
        then not marked reflected), and on bugs."""
        start = time.perf_counter()
        if traj.id in self.reflected:
            return self._skip(traj, trigger, "already reflected", start, quiet=True)
        self.reflected.add(traj.id)  # before any await: the other path must see it while we critique
        if traj.source not in REFLECTABLE_SOURCES:
            return self._skip(traj, trigger, f"source {traj.source!r} is not reflected on", start)
        if traj.outcome is not Outcome.FAILED:
            return self._skip(traj, trigger, f"outcome is {traj.outcome.value}, not failed", start)
        transient = transient_failure(traj)
        if transient is not None and not (correction and correction.strip()):
            return self._skip(traj, trigger, f"transient failure ({transient})", start)
        prompt = build_messages(traj, correction)
        raw, model = "", None
        lesson, reason, notes, lesson_source = self._preference_lesson(traj, correction, transient)
        if lesson is None:
            try:
                raw, model = await self._critique(traj, prompt, wait=trigger != TRIGGER_BACKSTOP)
            except (ModelPreempted, asyncio.CancelledError):
                self.reflected.discard(traj.id)  # not reflected after all: a later pass (or path) may try again
                raise
            except TimeoutError:
                return self._no_lesson(traj, trigger, f"timeout after {self.per_call_timeout_s:g}s", start)
            except BackendError as exc:
                return self._no_lesson(traj, trigger, f"backend error {exc.status}: {exc.message}"[:300], start)
            lesson, reason, notes, lesson_source = self._critique_lesson(parse_lesson(raw), traj, transient)
        session = session_id or traj.session_id
        record = ReflectionRecord(
            trajectory=self._record(traj, prompt[-1]["content"], raw, model, lesson, reason, notes, correction,
                                    trigger, session, start),
            lesson=lesson,
            reflected_from=traj.id,
            session_id=session,
            lesson_source=lesson_source,
        )
        lesson_id = await self.sink(record) if self.sink is not None else None
        ms = (time.perf_counter() - start) * 1000.0
        status = STATUS_OK if lesson is not None else STATUS_NO_LESSON
        result = ReflectionResult(status, traj.id, trigger, reason, lesson, lesson_id, record.trajectory.id,
                                  notes, ms)
        log.info("reflection", **result.to_dict(), reflection_id=record.trajectory.id)
        return result

    @staticmethod
    def _preference_lesson(traj: Trajectory, correction: str | None, transient: str | None
                           ) -> tuple[LessonDraft | None, str, tuple[str, ...], str]:
        """The lesson made of the user's stated preference (`memory/preference.py`), when their correcting
        message states one and it passes the quality rules (a user's "never use python" is still no global
        rule): (lesson, "", notes, "preference"); else (None, "", (), "").

        Then there is no critique at all. The user said what they wanted, in words that are a better lesson
        than a small model's critique (on the 1.5B, 4 of 8 critiques of such corrections restated the failed
        reply), and no model call means the lesson is stored within milliseconds of the correction — before
        the correcting turn's own reply — without taking the one model from the user."""
        preference = stated_preference(traj.user_request, correction)
        if preference is None:
            return None, "", (), ""
        draft = LessonDraft(request_kind(traj.user_request, whole=True), "", preference_solution(preference))
        vetted = vet_lesson(draft, traj, transient=transient)
        if vetted.lesson is None:
            return None, "", (), ""
        return vetted.lesson, "", ("from the user's stated preference; no critique", *vetted.notes), \
            PREFERENCE_SOURCE

    @staticmethod
    def _critique_lesson(parsed: LessonDraft | NoLesson, traj: Trajectory, transient: str | None
                         ) -> tuple[LessonDraft | None, str, tuple[str, ...], str]:
        """(lesson, no-lesson reason, quality notes, "reflection") from the critique's reply."""
        if isinstance(parsed, NoLesson):
            return None, parsed.reason, (), "reflection"
        vetted = vet_lesson(parsed, traj, transient=transient)
        return vetted.lesson, vetted.reason, vetted.notes, "reflection"

    async def _critique(
        self, traj: Trajectory, prompt: list[dict[str, str]], *, wait: bool
    ) -> tuple[str, str | None]:
        model = self.model or (traj.extra.get("model") if isinstance(traj.extra.get("model"), str) else None)
        body: JSON = {
            "messages": prompt,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if model:
            body["model"] = model

        async def call() -> JSON:
            # The timeout bounds the model call, not the wait for users to finish (a preempted call restarts).
            return await asyncio.wait_for(self.backend.complete(body), self.per_call_timeout_s)

        reply = await (self.gate.background(call, wait=wait) if self.gate is not None else call())
        return reply_text(reply), model

    def _record(
        self, traj: Trajectory, prompt: str, raw: str, model: str | None, lesson: LessonDraft | None, reason: str,
        notes: Sequence[str], correction: str | None, trigger: str, session: str, start: float,
    ) -> Trajectory:
        extra: JSON = {"reflected_from": traj.id, "trigger": trigger, "model": model,
                       "lesson": lesson.to_dict() if lesson is not None else None}
        if reason:
            extra["no_lesson"] = reason
        if notes:
            extra["quality_notes"] = list(notes)
        if correction:
            extra["correcting_message"] = clip(correction, CORRECTION_CHARS)
        return Trajectory(
            session_id=session,
            source=Source.REFLECTION.value,
            user_request=prompt,
            final_response=clip(raw, RAW_CHARS),
            outcome=Outcome.UNKNOWN,
            timing_ms={"critique": round((time.perf_counter() - start) * 1000.0, 3)},
            extra=extra,
        )

    def _skip(self, traj: Trajectory, trigger: str, reason: str, start: float, *, quiet: bool = False
              ) -> ReflectionResult:
        result = ReflectionResult(STATUS_SKIPPED, traj.id, trigger, reason, ms=(time.perf_counter() - start) * 1e3)
        (log.debug if quiet else log.info)("reflection", **result.to_dict())
        return result

    def _no_lesson(self, traj: Trajectory, trigger: str, reason: str, start: float) -> ReflectionResult:
        result = ReflectionResult(STATUS_NO_LESSON, traj.id, trigger, reason, ms=(time.perf_counter() - start) * 1e3)
        log.warning("reflection", **result.to_dict())
        return result

    # ---- the backstop ---------------------------------------------------------------------------------

    async def run(self, limit: int | None = None) -> list[ReflectionResult]:
        """One backstop pass: reflect on up to `limit` (default `batch`) recent FAILED trajectories not yet
        reflected, newest first. A trajectory the user corrected is reflected with their correcting message
        (found in the correcting turn's record). One failing reflection never stops the pass; a user request
        does (`ModelPreempted` propagates, so the watchdog phase reports "yielded")."""
        limit = self.batch if limit is None else limit
        if self.collector is None or limit <= 0:
            return []
        candidates, on_disk = await asyncio.to_thread(self.scan, limit, exclude=frozenset(self.reflected))
        self.reflected |= on_disk  # reflected before a restart: never again
        candidates = [(t, c) for t, c in candidates if t.id not in self.reflected]
        results: list[ReflectionResult] = []
        for traj, correction in candidates:
            try:
                results.append(await self.reflect_one(traj, correction=correction, trigger=TRIGGER_BACKSTOP))
            except ModelPreempted:
                log.info("reflection_pass", candidates=len(candidates), done=len(results), yielded=True)
                raise
            except Exception as exc:  # noqa: BLE001 - one bad trajectory must not end the pass
                log.error("reflection", status=STATUS_FAILED, trajectory_id=traj.id, trigger=TRIGGER_BACKSTOP,
                          error_type=type(exc).__name__, error=str(exc)[:300])
                results.append(ReflectionResult(STATUS_FAILED, traj.id, TRIGGER_BACKSTOP, type(exc).__name__))
        log.info("reflection_pass", candidates=len(candidates),
                 lessons=sum(r.status == STATUS_OK for r in results), limit=limit)
        return results

    def scan(
        self, limit: int, *, exclude: frozenset[str] = frozenset(), now: datetime | None = None
    ) -> tuple[list[tuple[Trajectory, str | None]], set[str]]:
        """The backstop's work list and the ids reflected on disk (blocking file I/O: call it in a thread).

        The list: up to `limit` reflectable FAILED trajectories of the last `lookback_h` hours with no
        reflection on disk and not in `exclude` (a snapshot of the dedup set: this runs off the loop), newest
        first, each with the user's correcting message when a later turn corrected it."""
        assert self.collector is not None
        since = (now or datetime.now(timezone.utc)) - timedelta(hours=self.lookback_h)
        on_disk: set[str] = set()
        corrections: dict[str, str] = {}
        failed: list[Trajectory] = []
        for traj in self.collector.iter_trajectories(since=since):
            if traj.source == Source.REFLECTION.value:
                source = traj.extra.get("reflected_from")
                if isinstance(source, str):
                    on_disk.add(source)
                continue
            corrected = traj.extra.get("corrected_prior")
            if isinstance(corrected, str) and corrected:
                corrections[corrected] = traj.user_request
            if traj.outcome is Outcome.FAILED and traj.source in REFLECTABLE_SOURCES:
                failed.append(traj)
        done = exclude | on_disk
        fresh = sorted((t for t in failed if t.id not in done), key=lambda t: t.ts, reverse=True)
        return [(t, corrections.get(t.id)) for t in fresh[:limit]], on_disk


__all__ = [
    "STATUS_FAILED",
    "STATUS_NO_LESSON",
    "STATUS_OK",
    "STATUS_SKIPPED",
    "TRIGGER_BACKSTOP",
    "TRIGGER_CORRECTION",
    "ModelGate",
    "ReflectionRecord",
    "ReflectionResult",
    "Reflector",
    "Sink",
    "build_messages",
    "render_steps",
]
