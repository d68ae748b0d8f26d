"""A self-play task and the templates that make them (DESIGN §8, seed 001 "Frontier-aware self-play").

A `Task` is `(cluster, template, seed, difficulty)` made concrete: the prompt as a person would type it, the
files it needs in the workspace, the `Check` that grades a reply (`selfplay/checks.py`), a reference reply that
passes and at least one known-bad reply that fails. A `Template` makes tasks: `make(rng, difficulty)` draws
numbers, names, data files and schemas from a seeded RNG, so the same `(template, seed, difficulty)` always gives
the same task and a new seed a fresh but equivalent one. Difficulty is a template parameter (1 easy .. 3 hard):
a saturated cluster gets harder tasks, not only fewer.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Protocol

from ghost_agent.selfplay.checks import Check

CLUSTERS = (
    "algo", "bash", "concurrency", "data_analysis", "python_general", "regex_parse", "sql", "web_automation",
)
DIFFICULTIES = (1, 2, 3)


@dataclass(frozen=True)
class Task:
    """One concrete task: what the user asks, what the workspace holds, and how a reply is graded."""

    cluster: str
    template: str
    seed: int
    difficulty: int
    prompt: str
    check: Check
    reference: str  # a reply that passes the check
    bad: tuple[str, ...]  # replies that fail it (a plausible mistake each)
    files: dict[str, str] = field(default_factory=dict)  # workspace-relative path -> text

    @property
    def id(self) -> str:
        """`cluster/template/d<difficulty>/<seed>`: stable across runs."""
        return f"{self.cluster}/{self.template}/d{self.difficulty}/{self.seed}"


class Template(Protocol):
    """Makes tasks of one kind. `name` is unique within its `cluster`."""

    @property
    def cluster(self) -> str:
        """One of CLUSTERS."""
        ...

    @property
    def name(self) -> str:
        """Unique within the cluster."""
        ...

    def make(self, rng: random.Random, difficulty: int) -> Task:
        """A task drawn with `rng` at `difficulty` (1..3); the Task's `seed` is filled by `generate`."""
        ...


def task_rng(cluster: str, template: str, seed: int, difficulty: int) -> random.Random:
    """The RNG of one task: a function of its identity only (not of Python's hash seed or the call order)."""
    digest = hashlib.sha256(f"{cluster}/{template}/{seed}/{difficulty}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def generate(template: Template, seed: int, difficulty: int) -> Task:
    """The task `(template, seed, difficulty)`; deterministic."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {difficulty!r}")
    task = template.make(task_rng(template.cluster, template.name, seed, difficulty), difficulty)
    return Task(
        cluster=template.cluster, template=template.name, seed=seed, difficulty=difficulty, prompt=task.prompt,
        check=task.check, reference=task.reference, bad=task.bad, files=dict(task.files),
    )


def draft(template: Template, difficulty: int, *, prompt: str, check: Check, reference: str,
          bad: tuple[str, ...] | list[str], files: dict[str, str] | None = None) -> Task:
    """What a template's `make` returns: the task before `generate` stamps its seed."""
    return Task(
        cluster=template.cluster, template=template.name, seed=-1, difficulty=difficulty, prompt=prompt,
        check=check, reference=reference, bad=tuple(bad), files=dict(files or {}),
    )


__all__ = ["CLUSTERS", "DIFFICULTIES", "Task", "Template", "draft", "generate", "task_rng"]
