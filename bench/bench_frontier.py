"""Frontier pickers side by side (issue 21): which one puts more practice where the pass rate is between 0.2
and 0.8 — the seed's (PRM uncertainty x rarity) or a learnability picker (p(1 - p) of the validator's own
pass rate, Beta(1, 1) per cluster)?

    python bench/bench_frontier.py [--runs 40] [--attempts 400] [--seed 1]

A simulation, not the model: eight clusters whose true pass rate at difficulty d is
sigmoid(3 * (skill - d)), skill drawn per run (some clusters trivial, some hopeless, some in between), and
rising a little with every attempt (practice helps). Both pickers run the real `FrontierTracker` (saturation
raising difficulty, the brittle pool as the fallback) and the real weighting functions, with the 0.2 uniform
floor; the seed's picker sees a PRM stand-in that is the pass rate it was last retrained on (every 25
attempts, as the retrain phase lags practice), so its uncertainty is 1 - 2|p_prm - 0.5|. Reported: the share
of attempts whose true pass rate (at the moment of the attempt) lay in [0.2, 0.8], the share spent on
clusters already saturated or hopeless (< 0.05), and the final mean skill. Same seeds for both pickers.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

from ghost_agent.selfplay.frontier import FrontierTracker
from ghost_agent.selfplay.frontier_selection import cluster_weights, learnability_weights
from ghost_agent.selfplay.task import CLUSTERS

TEMPLATES = {c: ["t1", "t2", "t3"] for c in CLUSTERS}
RETRAIN_EVERY = 25
LEARN_RATE = 0.01


def true_rate(skill: float, difficulty: int) -> float:
    return 1.0 / (1.0 + math.exp(-3.0 * (skill - difficulty)))


def simulate(picker: str, seed: int, attempts: int, uniform_prob: float = 0.2) -> dict[str, float]:
    rng = random.Random(seed)
    world = random.Random(seed * 7919)
    skill = {c: world.uniform(0.0, 4.0) for c in CLUSTERS}
    tracker = FrontierTracker(saturation_min=8)
    prm_rate = dict.fromkeys(CLUSTERS, 0.5)  # the PRM's opinion, refreshed every RETRAIN_EVERY attempts
    counts = dict.fromkeys(CLUSTERS, 0)
    in_band = wasted = 0
    for n in range(attempts):
        if n % RETRAIN_EVERY == 0 and n:
            for c, (passes, tried) in tracker.outcomes().items():
                prm_rate[c] = (passes + 1) / (tried + 2)
        saturated = tracker.list_saturated_clusters()
        if rng.random() < uniform_prob:
            pick = tracker.pick_seed(rng, TEMPLATES)
        else:
            if picker == "seed":
                uncertainty = {c: 1.0 - 2.0 * abs(prm_rate[c] - 0.5) for c in CLUSTERS}
                weights = cluster_weights(CLUSTERS, uncertainty, counts, saturated)
            else:
                weights = learnability_weights(tracker.outcomes(), CLUSTERS, saturated)
            pick = tracker.pick_frontier_seed(rng, weights, TEMPLATES) or tracker.pick_seed(rng, TEMPLATES)
        if pick is None:
            break
        cluster, difficulty = pick["cluster"], pick["difficulty"]
        p = true_rate(skill[cluster], difficulty)
        in_band += 0.2 <= p <= 0.8
        wasted += p < 0.05 or p > 0.95
        passed = rng.random() < p
        tracker.record(cluster, pick["template"], pick["seed"], difficulty, passed)
        counts[cluster] += 1
        skill[cluster] += LEARN_RATE * (1.0 if passed else 0.5)
    total = max(n + 1, 1)
    return {"band": in_band / total, "wasted": wasted / total, "skill": statistics.fmean(skill.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--attempts", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.runs} simulated homes x {args.attempts} attempts, uniform floor 0.2, same seeds for each picker")
    print(f"{'picker':<28} {'in [0.2, 0.8]':>14} {'wasted':>8} {'final skill':>12}")
    for picker, label in (("seed", "seed: uncertainty x rarity"), ("learnability", "learnability: p(1 - p)"),
                          ("uniform", "baseline: brittle pool only")):
        floor = 1.0 if picker == "uniform" else 0.2
        results = [simulate(picker, args.seed + r, args.attempts, floor) for r in range(args.runs)]
        band = [r["band"] for r in results]
        print(f"{label:<28} {statistics.fmean(band):>9.3f} ±{statistics.stdev(band):.3f} "
              f"{statistics.fmean(r['wasted'] for r in results):>8.3f} "
              f"{statistics.fmean(r['skill'] for r in results):>12.3f}")


if __name__ == "__main__":
    main()
