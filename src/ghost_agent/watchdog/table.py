"""The phase table of DESIGN §5, built from the settings.

Each row is a key ("2.5"), a phase name, and the settings its window and cooldown come from; every value is
multiplied by `idle_time_scale` (0.01 = a hundred times faster, for demos and tests). The implementation of a
row comes from `PHASES` (name -> factory); a row without one is a `NotBuiltPhase`. To plug in a real phase,
add it to `PHASES` — or at runtime `Watchdog.install(phase)` replaces the row of the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ghost_agent.settings import Settings
from ghost_agent.watchdog.base import NotBuiltPhase, Phase, Timing
from ghost_agent.watchdog.phases.journal_drain import JournalDrainPhase
from ghost_agent.watchdog.phases.reflection import ReflectionPhase
from ghost_agent.watchdog.phases.rem_dream import RemDreamPhase
from ghost_agent.watchdog.phases.retrain import RetrainPhase
from ghost_agent.watchdog.phases.self_play import SelfPlayPhase
from ghost_agent.watchdog.phases.selfhood import SelfhoodPhase
from ghost_agent.watchdog.phases.skills_auto import SkillsAutoPhase


@dataclass(frozen=True)
class Row:
    """One row of the phase table: which settings hold its window (max None = unbounded) and cooldown."""

    key: str
    name: str
    title: str
    min_idle: str
    max_idle: str | None
    cooldown: str

    def timing(self, settings: Settings) -> Timing:
        """This row's timing from `settings`, scaled by `idle_time_scale`."""
        scale = settings.watchdog.idle_time_scale
        hi = None if self.max_idle is None else float(settings.get(self.max_idle)) * scale
        return Timing(
            min_idle_s=float(settings.get(self.min_idle)) * scale,
            max_idle_s=hi,
            cooldown_s=float(settings.get(self.cooldown)) * scale,
        )


ROWS: tuple[Row, ...] = (
    Row("1", "journal_drain", "journal drain", "journal_drain_idle_s", None, "journal_drain_cooldown_s"),
    Row("2", "rem_dream", "REM dream", "rem_dream_idle_s", "rem_dream_idle_max_s", "rem_dream_cooldown_s"),
    Row("2.5", "reflection", "reflection backstop", "reflection_idle_s", "reflection_idle_max_s",
        "reflection_cooldown_s"),
    Row("2.6", "skills_auto", "skills auto-extract", "skills_auto_idle_s", "skills_auto_idle_max_s",
        "skills_auto_cooldown_s"),
    Row("2.7", "retrain", "PRM/router retrain", "retrain_idle_s", "retrain_idle_max_s", "prm_train_cooldown"),
    Row("2.8", "selfhood", "selfhood narrative", "selfhood_idle_s", "selfhood_idle_max_s", "selfhood_cooldown_s"),
    Row("3", "self_play", "self-play", "self_play_idle_s", None, "self_play_cooldown_s"),
)

PhaseFactory = Callable[[Timing, Settings], Phase]
MIN_TICK_S = 0.001  # however compressed, the loop sleeps between ticks

# Implemented phases by name; rows missing here run as "not built".
PHASES: dict[str, PhaseFactory] = {
    "journal_drain": lambda timing, settings: JournalDrainPhase(timing),
    "rem_dream": lambda timing, settings: RemDreamPhase(
        timing,
        archive_after_days=settings.watchdog.dream_archive_days,
        merge_jaccard=settings.watchdog.dream_merge_jaccard,
    ),
    "reflection": lambda timing, settings: ReflectionPhase(timing, batch=settings.learning.reflection_batch),
    "retrain": lambda timing, settings: RetrainPhase(
        timing, holdout_fraction=settings.learning.retrain_holdout_fraction
    ),
    "skills_auto": lambda timing, settings: SkillsAutoPhase(
        timing, min_support=settings.learning.skills_min_support, batch=settings.learning.skills_scan_batch
    ),
    "selfhood": lambda timing, settings: SelfhoodPhase(timing, narrative=settings.learning.selfhood_narrative),
    "self_play": lambda timing, settings: SelfPlayPhase(
        timing, tasks=settings.learning.selfplay_tasks_per_pass, attempts=settings.learning.selfplay_attempts,
        frontier=settings.learning.frontier_selfplay, uniform_prob=settings.learning.frontier_uniform_sample_prob,
    ),
}


def tick_seconds(settings: Settings) -> float:
    """Seconds between watchdog ticks (scaled like the windows)."""
    return max(MIN_TICK_S, settings.watchdog.tick_s * settings.watchdog.idle_time_scale)


def build_phases(settings: Settings, factories: dict[str, PhaseFactory] | None = None) -> list[Phase]:
    """The phase table, in order, with every timing from `settings` and an implementation per row."""
    factories = PHASES if factories is None else factories
    phases: list[Phase] = []
    for row in ROWS:
        timing = row.timing(settings)
        factory = factories.get(row.name)
        phase = (
            factory(timing, settings) if factory is not None
            else NotBuiltPhase(timing, name=row.name, title=row.title)
        )
        phase.key, phase.timing = row.key, timing
        phase.name = phase.name or row.name
        phase.title = phase.title or row.title
        phases.append(phase)
    return phases


def row_for(name: str) -> Row:
    """The table row named `name` (KeyError if none)."""
    for row in ROWS:
        if row.name == name:
            return row
    raise KeyError(name)


__all__ = ["PHASES", "ROWS", "PhaseFactory", "Row", "build_phases", "row_for", "tick_seconds"]
