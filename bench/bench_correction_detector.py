"""User-correction detector: precision / recall of the legacy rule and the cue scorer on the labelled set.

    python bench/bench_correction_detector.py [--data tests/feedback/correction/data/user_corrections.jsonl] [--errors]
                                              [--rounds 20]

The set (`tests/feedback/correction/data/README.md`) holds (prior user message, assistant reply, follow-up) →
is_correction examples in a `dev` split (what the detector was tuned on) and a `heldout` split (not tuned on), each
from writing batches `a`…`e`. Both detectors run on every example; per split and per held-out batch the table shows
precision, recall, F1 and the confusion counts (tp fp fn tn), legacy and new side by side. `--errors` lists the new
detector's mistakes with the cues it saw. The timing line gives µs per call for both, next to the cost of one
trivial regex search on the same machine (a load-independent yardstick: on an idle core that search takes ~0.2-0.3
µs).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ghost_agent.feedback.correction.detector import (
    CorrectionVerdict,
    classify_user_correction,
    classify_user_correction_legacy,
)

DEFAULT_DATA = (
    Path(__file__).resolve().parents[1] / "tests" / "feedback" / "correction" / "data" / "user_corrections.jsonl"
)

Example = dict[str, Any]
Detector = Callable[[Example], CorrectionVerdict]

DETECTORS: dict[str, Detector] = {
    "legacy": lambda ex: classify_user_correction_legacy(ex["prior_user"], ex["follow_up"]),
    "new": lambda ex: classify_user_correction(ex["prior_user"], ex["follow_up"], ex["prior_reply"]),
}


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def cells(self) -> str:
        counts = f"{self.tp:3d} {self.fp:3d} {self.fn:3d} {self.tn:3d}"
        return f"{self.precision:5.3f} {self.recall:5.3f} {self.f1:5.3f}  {counts}"


def load(path: Path) -> list[Example]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def groups(examples: list[Example]) -> Iterable[tuple[str, list[Example]]]:
    """The rows of the table: each split, each held-out batch, then everything."""
    for split in ("dev", "heldout"):
        rows = [ex for ex in examples if ex["split"] == split]
        yield f"{split} (n={len(rows)})", rows
    for batch in sorted({ex["batch"] for ex in examples if ex["split"] == "heldout"}):
        rows = [ex for ex in examples if ex["split"] == "heldout" and ex["batch"] == batch]
        yield f"  heldout batch {batch} (n={len(rows)})", rows
    yield f"all (n={len(examples)})", examples


def confusion(detector: Detector, rows: list[Example]) -> Confusion:
    c = Confusion()
    for ex in rows:
        c.add(detector(ex).is_correction, bool(ex["is_correction"]))
    return c


def per_call_us(detector: Detector, examples: list[Example], rounds: int) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            for ex in examples:
                detector(ex)
        best = min(best, (time.perf_counter() - start) / (rounds * len(examples)))
    return best * 1e6


def yardstick_us() -> float:
    pattern = re.compile(r"\bi (?:said|told)")
    text = "No, that is wrong, the capital of australia is canberra"
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(20_000):
            pattern.search(text)
        best = min(best, (time.perf_counter() - start) / 20_000)
    return best * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--errors", action="store_true", help="list the new detector's mistakes")
    parser.add_argument("--rounds", type=int, default=20, help="timing passes over the set")
    args = parser.parse_args(argv)

    examples = load(args.data)
    positives = sum(bool(ex["is_correction"]) for ex in examples)
    print(f"{args.data} - {len(examples)} examples, {positives} corrections, {len(examples) - positives} not")
    header = "P     R     F1     tp  fp  fn  tn"
    print(f"\n{'':28s} | {'legacy':33s} | {'new':33s}")
    print(f"{'':28s} | {header:33s} | {header:33s}")
    for label, rows in groups(examples):
        legacy, new = (confusion(DETECTORS[name], rows) for name in ("legacy", "new"))
        print(f"{label:28s} | {legacy.cells():33s} | {new.cells():33s}")

    if args.errors:
        print("\nnew detector mistakes:")
        for ex in examples:
            verdict = DETECTORS["new"](ex)
            if verdict.is_correction != bool(ex["is_correction"]):
                kind = "FP" if verdict.is_correction else "FN"
                where = f"{ex['id']:6s} {ex['split']:7s} {ex['shape']:20s}"
                print(f"  {kind} {where} {ex['follow_up']!r}  [{verdict.reason}]")

    legacy_us = per_call_us(DETECTORS["legacy"], examples, args.rounds)
    new_us = per_call_us(DETECTORS["new"], examples, args.rounds)
    print(
        f"\ntiming: legacy {legacy_us:.1f} us/call, new {new_us:.1f} us/call "
        f"(one trivial regex search here: {yardstick_us():.2f} us)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
