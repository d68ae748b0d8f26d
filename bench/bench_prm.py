"""PRM and router speed, and the PRM's learning check on synthetic trajectories.

    python bench/bench_prm.py [--seed 7] [--calls 20000] [--train 3000] [--test 1000]

Targets (issue 4): one `score(state, action)` including feature extraction p50 <= 20 us; `score_batch` of
5,000 candidates <= 20 ms; fit on 10,000 samples <= 1 s; router `dispatch` p50 <= 50 us; held-out AUC of the
trained PRM >= 0.85 (vs 0.5 untrained) on trajectories whose step value depends on known features
(bench/synth_prm.py, seeded): the PRM trains on noisy terminal outcomes only and is scored on whether it ranks
the generator's truly good steps above its bad ones; the AUC against the noisy Monte Carlo labels is printed
next to it with what the hidden quality itself scores on them. Timings are medians over repeated runs in one
process; the machine is shared, so compare figures from the same run.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_prm import SynthConfig, make_corpus  # noqa: E402

from ghost_agent.learned.linear import roc_auc  # noqa: E402
from ghost_agent.prm.features import ActionCandidate, PlanState, extract_step_features  # noqa: E402
from ghost_agent.prm.labels import iter_step_samples  # noqa: E402
from ghost_agent.prm.model import StepValueModel  # noqa: E402
from ghost_agent.prm.scorer import PRMScorer  # noqa: E402
from ghost_agent.prm.trainer import PRMTrainer  # noqa: E402
from ghost_agent.router.dispatch import Router  # noqa: E402
from ghost_agent.router.features import ROUTER_FEATURE_NAMES  # noqa: E402
from ghost_agent.router.model import RouterModel  # noqa: E402
from ghost_agent.trajectories.record import Trajectory  # noqa: E402

REQUESTS = (
    "Write a python script that reads data/sales.csv and prints the total per region?",
    "hi there",
    "List the files in the workspace, then open README.md and summarize it.",
    "What is the capital of France?",
    "Fix the failing test in tests/test_parser.py; the traceback says KeyError: 'id'",
)
ACTIONS = (
    ActionCandidate("run the script", "python", {"code": "import pandas as pd\nprint(pd.read_csv('data/sales.csv'))"}),
    ActionCandidate("list files", "file_system", {"action": "list", "path": "."}),
    ActionCandidate("search memory", "memory_search", {"query": "sales report format"}),
    ActionCandidate("answer directly", None, {}),
    ActionCandidate("look it up", "web_search", {"query": "capital of France", "url": "https://example.org"}),
)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def per_call_us(fn: Callable[[int], object], calls: int) -> tuple[float, float]:
    """p50 / p99 in microseconds of `fn(i)`, timed one call at a time."""
    for i in range(min(2000, calls)):
        fn(i)
    samples = []
    clock = time.perf_counter_ns
    for i in range(calls):
        t0 = clock()
        fn(i)
        samples.append((clock() - t0) / 1000.0)
    return percentile(samples, 0.5), percentile(samples, 0.99)


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def held_out_quality(corpus: list[Trajectory], trajectory_id: str, index: int) -> float:
    by_id = _INDEX.setdefault(id(corpus), {t.id: t for t in corpus})
    return float(by_id[trajectory_id].steps[index].extra["synth_quality"])


_INDEX: dict[int, dict[str, Trajectory]] = {}


def learning_check(scorer: PRMScorer, args: argparse.Namespace, cfg: SynthConfig, label: str) -> None:
    held_out = make_corpus(args.test, args.seed + 1000, cfg)
    test = list(iter_step_samples(held_out))
    quality = [held_out_quality(held_out, s.trajectory_id, s.step_index) for s in test]
    good = [q >= 0.5 for q in quality]
    mc_labels = [s.binary for s in test]
    trained = scorer.score_pairs((s.state, s.action) for s in test)
    untrained = PRMScorer().score_pairs((s.state, s.action) for s in test)
    print(f"learning check, {label}")
    print(f"  generator seed {args.seed}: {args.train} train / {args.test} held-out trajectories (seed "
          f"{args.seed + 1000}); {len(test)} held-out steps, {sum(good)} truly good")
    print(f"  AUC vs hidden step quality, trained: {roc_auc(trained, good):.3f}            (target >= 0.85)")
    print(f"  AUC vs hidden step quality, neutral: {roc_auc(untrained, good):.3f}")
    print(f"  AUC vs noisy MC labels, trained    : {roc_auc(trained, mc_labels):.3f}   "
          f"(the hidden quality itself scores {roc_auc(quality, mc_labels):.3f} on them)")


def trained_prm(seed: int, n: int, cfg: SynthConfig | None = None) -> tuple[PRMScorer, float]:
    trainer = PRMTrainer(make_corpus(n, seed, cfg or SynthConfig()))
    report = trainer.run()
    if not report.fit_succeeded or trainer.model is None:
        raise SystemExit(f"PRM did not fit: {report.bail_reason or report.error}")
    return PRMScorer(trainer.model), report.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--train", type=int, default=3000, help="synthetic trajectories to train on")
    parser.add_argument("--test", type=int, default=1000, help="held-out synthetic trajectories")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # figures only

    scorer, train_s = trained_prm(args.seed, args.train)
    states = [PlanState(user_request=r, steps_so_far=k % 4, failures_so_far=k % 2, tools_used={"bash"},
                        tools_failed={"bash"} if k % 2 else set()) for k, r in enumerate(REQUESTS)]
    print("# PRM / router benchmark (one process; medians; noisy shared machine)")

    p50, p99 = per_call_us(lambda i: scorer.score(states[i % 5], ACTIONS[(i // 5) % 5]), args.calls)
    print(f"score(state, action) incl. features : p50 {p50:6.2f} us  p99 {p99:6.2f} us   (target p50 <= 20 us)")
    p50f, _ = per_call_us(lambda i: extract_step_features(states[i % 5], ACTIONS[(i // 5) % 5]), args.calls)
    print(f"  of which feature extraction        : p50 {p50f:6.2f} us")

    rng = random.Random(args.seed)
    batch = [
        ActionCandidate(f"candidate {k}", rng.choice(["python", "bash", "file_system", "web_search", None]),
                        {"code": f"print({k})", "path": f"data/f{k}.csv"} if k % 3 else {"query": f"q {k}"})
        for k in range(5000)
    ]
    ms = median_ms(lambda: scorer.score_batch(states[0], batch), args.rounds)
    print(f"score_batch(5,000 candidates)        : {ms:6.2f} ms              (target <= 20 ms)")

    xrng = np.random.default_rng(args.seed)
    x = xrng.normal(size=(10_000, 25))
    y = 1 / (1 + np.exp(-(x[:, 0] - x[:, 7] + 0.5 * x[:, 20])))
    fit_ms = median_ms(lambda: StepValueModel().fit(x, y), max(3, args.rounds // 3))
    print(f"fit, 10,000 samples x 25 features     : {fit_ms:6.1f} ms              (target <= 1000 ms)")
    samples_10k = make_corpus(3400, args.seed + 1)
    n_samples = sum(1 for _ in iter_step_samples(samples_10k))
    t0 = time.perf_counter()
    report = PRMTrainer(samples_10k).run()
    print(f"trainer end to end, {n_samples:,} samples    : {(time.perf_counter() - t0) * 1000:6.1f} ms "
          f"(labels + features + fit; fit alone {report.fit.get('seconds', 0) * 1000:.1f} ms)")

    router_model = RouterModel(weights=np.linspace(-1, 1, len(ROUTER_FEATURE_NAMES)), bias=0.1)
    router = Router(router_model)
    bodies = [{"model": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": r}]}
              for r in REQUESTS]
    p50r, p99r = per_call_us(lambda i: router.dispatch(bodies[i % 5]), args.calls)
    print(f"router dispatch(body), repeated text : p50 {p50r:6.2f} us  p99 {p99r:6.2f} us   (features cached)")
    fresh = [{"model": "m", "messages": [{"role": "user", "content": f"{REQUESTS[i % 5]} (variant {i})"}]}
             for i in range(args.calls + 2000)]
    p50n, p99n = per_call_us(lambda i: router.dispatch(fresh[i]), args.calls)
    print(f"router dispatch(body), every text new: p50 {p50n:6.2f} us  p99 {p99n:6.2f} us   (target p50 <= 50 us)")

    learning_check(scorer, args, SynthConfig(), "task-specific tools (request x tool interaction)")
    linear_scorer, _ = trained_prm(args.seed, args.train, SynthConfig(task_specific_tools=False))
    learning_check(linear_scorer, args, SynthConfig(task_specific_tools=False), "same tools good for every task")
    print(f"training wall time (3,000 trajectories): {train_s * 1000:.1f} ms")


if __name__ == "__main__":
    main()
