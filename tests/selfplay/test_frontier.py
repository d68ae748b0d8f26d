"""The frontier: the seed's weighting maths, saturation raising difficulty, the brittle pool, persistence that
survives corruption, and the strict engagement gate with a non-PRM scorer, an untrained one and a real one."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pytest

from ghost_agent.prm.features import PRM_FEATURE_NAMES, ActionCandidate, PlanState
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.selfplay.frontier import FrontierTracker, choose, cluster_evidence, engaged
from ghost_agent.selfplay.frontier_selection import (
    cluster_weights,
    compute_cluster_uncertainty,
    learnability_weights,
    pick_weighted,
    rarity,
    uncertainty_of,
)
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory

TEMPLATES = {"algo": ["a1", "a2"], "sql": ["s1"], "bash": ["b1", "b2"]}


class FixedScorer:
    def __init__(self, p: float) -> None:
        self.p = p

    def uncertainty(self, state: object, action: object) -> float:
        return uncertainty_of(self.p)


def test_the_seed_formula() -> None:
    assert uncertainty_of(0.5) == 1.0 and uncertainty_of(0.0) == 0.0 and uncertainty_of(1.0) == 0.0
    assert uncertainty_of(0.25) == pytest.approx(0.5) == uncertainty_of(0.75)
    assert uncertainty_of(float("nan")) == 1.0
    assert rarity(0) == 1.0
    assert rarity(10) == pytest.approx(1 / (1 + math.log1p(10)))
    assert rarity(-3) == 1.0
    weights = cluster_weights(["algo", "sql", "bash"], {"algo": 1.0, "sql": 0.5}, {"algo": 0, "sql": 10},
                              saturated=["bash"])
    assert weights["algo"] == 1.0
    assert weights["sql"] == pytest.approx(0.5 / (1 + math.log1p(10)))
    assert weights["bash"] == 0.0


def test_cluster_uncertainty_is_the_mean_over_pairs_and_one_without_evidence() -> None:
    class Broken:
        def uncertainty(self, state: object, action: object) -> float:
            raise RuntimeError("boom")

    pairs = {"algo": [(1, 2), (3, 4)]}
    assert compute_cluster_uncertainty(FixedScorer(0.75), pairs, ["algo", "sql"]) == {"algo": 0.5, "sql": 1.0}
    assert compute_cluster_uncertainty(Broken(), pairs, ["algo"]) == {"algo": 1.0}


def test_weighted_picks_are_deterministic_and_proportional() -> None:
    weights = {"a": 3.0, "b": 1.0, "c": 0.0}
    draws = [pick_weighted(weights, random.Random(5)) for _ in range(3)]
    assert len(set(draws)) == 1
    counts = Counter(pick_weighted(weights, rng) for rng in [random.Random(0)] for _ in range(4000))
    assert counts["c"] == 0
    assert 2.5 < counts["a"] / counts["b"] < 3.6
    assert pick_weighted({"a": 0.0}, random.Random(0)) is None
    assert pick_weighted({}, random.Random(0)) is None


def test_learnability_peaks_at_half() -> None:
    w = learnability_weights({"half": (10, 20), "easy": (19, 20), "new": (0, 0)}, ["half", "easy", "new"])
    assert w["half"] > w["easy"]
    assert w["new"] == pytest.approx(0.25)


def test_saturation_raises_difficulty_then_saturates_the_cluster(tmp_path: Path) -> None:
    tracker = FrontierTracker(tmp_path / "f.json", saturation_min=4)
    assert tracker.difficulty_for("algo") == 1
    for seed in range(4):
        tracker.record("algo", "a1", seed, 1, True)
    assert tracker.difficulty_for("algo") == 2  # easy tasks are mastered: harder ones, not fewer
    assert tracker.list_saturated_clusters() == []
    for difficulty in (2, 3):
        for seed in range(4):
            tracker.record("algo", "a2", seed, difficulty, True)
    assert tracker.list_saturated_clusters() == ["algo"]
    tracker.record("sql", "s1", 1, 1, False)
    assert tracker.outcomes() == {"algo": (12, 12), "sql": (0, 1)}


def test_the_brittle_pool_retries_a_failed_task_until_it_passes_or_gives_up(tmp_path: Path) -> None:
    tracker = FrontierTracker()
    tracker.record("sql", "s1", 42, 2, False)
    rng = random.Random(0)
    picks = [tracker.pick_seed(rng, TEMPLATES) for _ in range(400)]
    brittle = [p for p in picks if p is not None and p["reason"] == "brittle"]
    assert 150 < len(brittle) < 250  # half the picks retry it, the rest explore
    assert brittle[0] == {"cluster": "sql", "template": "s1", "seed": 42, "difficulty": 2, "reason": "brittle"}
    assert all(set(p) == {"cluster", "template", "seed", "difficulty", "reason"} for p in picks if p)
    tracker.record("sql", "s1", 42, 2, True)  # passed at last: it leaves the pool
    assert tracker.brittle_pool() == []
    for _ in range(3):  # a task that keeps failing leaves the pool too, after MAX_TASK_FAILURES
        tracker.record("bash", "b1", 7, 1, False)
    assert tracker.brittle_pool() == []
    tracker.record("bash", "b2", 8, 1, False)
    assert tracker.brittle_pool() == [("bash", "b2", 8, 1)]


def test_the_tracker_persists_and_survives_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "frontier.json"
    tracker = FrontierTracker(path)
    tracker.record("bash", "b1", 7, 1, True)
    tracker.save()
    again = FrontierTracker(path)
    assert again.outcomes() == {"bash": (1, 1)}
    path.write_bytes(b"{not json")
    fresh = FrontierTracker(path)
    assert fresh.outcomes() == {}
    assert list(tmp_path.glob("frontier.json.corrupt-*"))
    path.write_bytes(orjson.dumps({"schema": "something.else"}))
    assert FrontierTracker(path).outcomes() == {}


def real_scorer() -> PRMScorer:
    weights = np.zeros(len(PRM_FEATURE_NAMES))
    weights[PRM_FEATURE_NAMES.index("tool_is_heavyweight")] = 2.0
    return PRMScorer(StepValueModel(weights=weights))


def test_the_gate_is_strict(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path / "t")
    assert engaged(real_scorer(), collector)
    assert not engaged(PRMScorer(), collector)  # untrained: no opinion to steer by
    assert not engaged(FixedScorer(0.5), collector)  # not a PRMScorer
    assert not engaged(real_scorer(), object())
    tracker = FrontierTracker()
    for scorer in (PRMScorer(), FixedScorer(0.5)):
        pick = choose(tracker, random.Random(1), TEMPLATES, scorer=scorer, collector=collector, uniform_prob=0.0)
        assert pick is not None and pick["reason"] == "uniform"
    pick = choose(tracker, random.Random(1), TEMPLATES, scorer=real_scorer(), collector=collector, uniform_prob=0.0)
    assert pick is not None and pick["reason"] == "frontier"
    pick = choose(tracker, random.Random(1), TEMPLATES, scorer=real_scorer(), collector=collector, frontier=False)
    assert pick is not None and pick["reason"] == "uniform"


def test_the_uniform_floor_falls_back_about_as_often_as_asked(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path / "t")
    tracker, rng, scorer = FrontierTracker(), random.Random(3), real_scorer()
    evidence = ({c: 0 for c in TEMPLATES}, {c: [] for c in TEMPLATES})
    reasons = Counter(
        choose(tracker, rng, TEMPLATES, scorer=scorer, collector=collector, evidence=evidence)["reason"]  # type: ignore[index]
        for _ in range(1000)
    )
    assert 150 < reasons["uniform"] < 250 and reasons["frontier"] > 700


def test_frontier_prefers_what_the_prm_is_unsure_about_and_the_store_lacks(tmp_path: Path) -> None:
    collector = TrajectoryCollector(tmp_path / "t")
    for i in range(30):  # many confident sql trajectories: python steps the PRM likes
        traj = Trajectory(session_id="s", user_request=f"q{i}", cluster="sql", outcome=Outcome.PASSED,
                          steps=[Step(i=0, description="run", tool_name="python", tool_args={"code": "1"})])
        collector.append(traj)
    counts, pairs = cluster_evidence(collector.iter_trajectories(), TEMPLATES)
    assert counts == {"algo": 0, "sql": 30, "bash": 0}
    assert len(pairs["sql"]) == 16 and isinstance(pairs["sql"][0][0], PlanState)
    assert isinstance(pairs["sql"][0][1], ActionCandidate)
    rng, tracker = random.Random(0), FrontierTracker()
    picks = Counter(
        choose(tracker, rng, TEMPLATES, scorer=real_scorer(), collector=collector, uniform_prob=0.0,
               evidence=(counts, pairs))["cluster"]  # type: ignore[index]
        for _ in range(600)
    )
    assert picks["sql"] < picks["algo"] / 4 and picks["sql"] < picks["bash"] / 4
