"""The correction-transfer run's records, rates and table (`ghost.eval.transfer_result.v1`).

`TransferResult` holds every request the driver made (`eval/transfer.py`): the probes before learning (each in
a fresh session), and per family the teaching turn, the correction, how the lesson wait ended, and the
probes and controls after learning (in the taught session). Rates are computed from those records, so the
JSON is the whole truth and the table is a view of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ghost_agent.jsonsafe import JSON

TRANSFER_SCHEMA = "ghost.eval.transfer_result.v1"
TARGET_AFTER = 0.8  # issue 13: after learning, >= 0.8 on the taught families
REPLY_CHARS = 2000

# How the wait for a family's lesson ended.
LESSON_STORED = "stored"  # a reflection lesson from the teaching turn is in the store
LESSON_NONE = "no_lesson"  # the reflection ran and stored nothing (the critique found no lesson, or merged)
LESSON_MISSED = "correction_missed"  # the daemon did not take the correction as one: nothing to reflect on
LESSON_TEACH_FAILED = "teach_failed"  # the teaching or the correcting request failed (error, timeout)
LESSON_TIMEOUT = "timeout"  # no reflection within the lesson timeout


@dataclass
class TurnRun:
    """One request of the run and its check: `role` teach | correction | probe | control, `phase` before |
    learn (the teaching and correcting turns) | after. `lessons_shown`: how many lessons the daemon showed the
    model for it (from the daemon's trajectory; None when the daemon's home could not be read). `content`:
    whether its answer is right in any form (`eval/content.py`), apart from the convention (`passed`)."""

    probe_id: str
    family: str
    role: str
    phase: str
    session: str
    prompt: str
    passed: bool
    reason: str = ""
    reply: str = ""
    trajectory_id: str | None = None
    error: str | None = None
    duration_ms: float = 0.0
    lessons_shown: int | None = None
    content: bool | None = None  # the answer right whatever its form (`eval/content.py`); None: not graded
    content_reason: str = ""

    def to_dict(self) -> JSON:
        """A JSON-ready dict (the reply clipped)."""
        out = asdict(self)
        out["reply"] = self.reply[:REPLY_CHARS]
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> TurnRun:
        """Parse a stored record (unknown keys ignored)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class LessonWait:
    """How the wait for the family's lesson ended (`status`, one of the LESSON_* values), after how long, and
    the lesson (id, "task -> solution") or the reason there is none."""

    status: str
    seconds: float = 0.0
    lesson_id: str | None = None
    text: str = ""
    detail: str = ""

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: JSON) -> LessonWait:
        """Parse a stored record."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class FamilyRun:
    """One family's learning: taught in `session`, then probed there (same family) and controlled (others)."""

    family: str
    convention: str
    session: str
    teach: TurnRun
    correction: TurnRun | None
    lesson: LessonWait
    probes: list[TurnRun] = field(default_factory=list)
    controls: list[TurnRun] = field(default_factory=list)

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {
            "family": self.family, "convention": self.convention, "session": self.session,
            "teach": self.teach.to_dict(),
            "correction": self.correction.to_dict() if self.correction is not None else None,
            "lesson": self.lesson.to_dict(),
            "probes": [p.to_dict() for p in self.probes],
            "controls": [c.to_dict() for c in self.controls],
        }

    @classmethod
    def from_dict(cls, data: JSON) -> FamilyRun:
        """Parse a stored record."""
        correction = data.get("correction")
        return cls(
            family=str(data["family"]), convention=str(data.get("convention") or ""),
            session=str(data.get("session") or ""), teach=TurnRun.from_dict(data["teach"]),
            correction=TurnRun.from_dict(correction) if isinstance(correction, dict) else None,
            lesson=LessonWait.from_dict(data.get("lesson") or {"status": LESSON_TIMEOUT}),
            probes=[TurnRun.from_dict(p) for p in data.get("probes") or []],
            controls=[TurnRun.from_dict(c) for c in data.get("controls") or []],
        )


@dataclass(frozen=True)
class Rate:
    """passed / total."""

    passed: int
    total: int

    @classmethod
    def of(cls, runs: list[TurnRun]) -> Rate:
        """The pass count of `runs`."""
        return cls(sum(r.passed for r in runs), len(runs))

    @property
    def value(self) -> float | None:
        """The fraction, None for no runs."""
        return self.passed / self.total if self.total else None

    def __str__(self) -> str:
        return f"{self.passed}/{self.total}"

    def pct(self) -> str:
        """`3/4  75%` (or `0/0    -`)."""
        value = self.value
        return f"{self}" + (f" {100 * value:3.0f}%" if value is not None else "    -")

    def to_dict(self) -> JSON:
        """`{passed, total, rate}`."""
        value = self.value
        return {"passed": self.passed, "total": self.total, "rate": None if value is None else round(value, 6)}


def _shown(runs: list[TurnRun]) -> Rate | None:
    """How many of `runs` were shown at least one lesson; None when that is unknown for any of them."""
    if not runs or any(r.lessons_shown is None for r in runs):
        return None
    return Rate(sum(1 for r in runs if (r.lessons_shown or 0) > 0), len(runs))


@dataclass
class TransferResult:
    """The whole run: the before-learning probes by probe id, each family's learning, and the run metadata."""

    before: dict[str, TurnRun]
    families: list[FamilyRun]
    metadata: JSON = field(default_factory=dict)

    def _before_of(self, runs: list[TurnRun]) -> list[TurnRun]:
        return [self.before[r.probe_id] for r in runs if r.probe_id in self.before]

    def family_rates(self, run: FamilyRun) -> JSON:
        """One family's before / after rates for its probes and its controls (the same probes before)."""
        return {
            "before": Rate.of(self._before_of(run.probes)),
            "after": Rate.of(run.probes),
            "controls_before": Rate.of(self._before_of(run.controls)),
            "controls_after": Rate.of(run.controls),
            "shown": _shown(run.probes),
            "controls_shown": _shown(run.controls),
            "told": None if run.correction is None else run.correction.passed,
        }

    def _after(self) -> list[TurnRun]:
        """Every probe and control asked after learning."""
        return [r for f in self.families for r in (*f.probes, *f.controls)]

    def content_worse(self) -> list[str]:
        """The probes and controls whose answer was right before learning and is wrong after (target: none)."""
        return [r.probe_id for r in self._after()
                if r.content is False and (b := self.before.get(r.probe_id)) is not None and b.content is True]

    def content_rate(self, phase: str) -> Rate | None:
        """How many graded probes and controls had a right answer, before or after learning."""
        runs = self._after()
        if phase == "before":
            runs = self._before_of(runs)
        graded = [r for r in runs if r.content is not None]
        return Rate(sum(bool(r.content) for r in graded), len(graded)) if graded else None

    def totals(self) -> JSON:
        """The rates over all families: taught probes before/after, controls before/after, lessons stored."""
        probes = [p for f in self.families for p in f.probes]
        controls = [c for f in self.families for c in f.controls]
        return {
            "before": Rate.of(self._before_of(probes)),
            "after": Rate.of(probes),
            "controls_before": Rate.of(self._before_of(controls)),
            "controls_after": Rate.of(controls),
            "lessons_stored": Rate(sum(f.lesson.status == LESSON_STORED for f in self.families), len(self.families)),
            "told": Rate(sum(bool(f.correction and f.correction.passed) for f in self.families), len(self.families)),
            "shown": _shown(probes),
            "controls_shown": _shown(controls),
            "content_before": self.content_rate("before"),
            "content_after": self.content_rate("after"),
            "content_worse": self.content_worse(),
        }

    def to_dict(self) -> JSON:
        """The schema-tagged JSON document."""

        def plain(rates: JSON) -> JSON:
            return {k: (v.to_dict() if isinstance(v, Rate) else v) for k, v in rates.items()}

        totals = plain(self.totals())
        after = self.totals()["after"].value
        totals["target_after"] = TARGET_AFTER
        totals["target_met"] = None if after is None else after >= TARGET_AFTER
        return {
            "schema": TRANSFER_SCHEMA,
            "summary": totals,
            "families": [{**run.to_dict(), "rates": plain(self.family_rates(run))} for run in self.families],
            "before": [run.to_dict() for run in self.before.values()],
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TransferResult:
        """Parse a stored result; ValueError when it is not one."""
        if not isinstance(data, dict) or data.get("schema") != TRANSFER_SCHEMA:
            raise ValueError(f"not a transfer result (expected schema {TRANSFER_SCHEMA!r})")
        before = [TurnRun.from_dict(r) for r in data.get("before") or []]
        return cls(before={r.probe_id: r for r in before},
                   families=[FamilyRun.from_dict(f) for f in data.get("families") or []],
                   metadata=dict(data.get("metadata") or {}))

    def render_table(self) -> str:
        """The per-family table and the totals, as text."""
        meta = self.metadata
        head = (f"correction transfer: {len(self.families)} families; daemon {meta.get('daemon_model') or '?'} "
                f"({meta.get('backend') or '?'}) at {meta.get('base_url') or '?'}")
        columns = (f"{'family':<16} {'convention':<46} {'told':<5} {'lesson':<18} {'before':<9} {'after':<9} "
                   f"{'shown':<6} {'controls before -> after'}")
        lines = [head, "", columns, "-" * (len(columns) + 2)]
        for run in self.families:
            r = self.family_rates(run)
            told = "-" if r["told"] is None else ("yes" if r["told"] else "no")
            seconds = run.lesson.seconds
            lesson = run.lesson.status + ((f" {seconds:.1f}s" if seconds < 10 else f" {seconds:.0f}s")
                                          if run.lesson.status == LESSON_STORED else "")
            shown = str(r["shown"]) if r["shown"] is not None else "-"
            controls = f"{r['controls_before']} -> {r['controls_after']}"
            if r["controls_shown"] is not None and r["controls_shown"].passed:
                controls += f" (shown {r['controls_shown']})"
            lines.append(f"{run.family:<16} {run.convention[:46]:<46} {told:<5} {lesson:<18} {str(r['before']):<9} "
                         f"{str(r['after']):<9} {shown:<6} {controls}")
        t = self.totals()
        lines.append("")
        after = t["after"].value
        verdict = "-" if after is None else ("met" if after >= TARGET_AFTER else "not met")
        lines.append(f"taught families: before {t['before'].pct()}  ->  after {t['after'].pct()}   "
                     f"(target after >= {100 * TARGET_AFTER:.0f}%: {verdict})")
        delta = t["controls_after"].passed - t["controls_before"].passed
        lines.append(f"controls:        before {t['controls_before'].pct()}  ->  after {t['controls_after'].pct()}   "
                     f"({'unchanged' if delta == 0 else f'{delta:+d}'})")
        extra = f"lessons stored {t['lessons_stored']}; the corrected reply followed the convention {t['told']}"
        if t["shown"] is not None:
            extra += f"; probes shown a lesson {t['shown']}"
        if t["controls_shown"] is not None:
            extra += f", controls shown a lesson {t['controls_shown']}"
        lines.append(extra)
        if t["content_after"] is not None:
            worse = t["content_worse"]
            lines.append(f"content (the answer right in any form): before {t['content_before']}  ->  after "
                         f"{t['content_after']};  worse after learning: {len(worse)} (target 0)"
                         + (f": {', '.join(worse)}" if worse else ""))
        return "\n".join(lines) + "\n"


__all__ = [
    "LESSON_MISSED",
    "LESSON_NONE",
    "LESSON_STORED",
    "LESSON_TEACH_FAILED",
    "LESSON_TIMEOUT",
    "TARGET_AFTER",
    "TRANSFER_SCHEMA",
    "FamilyRun",
    "LessonWait",
    "Rate",
    "TransferResult",
    "TurnRun",
]
