"""User-correction detector: precision / recall of the legacy rule and the correction model, side by side.

    python bench/bench_correction_detector.py [--data FILE.jsonl] [--checkpoint NAME=PATH ...] [--errors]
                                              [--rounds 20]

`--data` holds (prior user message, assistant reply, follow-up) -> is_correction examples (the labelled set
`tests/feedback/correction/data/user_corrections.jsonl` by default, or a blind batch). The packaged model was
trained on the whole labelled set, so its figures there are in-sample: the honest ones are the training script's
leave-one-batch-out table (`python -m scripts.train_correction`) and a blind batch passed with `--data`. Each
`--checkpoint NAME=PATH` adds a column for another checkpoint of the same schema (a variant trained with
`--without`, say), run through the same detector on the same examples. Rows: each batch, then everything.
`--errors` lists the packaged model's mistakes with its reason. The timing line gives us per call for each
detector, next to the cost of one trivial regex search on the same machine (a load-independent yardstick: on an
idle core that search takes ~0.2-0.3 us).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from scripts.sparse_fit import Confusion  # noqa: E402

from ghost_agent.feedback.correction import model as correction_model  # noqa: E402
from ghost_agent.feedback.correction.detector import (  # noqa: E402
    CorrectionVerdict,
    classify_user_correction,
    classify_user_correction_legacy,
)

DEFAULT_DATA = ROOT / "tests" / "feedback" / "correction" / "data" / "user_corrections.jsonl"

Example = dict[str, Any]
Detector = Callable[[Example], CorrectionVerdict]

DETECTORS: dict[str, Detector] = {
    "legacy": lambda ex: classify_user_correction_legacy(ex["prior_user"], ex["follow_up"]),
    "model": lambda ex: classify_user_correction(ex["prior_user"], ex["follow_up"], ex["prior_reply"]),
}


def cells(c: Confusion) -> str:
    counts = f"{c.tp:3d} {c.fp:3d} {c.fn:3d} {c.tn:3d}"
    precision = f"{c.precision:5.3f}" if c.tp + c.fp else "    -"  # it flagged nothing
    return f"{precision} {c.recall:5.3f} {c.f1:5.3f}  {counts}"


def load(path: Path) -> list[Example]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def groups(examples: list[Example]) -> Iterable[tuple[str, list[Example]]]:
    """The rows of the table: each batch, then everything."""
    for batch in sorted({str(ex.get("batch", "?")) for ex in examples}):
        rows = [ex for ex in examples if str(ex.get("batch", "?")) == batch]
        yield f"batch {batch} (n={len(rows)})", rows
    yield f"all (n={len(examples)})", examples


def with_checkpoint(path: Path) -> Detector:
    """The detector reading another checkpoint instead of the packaged one."""
    model = correction_model.from_dict(json.loads(path.read_text(encoding="utf-8")))
    return lambda ex: classify_user_correction(ex["prior_user"], ex["follow_up"], ex["prior_reply"], model=model)


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
    parser.add_argument("--checkpoint", action="append", default=[], metavar="NAME=PATH",
                        help="another checkpoint to compare (repeatable)")
    parser.add_argument("--errors", action="store_true", help="list the packaged model's mistakes")
    parser.add_argument("--rounds", type=int, default=20, help="timing passes over the set")
    args = parser.parse_args(argv)

    examples = load(args.data)
    positives = sum(bool(ex["is_correction"]) for ex in examples)
    print(f"{args.data} - {len(examples)} examples, {positives} corrections, {len(examples) - positives} not")
    detectors = dict(DETECTORS)
    for spec in args.checkpoint:
        name, _, path = spec.partition("=")
        detectors[name] = with_checkpoint(Path(path))
    header = "P     R     F1     tp  fp  fn  tn"
    print("\n" + f"{'':22s} | " + " | ".join(f"{name:33s}" for name in detectors))
    print(f"{'':22s} | " + " | ".join(f"{header:33s}" for _ in detectors))
    for label, rows in groups(examples):
        row = [cells(confusion(detector, rows)) for detector in detectors.values()]
        print(f"{label:22s} | " + " | ".join(f"{c:33s}" for c in row))

    if args.errors:
        print("\nnew detector mistakes:")
        for ex in examples:
            verdict = DETECTORS["model"](ex)
            if verdict.is_correction != bool(ex["is_correction"]):
                kind = "FP" if verdict.is_correction else "FN"
                where = f"{ex.get('id', '?'):6s} {ex.get('batch', '?'):2s} {ex.get('shape', '?'):20s}"
                print(f"  {kind} {where} {ex['follow_up']!r}  [{verdict.reason}]")

    timings = ", ".join(f"{name} {per_call_us(d, examples, args.rounds):.1f}" for name, d in DETECTORS.items())
    print(f"\ntiming (us/call): {timings} (one trivial regex search here: {yardstick_us():.2f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
