"""Train the user-correction model: `python -m scripts.train_correction [--data PATH ...] [--out PATH] [--errors]`.

One command, the same bytes every time (no randomness, no clock in the output). It

1. reads the labelled exchanges (`tests/feedback/correction/data/user_corrections.jsonl`: prior request, reply,
   follow-up, `is_correction`, the writing `batch`);
2. turns each into its binary features (`feedback.correction.features.features`, the function prediction uses);
3. picks the L2 strength by leave-one-batch-out cross-validation (log loss): every batch was written in its own
   round, often to find what the previous ones missed, so a batch held out whole is the honest stand-in for text
   nobody has written yet;
4. picks the decision threshold on those out-of-fold probabilities for precision: the lowest threshold whose
   precision reaches `PRECISION_FLOOR` (a false alarm fails a good turn and retracts its lessons, so it costs
   more than a miss), or the most precise one when none does;
5. prints precision and recall per held-out batch beside the legacy two-signal rule, the reliability table
   (predicted against observed, in bins, with counts) and the cost per call;
6. fits on everything and writes the checkpoint (`feedback/correction/data/correction_model.json`).

`--without k,x,p` drops feature families (here: cues, exchange facts and pairs, leaving the words) to measure
what they add.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.feedback.correction import model as correction_model
from ghost_agent.feedback.correction.detector import classify_user_correction_legacy
from ghost_agent.feedback.correction.features import FEATURES_VERSION, features
from scripts.sparse_fit import MIN_COUNT, Confusion, fit_head, log_loss, matrix, sigmoid, vocabulary

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "feedback" / "correction" / "data" / "user_corrections.jsonl"
CHECKPOINT = ROOT / "src" / "ghost_agent" / "feedback" / "correction" / "data" / "correction_model.json"
L2_GRID = (3e-4, 1e-3, 3e-3, 1e-2)
THRESHOLDS = tuple(round(0.2 + 0.025 * i, 3) for i in range(29))  # 0.200 .. 0.900
PRECISION_FLOOR = 0.92
WEIGHT_DECIMALS = 4
CALIBRATION_BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


@dataclass(frozen=True)
class Example:
    """One labelled exchange."""

    prior_user: str
    prior_reply: str
    follow_up: str
    label: bool
    batch: str
    id: str = ""


def read_examples(paths: Sequence[Path]) -> list[Example]:
    """The labelled exchanges of these JSONL files; ValueError naming a bad line."""
    out = []
    for path in paths:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            d = json.loads(line)
            if not isinstance(d, dict) or not isinstance(d.get("is_correction"), bool) or not all(
                isinstance(d.get(k), str) for k in ("prior_user", "prior_reply", "follow_up", "batch")
            ):
                raise ValueError(f"{path}:{i}: needs prior_user, prior_reply, follow_up, batch and is_correction")
            out.append(Example(d["prior_user"], d["prior_reply"], d["follow_up"], d["is_correction"], d["batch"],
                               str(d.get("id", ""))))
    return out


def corpus_digest(examples: Sequence[Example]) -> str:
    """The sha256 of the exchanges and labels a checkpoint was trained on (recorded in it, checked by a test)."""
    text = "\n".join(f"{e.label}\t{e.batch}\t{e.prior_user}\t{e.prior_reply}\t{e.follow_up}" for e in examples)
    return hashlib.sha256(text.encode()).hexdigest()


def featurise(examples: Sequence[Example], without: frozenset[str] = frozenset()) -> list[list[str]]:
    """Each example's features, without the dropped families (`c`, `p`, ...)."""
    return [[f for f in features(e.prior_user, e.prior_reply, e.follow_up) if f.split(":", 1)[0] not in without]
            for e in examples]


def fit(feature_sets: Sequence[Sequence[str]], y: np.ndarray, l2: float) -> tuple[list[str], np.ndarray, float]:
    vocab = vocabulary(feature_sets, MIN_COUNT)
    w, b = fit_head(matrix(feature_sets, vocab), y, np.ones(len(y)), l2)
    return vocab, w, b


def predict(model: tuple[list[str], np.ndarray, float], feature_sets: Sequence[Sequence[str]]) -> np.ndarray:
    vocab, w, b = model
    return sigmoid(matrix(feature_sets, vocab).dot(w) + b)


def leave_one_batch_out(examples: Sequence[Example], feature_sets: Sequence[Sequence[str]], l2: float) -> np.ndarray:
    """Out-of-fold P(correction) for every example, each batch predicted by a model fitted on the others."""
    y = np.asarray([e.label for e in examples], dtype=np.float64)
    p = np.zeros(len(examples))
    for batch in sorted({e.batch for e in examples}):
        train = [i for i, e in enumerate(examples) if e.batch != batch]
        test = [i for i, e in enumerate(examples) if e.batch == batch]
        model = fit([feature_sets[i] for i in train], y[train], l2)
        p[test] = predict(model, [feature_sets[i] for i in test])
    return p


def precision_recall(predicted: Sequence[bool], actual: Sequence[bool]) -> tuple[float, float]:
    c = Confusion.of(predicted, actual)
    return c.precision, c.recall


def choose_threshold(p: np.ndarray, actual: Sequence[bool]) -> float:
    """The lowest threshold whose out-of-fold precision reaches PRECISION_FLOOR, else the most precise one."""
    scored = [(t, *precision_recall(list(p >= t), actual)) for t in THRESHOLDS]
    good = [t for t, prec, _ in scored if prec >= PRECISION_FLOOR]
    if good:
        return min(good)
    return max(scored, key=lambda s: (s[1], -s[0]))[0]


def reliability(p: np.ndarray, actual: Sequence[bool]) -> list[tuple[str, int, float, float]]:
    """(bin, count, mean predicted, observed rate) for the CALIBRATION_BINS."""
    y = np.asarray(actual, dtype=np.float64)
    rows = []
    for lo, hi in zip(CALIBRATION_BINS, CALIBRATION_BINS[1:], strict=False):
        inside = (p >= lo) & ((p < hi) if hi < 1.0 else (p <= hi))
        if inside.any():
            rows.append((f"{lo:.1f}-{hi:.1f}", int(inside.sum()), float(p[inside].mean()), float(y[inside].mean())))
    return rows


def report(examples: Sequence[Example], p: np.ndarray, threshold: float, out: Callable[[str], None]) -> dict[str, Any]:
    """Per held-out batch and overall: the model at `threshold` beside the legacy rule. Returns the overall figures."""
    actual = [e.label for e in examples]
    ours = list(p >= threshold)
    legacy = [classify_user_correction_legacy(e.prior_user, e.follow_up).is_correction for e in examples]
    out(f"\n{'held-out batch':16s} {'n':>4s} | {'legacy P / R':>13s} | {'model P / R':>13s}  tp fp fn tn")
    for batch in sorted({e.batch for e in examples}) + ["all"]:
        idx = [i for i, e in enumerate(examples) if batch in ("all", e.batch)]
        a = [actual[i] for i in idx]
        lp, lr = precision_recall([legacy[i] for i in idx], a)
        mp, mr = precision_recall([ours[i] for i in idx], a)
        c = Confusion.of([ours[i] for i in idx], a)
        cells = " ".join(f"{n:2d}" for n in (c.tp, c.fp, c.fn, c.tn))
        flagged = any(legacy[i] for i in idx)
        out(f"{batch:16s} {len(idx):4d} | {f'{lp:5.3f}' if flagged else '    -'} / {lr:5.3f} | "
            f"{mp:5.3f} / {mr:5.3f}  {cells}")
    out("\nreliability (out-of-fold): bin, count, mean predicted, observed correction rate")
    for name, count, mean_p, rate in reliability(p, actual):
        out(f"  {name}  {count:4d}  {mean_p:.3f}  {rate:.3f}")
    precision, recall = precision_recall(ours, actual)
    return {"precision": round(precision, 4), "recall": round(recall, 4)}


def checkpoint(model: tuple[list[str], np.ndarray, float], threshold: float, training: dict[str, Any]) -> bytes:
    """The checkpoint bytes: weights rounded, features weighing ~0 dropped, keys sorted."""
    vocab, w, b = model
    weights = {name: [round(float(w[i]), WEIGHT_DECIMALS) + 0.0] for i, name in enumerate(vocab)
               if round(float(w[i]), WEIGHT_DECIMALS)}
    data = {"schema": correction_model.SCHEMA, "features_version": FEATURES_VERSION,
            "heads": {"correction": {"bias": round(b, WEIGHT_DECIMALS), "threshold": threshold}},
            "weights": weights, "training": training}
    correction_model.from_dict(data)  # what the daemon will read must validate
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def train(examples: Sequence[Example], *, without: frozenset[str] = frozenset(), out: Callable[[str], None] = print,
          errors: bool = False, metadata: dict[str, Any] | None = None) -> bytes:
    """Features, the L2 and threshold choice by leave-one-batch-out CV, the report, the final fit; the bytes."""
    feature_sets = featurise(examples, without)
    y = np.asarray([e.label for e in examples], dtype=np.float64)
    actual = [e.label for e in examples]
    batches = sorted({e.batch for e in examples})
    out(f"{len(examples)} exchanges ({int(y.sum())} corrections), batches {', '.join(batches)}; "
        f"leave one batch out" + (f"; without {','.join(sorted(without))}" if without else ""))
    best: tuple[float, float, np.ndarray] | None = None
    for l2 in L2_GRID:
        p = leave_one_batch_out(examples, feature_sets, l2)
        loss = log_loss(p, y, np.ones(len(y)))
        out(f"  l2 {l2:g}: CV log loss {loss:.4f}")
        if best is None or loss < best[0] - 1e-12:
            best = (loss, l2, p)
    assert best is not None
    _, l2, p = best
    threshold = choose_threshold(p, actual)
    out(f"chosen: l2 {l2:g}, threshold {threshold:.3f} (lowest with out-of-fold precision >= {PRECISION_FLOOR})")
    cv = report(examples, p, threshold, out)
    if errors:
        out("\nout-of-fold mistakes (label, P, batch/id, follow-up):")
        for e, pe in zip(examples, p, strict=True):
            if (pe >= threshold) != e.label:
                out(f"  {'corr' if e.label else 'not ':4s} {pe:.2f} {e.batch}/{e.id:6s} {e.follow_up[:100]!r}")
    model = fit(feature_sets, y, l2)
    started = time.perf_counter()
    for e in examples:
        features(e.prior_user, e.prior_reply, e.follow_up)
    per_call_ms = (time.perf_counter() - started) * 1000 / len(examples)
    out(f"\nfeatures cost {per_call_ms:.3f} ms per exchange on this machine (mean over the set)")
    digest = corpus_digest(examples)
    training = {"exchanges": len(examples), "batches": batches, "l2": l2, "min_count": MIN_COUNT,
                "precision_floor": PRECISION_FLOOR, "cv_leave_one_batch_out": cv, "corpus_sha256": digest,
                "without": sorted(without), "features": len(model[0]), **(metadata or {})}
    data = checkpoint(model, threshold, training)
    out(f"checkpoint: {len(json.loads(data)['weights'])} features, {len(data) / 1024:.0f} KB")
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.train_correction", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[DATA], help="labelled JSONL files")
    parser.add_argument("--out", type=Path, default=CHECKPOINT, help="where the checkpoint goes")
    parser.add_argument("--without", default="", help="feature families to drop, e.g. k,x,p")
    parser.add_argument("--errors", action="store_true", help="list the out-of-fold mistakes")
    args = parser.parse_args(argv)
    examples = read_examples(args.data)
    without = frozenset(x.strip() for x in args.without.split(",") if x.strip())
    data = train(examples, without=without, errors=args.errors)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
