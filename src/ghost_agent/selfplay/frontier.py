"""The frontier: what self-play has tried, passed and failed, per cluster, template and difficulty; where to
practise next (DESIGN §8, seed 001).

`FrontierTracker` is persisted under GHOST_HOME (`system/selfplay/frontier.json`, written atomically; a
corrupt file is set aside and counting starts again, never a crash). Per template it keeps attempts, passes
and a recent window of `(seed, difficulty, passed)`. A difficulty of a cluster is saturated when its recent
window passes at `saturation_rate` or more over at least `saturation_min` attempts; the cluster then practises
at the next difficulty, and is saturated (`list_saturated_clusters`) only when every difficulty is.

Two pickers return the same dict shape, `{cluster, template, seed, difficulty, reason}`:
- `pick_seed`, the brittle pool half the time: a task failed recently and not passed since (retried with its
  own seed, so the store gets a pass/fail pair of one task; it leaves the pool after MAX_TASK_FAILURES
  failures), else a uniform draw over the clusters that are not saturated;
- `pick_frontier_seed`: a cluster drawn by weight (`frontier_selection.cluster_weights`), its least-tried
  template, a fresh seed.
`choose` applies the strict engagement gate: the frontier picker runs only with a real `PRMScorer` that has a
model and a real `TrajectoryCollector`, unless the `uniform_prob` dice roll or `frontier=False` says otherwise.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.atomic import atomic_write_bytes
from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger
from ghost_agent.prm.labels import reconstruct_state, step_action
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.selfplay.frontier_selection import cluster_weights, compute_cluster_uncertainty, pick_weighted
from ghost_agent.selfplay.task import DIFFICULTIES
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory

log = get_logger("selfplay.frontier")

SCHEMA = "ghost.selfplay.frontier.v1"
SEED_SPACE = 2**31
# The brittle pool: a failed task is retried (its own seed: a pass/fail pair of one task) until it passes or
# has failed this often; a pick goes to the pool only half the time, the rest explores.
MAX_TASK_FAILURES = 3
BRITTLE_SHARE = 0.5

Pick = dict[str, Any]  # {cluster, template, seed, difficulty, reason}


@dataclass
class TemplateRecord:
    """One template's counts and its recent attempts `[seed, difficulty, passed]`, newest last."""

    attempts: int = 0
    passes: int = 0
    recent: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> JSON:
        return {"attempts": self.attempts, "passes": self.passes, "recent": self.recent}

    @classmethod
    def from_dict(cls, data: Any) -> TemplateRecord:
        if not isinstance(data, dict):
            raise ValueError("a template record is an object")
        recent = [r for r in data.get("recent", []) if isinstance(r, list) and len(r) == 3]
        return cls(int(data.get("attempts", 0)), int(data.get("passes", 0)), recent)


class FrontierTracker:
    """Attempts and passes per (cluster, template), persisted; saturation; the two pickers."""

    def __init__(
        self, path: Path | None = None, *, window: int = 20, saturation_rate: float = 0.9, saturation_min: int = 8
    ) -> None:
        self.path = path
        self.window = window
        self.saturation_rate = saturation_rate
        self.saturation_min = saturation_min
        self.records: dict[str, dict[str, TemplateRecord]] = {}  # cluster -> template -> record
        if path is not None:
            self._load(path)

    # Persistence

    def _load(self, path: Path) -> None:
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            self._set_aside(path, repr(exc))
            return
        try:
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(f"not a {SCHEMA} file")
            for cluster, templates in data.get("clusters", {}).items():
                for name, record in templates.items():
                    self.records.setdefault(str(cluster), {})[str(name)] = TemplateRecord.from_dict(record)
        except (ValueError, TypeError, AttributeError) as exc:
            self.records = {}
            self._set_aside(path, repr(exc))

    def _set_aside(self, path: Path, error: str) -> None:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        try:
            path.replace(aside)
        except OSError:
            aside = path
        log.warning("frontier_corrupt", path=str(path), set_aside=str(aside), error=error)

    def save(self) -> None:
        """Write the tracker atomically (no-op without a path)."""
        if self.path is None:
            return
        data = {"schema": SCHEMA, "clusters": {
            c: {t: r.to_dict() for t, r in sorted(ts.items())} for c, ts in sorted(self.records.items())
        }}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path, orjson.dumps(data))

    # Counting

    def record(self, cluster: str, template: str, seed: int, difficulty: int, passed: bool) -> None:
        """Count one attempt (call `save` to persist)."""
        rec = self.records.setdefault(cluster, {}).setdefault(template, TemplateRecord())
        rec.attempts += 1
        rec.passes += int(passed)
        rec.recent.append([int(seed), int(difficulty), bool(passed)])
        del rec.recent[: -self.window]

    def outcomes(self) -> dict[str, tuple[int, int]]:
        """(passes, attempts) per cluster, all time."""
        return {c: (sum(r.passes for r in ts.values()), sum(r.attempts for r in ts.values()))
                for c, ts in self.records.items()}

    def recent(self, cluster: str, difficulty: int | None = None) -> list[bool]:
        """The cluster's recent verdicts (each template's window), at one difficulty or all."""
        return [bool(p) for r in self.records.get(cluster, {}).values() for _, d, p in r.recent
                if difficulty is None or d == difficulty]

    def saturated(self, cluster: str, difficulty: int) -> bool:
        """Whether the cluster passes `difficulty` reliably: enough recent attempts, high enough rate."""
        verdicts = self.recent(cluster, difficulty)[-self.window:]
        return len(verdicts) >= self.saturation_min and sum(verdicts) / len(verdicts) >= self.saturation_rate

    def difficulty_for(self, cluster: str) -> int:
        """The lowest difficulty the cluster has not saturated (the highest when it saturated all)."""
        for difficulty in DIFFICULTIES:
            if not self.saturated(cluster, difficulty):
                return difficulty
        return DIFFICULTIES[-1]

    def list_saturated_clusters(self) -> list[str]:
        """Clusters saturated at every difficulty: nothing left to learn there."""
        return sorted(c for c in self.records if all(self.saturated(c, d) for d in DIFFICULTIES))

    # Picking

    def brittle_pool(self) -> list[tuple[str, str, int, int]]:
        """Recent failures not passed since and failed fewer than MAX_TASK_FAILURES times:
        (cluster, template, seed, difficulty)."""
        pool = []
        for cluster, templates in sorted(self.records.items()):
            for name, rec in sorted(templates.items()):
                passed = {(s, d) for s, d, p in rec.recent if p}
                failures: dict[tuple[int, int], int] = {}
                for s, d, p in rec.recent:
                    if not p:
                        failures[(s, d)] = failures.get((s, d), 0) + 1
                pool += [(cluster, name, s, d) for (s, d), n in sorted(failures.items())
                         if (s, d) not in passed and n < MAX_TASK_FAILURES]
        return pool

    def pick_seed(self, rng: random.Random, templates: Mapping[str, Sequence[str]]) -> Pick | None:
        """Half the time the brittle pool's pick (when it has one), else a uniform one over clusters not
        saturated; None when none is left."""
        pool = [p for p in self.brittle_pool() if p[1] in templates.get(p[0], ())]
        if pool and rng.random() < BRITTLE_SHARE:
            cluster, template, seed, difficulty = rng.choice(pool)
            return _pick(cluster, template, seed, difficulty, "brittle")
        saturated = set(self.list_saturated_clusters())
        open_clusters = sorted(c for c, ts in templates.items() if ts and c not in saturated)
        if not open_clusters:
            return None
        cluster = rng.choice(open_clusters)
        template = rng.choice(sorted(templates[cluster]))
        return _pick(cluster, template, rng.randrange(SEED_SPACE), self.difficulty_for(cluster), "uniform")

    def pick_frontier_seed(
        self, rng: random.Random, weights: Mapping[str, float], templates: Mapping[str, Sequence[str]]
    ) -> Pick | None:
        """A cluster drawn by `weights`, its least-tried template, a fresh seed; None when every weight is 0."""
        cluster = pick_weighted({c: w for c, w in weights.items() if templates.get(c)}, rng)
        if cluster is None:
            return None
        tried = self.records.get(cluster, {})
        attempts = {t: tried[t].attempts if t in tried else 0 for t in templates[cluster]}
        fewest = min(attempts.values())
        template = rng.choice(sorted(t for t, n in attempts.items() if n == fewest))
        return _pick(cluster, template, rng.randrange(SEED_SPACE), self.difficulty_for(cluster), "frontier")


def _pick(cluster: str, template: str, seed: int, difficulty: int, reason: str) -> Pick:
    return {"cluster": cluster, "template": template, "seed": int(seed), "difficulty": int(difficulty),
            "reason": reason}


def engaged(scorer: object, collector: object) -> bool:
    """The strict gate: a real PRMScorer with a loaded model and a real TrajectoryCollector."""
    return isinstance(scorer, PRMScorer) and scorer.has_model and isinstance(collector, TrajectoryCollector)


def cluster_evidence(
    trajectories: Iterable[Trajectory], clusters: Iterable[str], per_cluster: int = 16
) -> tuple[dict[str, int], dict[str, list[tuple[Any, Any]]]]:
    """From trajectories: how many each cluster has, and up to `per_cluster` representative (state, action)
    pairs of its most recent ones (every step's state before it and the action taken)."""
    wanted = set(clusters)
    counts = dict.fromkeys(wanted, 0)
    pairs: dict[str, list[tuple[Any, Any]]] = {c: [] for c in wanted}
    for traj in trajectories:
        cluster = traj.cluster
        if cluster not in wanted:
            continue
        counts[cluster] += 1
        for i, step in enumerate(traj.steps):
            pairs[cluster].append((reconstruct_state(traj, i), step_action(step)))
        del pairs[cluster][: -per_cluster]
    return counts, pairs


def choose(
    tracker: FrontierTracker,
    rng: random.Random,
    templates: Mapping[str, Sequence[str]],
    *,
    scorer: object = None,
    collector: object = None,
    frontier: bool = True,
    uniform_prob: float = 0.2,
    evidence: tuple[Mapping[str, int], Mapping[str, Sequence[tuple[Any, Any]]]] | None = None,
) -> Pick | None:
    """The next task to practise. The frontier picker when `frontier` is on, the gate is open (`engaged`) and
    the `uniform_prob` roll does not fall back; else (or when every weight is 0) `pick_seed`. `evidence` is
    `cluster_evidence(...)` (computed from `collector` when omitted). The pick's `reason` says which ran."""
    if frontier and engaged(scorer, collector) and rng.random() >= uniform_prob:
        assert isinstance(scorer, PRMScorer) and isinstance(collector, TrajectoryCollector)
        counts, pairs = evidence if evidence is not None else cluster_evidence(
            collector.iter_trajectories(), templates)
        uncertainty = compute_cluster_uncertainty(scorer, pairs, templates)
        weights = cluster_weights(templates, uncertainty, counts, tracker.list_saturated_clusters())
        pick = tracker.pick_frontier_seed(rng, weights, templates)
        if pick is not None:
            pick["weight"] = round(weights[pick["cluster"]], 6)
            return pick
    return tracker.pick_seed(rng, templates)


__all__ = ["FrontierTracker", "Pick", "TemplateRecord", "choose", "cluster_evidence", "engaged"]
