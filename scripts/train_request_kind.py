"""Train the request-kind model: `python -m scripts.train_request_kind [--out PATH] [--corpus PATH] [--no-generated]`.

One command, the same bytes every time (fixed seed, no clock in the output). It

1. builds the corpus: the hand-written requests (`src/ghost_agent/text/data/request_kinds.jsonl`), the self-play
   task prompts (`selfplay.templates.TEMPLATES` at seeds 0-2 and difficulties 1-3, labelled by their check: a
   number check -> `number`, a text answer -> `other`, tests/script/SQL/regex checks -> `code`; file-writing tasks
   are left out, their form is an action; a date or weekday computed from the question counts as `number`, since
   the turn computes it), and the eval suites' prompts whose verifier makes the form plain
   (humaneval -> code, wordproblems -> number, everyday/default/workspace_data by verifier; post_learning and the
   refusal probe are left out);
2. turns every request into its binary features (`text.request_kind.features`, the same function prediction
   uses);
3. picks the L2 strength and then the two decision thresholds by grouped cross-validation: folds hold whole groups
   (a hand-written batch, one self-play template with all its seeds, one eval suite cluster), so nothing of a
   group is on both sides;
4. prints the cross-validated figures per label, the regex rules (`classify_rules`) against the model, with the
   two costly errors counted apart: a code request treated as a computation, and a computation no longer computed;
5. fits both heads on everything and writes the checkpoint (`text/data/request_kind_model.json`).

Why two logistic heads and not a 3-way softmax: `RequestKind` is two booleans and the turn asks two questions
(test the code? compute the number?), each with its own threshold and its own cost of a mistake; one-vs-rest heads
answer them directly. The fitting (sparse L-BFGS, grouped folds) is `scripts/sparse_fit.py`, shared with the
correction detector.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ghost_agent.text import dates, kind_model
from ghost_agent.text.request_kind import FEATURES_VERSION, classify_rules, features
from scripts.sparse_fit import MIN_COUNT, fit_head, folds_of, log_loss, matrix, sigmoid, vocabulary

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src" / "ghost_agent" / "text" / "data" / "request_kinds.jsonl"
CHECKPOINT = ROOT / "src" / "ghost_agent" / "text" / "data" / "request_kind_model.json"
LABELS = ("code", "number", "other")
SEED = 20240611
FOLDS = 5
L2_GRID = (3e-5, 1e-4, 3e-4, 1e-3, 3e-3)
THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))  # 0.20 .. 0.80
COST_SLACK = 0.02  # threshold pairs within 2% of the least CV cost are tied (`choose_thresholds`)
COSTLY = 3.0  # a costly error (code -> computed, a computation not computed) weighs 3 mild ones
SELFPLAY_SEEDS = (0, 1, 2)
GROUP_CAP = {"selfplay": 4.0, "eval": 30.0}  # a generated group weighs at most this many requests in all
WEIGHT_DECIMALS = 4
CHECK_LABEL = {"number_answer": "number", "text_answer": "other", "python_tests": "code", "script_output": "code",
               "sql_rows": "code", "regex_matches": "code"}
DELIVERED_LABEL = {"function": "code", "tests": "code", "sql": "code", "shell": "code", "regex": "code",
                   "number": "number", "contains": "other", "list": "other", "terms": "other"}
VERIFIER_LABEL = {"numeric_match": "number", "answer_line": "number", "contains": "other", "exact_match": "other",
                  "mcq_letter": "other", "regex_match": "other", "code_tests": "code"}


@dataclass(frozen=True)
class Row:
    """One labelled request: its text, label, source (`hand/<batch>`, `selfplay/<cluster>/<template>`,
    `eval/<suite>/<cluster>`; the CV group) and sample weight."""

    text: str
    label: str
    source: str
    weight: float = 1.0

    @property
    def part(self) -> str:
        """hand, selfplay or eval."""
        return self.source.split("/", 1)[0]


# ----------------------------------------------------------------------------------------------- corpus


def read_jsonl(path: Path) -> list[Row]:
    """Rows of a labelled JSONL file (`text`, `label` in LABELS, `source`); ValueError naming a bad line."""
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        data = json.loads(line)
        if not isinstance(data, dict) or data.get("label") not in LABELS or not isinstance(data.get("text"), str):
            raise ValueError(f"{path}:{i}: needs text and a label in {LABELS}")
        rows.append(Row(data["text"], data["label"], str(data.get("source") or "unknown")))
    return rows


def selfplay_rows(seeds: Sequence[int] = SELFPLAY_SEEDS) -> list[Row]:
    """Self-play task prompts, labelled by the form their check grades."""
    from ghost_agent.selfplay.task import DIFFICULTIES, generate
    from ghost_agent.selfplay.templates import TEMPLATES

    rows = []
    for template in TEMPLATES:
        for seed in seeds:
            for difficulty in DIFFICULTIES:
                task = generate(template, seed, difficulty)
                label = calendar_computed(task.prompt, CHECK_LABEL.get(task.check.kind))
                if label is not None:
                    rows.append(Row(task.prompt, label, f"selfplay/{task.cluster}/{task.template}"))
    return _dedupe(rows)


def eval_rows() -> list[Row]:
    """Eval suite prompts whose verifier says the form (the humaneval suite needs the `eval` extra)."""
    from ghost_agent.eval.suites import load_suite

    rows = []
    for suite in ("humaneval", "wordproblems", "everyday", "default", "workspace_data"):
        for task in load_suite(suite):
            label = calendar_computed(task.prompt, eval_label(suite, task.verifier, task.expected))
            if label is not None:
                rows.append(Row(task.prompt, label, f"eval/{suite}/{task.cluster}"))
    return _dedupe(rows)


def calendar_computed(prompt: str, label: str | None) -> str | None:
    """`number` for a text answer that is a date or a weekday computed from the question (`text.dates.asks_for`
    with a date or an offset in it): the turn computes those with a program like a number. Else `label`."""
    if label == "other" and dates.asks_for(prompt) is not None and (dates.days_in(prompt) or re.search(
            r"\b\d+\s+(?:business\s+)?(?:days?|weeks?)\b", prompt)):
        return "number"
    return label


def eval_label(suite: str, verifier: str, expected: Any) -> str | None:
    """The form an eval task's verifier checks, or None when it does not make it plain."""
    if suite == "humaneval":
        return "code"
    if suite == "wordproblems":
        return "number"
    if verifier == "delivered":
        kinds = {DELIVERED_LABEL.get(str(e.get("kind"))) for e in expected or () if isinstance(e, dict)}
        return kinds.pop() if len(kinds) == 1 else None
    return VERIFIER_LABEL.get(verifier)


def build_corpus(corpus: Path = CORPUS, *, generated: bool = True) -> list[Row]:
    """The hand-written rows, then (unless `generated` is False) the self-play and eval rows, weighted so a
    generated group counts at most GROUP_CAP requests (many seeds of one template are one kind of request)."""
    rows = read_jsonl(corpus)
    if generated:
        rows += selfplay_rows() + eval_rows()
    sizes = Counter(r.source for r in rows)
    out = []
    for r in rows:
        cap = GROUP_CAP.get(r.part)
        out.append(Row(r.text, r.label, r.source, 1.0 if cap is None else min(1.0, cap / sizes[r.source])))
    return out


def _dedupe(rows: list[Row]) -> list[Row]:
    seen: set[str] = set()
    out = []
    for r in rows:
        if r.text not in seen:
            seen.add(r.text)
            out.append(r)
    return out


@dataclass
class Heads:
    """Both fitted heads over one vocabulary."""

    vocab: list[str]
    code: tuple[np.ndarray, float]
    number: tuple[np.ndarray, float]

    def predict(self, feature_sets: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        x = matrix(feature_sets, self.vocab)
        return (sigmoid(x.dot(self.code[0]) + self.code[1]), sigmoid(x.dot(self.number[0]) + self.number[1]))


def fit(feature_sets: Sequence[Sequence[str]], labels: Sequence[str], weights: Sequence[float], l2: float) -> Heads:
    """Both heads (code vs rest, number vs rest) on these requests."""
    vocab = vocabulary(feature_sets)
    x = matrix(feature_sets, vocab)
    w = np.asarray(weights, dtype=np.float64)
    code, number = (fit_head(x, np.asarray([lab == head for lab in labels], dtype=np.float64), w, l2)
                    for head in ("code", "number"))
    return Heads(vocab, code, number)


# ------------------------------------------------------------------------------------ cross-validation


def cross_validate(rows: Sequence[Row], feature_sets: Sequence[Sequence[str]], l2: float,
                   k: int = FOLDS) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold (P(code), P(number)) for every row."""
    fold = folds_of([r.source for r in rows], k, SEED)
    p_code, p_number = np.zeros(len(rows)), np.zeros(len(rows))
    for i in range(k):
        train = [j for j, f in enumerate(fold) if f != i]
        test = [j for j, f in enumerate(fold) if f == i]
        heads = fit([feature_sets[j] for j in train], [rows[j].label for j in train],
                    [rows[j].weight for j in train], l2)
        pc, pn = heads.predict([feature_sets[j] for j in test])
        p_code[test], p_number[test] = pc, pn
    return p_code, p_number


def decide(p_code: float, p_number: float, t_code: float, t_number: float) -> str:
    """What `classify` does with the two probabilities: code, quantitative or general."""
    if p_code >= t_code:
        return "code"
    return "quantitative" if p_number >= t_number else "general"


def error_cost(label: str, predicted: str) -> float:
    """How bad one decision is: 0 right; COSTLY for code -> quantitative and for a number request that is not
    computed; 1 for the rest (a code request or other request that just gets no or an unneeded check)."""
    right = {"code": "code", "number": "quantitative", "other": "general"}[label]
    if predicted == right:
        return 0.0
    if (label == "code" and predicted == "quantitative") or label == "number":
        return COSTLY
    return 1.0


def choose_thresholds(rows: Sequence[Row], p_code: np.ndarray, p_number: np.ndarray) -> tuple[float, float, float]:
    """The (code, number) thresholds with the least weighted error cost on out-of-fold predictions, and that
    cost. The cost surface is flat near its minimum (a few added rows moved the argmin from 0.35/0.25 to 0.20/0.20
    for 3% more general requests checked), so every pair within COST_SLACK of the least cost counts as tied, and
    the tie goes to the pair nearest (0.5, 0.5): the least sensitive to how the folds fell."""
    costs = {(tc, tn): sum(r.weight * error_cost(r.label, decide(pc, pn, tc, tn))
                           for r, pc, pn in zip(rows, p_code, p_number, strict=True))
             for tc in THRESHOLDS for tn in THRESHOLDS}
    least = min(costs.values())
    tied = [pair for pair, cost in costs.items() if cost <= least * (1 + COST_SLACK) + 1e-9]
    tc, tn = min(tied, key=lambda pair: (abs(pair[0] - 0.5) + abs(pair[1] - 0.5), pair))
    return tc, tn, costs[(tc, tn)]


# ------------------------------------------------------------------------------------------- reporting


@dataclass
class Table:
    """A confusion table: label (code/number/other) x decision (code/quantitative/general)."""

    cells: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, label: str, predicted: str) -> None:
        self.cells[(label, predicted)] += 1

    def count(self, label: str, predicted: str | None = None) -> int:
        if predicted is None:
            return sum(v for (lab, _), v in self.cells.items() if lab == label)
        return self.cells[(label, predicted)]

    def recall(self, label: str) -> float:
        total = self.count(label)
        return self.count(label, DECISION[label]) / total if total else 0.0

    def precision(self, label: str) -> float:
        called = sum(v for (_, p), v in self.cells.items() if p == DECISION[label])
        return self.count(label, DECISION[label]) / called if called else 0.0

    @property
    def code_computed(self) -> int:
        """Costly error 1: a code request treated as a computation."""
        return self.count("code", "quantitative")

    @property
    def not_computed(self) -> int:
        """Costly error 2: a computation no longer computed (decided code or general)."""
        return self.count("number") - self.count("number", "quantitative")


DECISION = {"code": "code", "number": "quantitative", "other": "general"}


def side_by_side(title: str, old: Table, new: Table, out: Callable[[str], None] = print) -> None:
    """Both confusion tables, per-label precision/recall and the two costly errors, old next to new."""
    n = sum(old.cells.values())
    out(f"\n{title}  ({n} requests)")
    out(f"  {'label':8s} | {'rules: code quant general':>26s} | {'model: code quant general':>26s}")
    for label in LABELS:
        o = " ".join(f"{old.count(label, p):5d}" for p in ("code", "quantitative", "general"))
        m = " ".join(f"{new.count(label, p):5d}" for p in ("code", "quantitative", "general"))
        out(f"  {label:8s} | {o:>26s} | {m:>26s}")
    for label in LABELS:
        if old.count(label) or new.count(label):
            out(f"  {label:8s} precision {old.precision(label):5.3f} -> {new.precision(label):5.3f}   "
                f"recall {old.recall(label):5.3f} -> {new.recall(label):5.3f}")
    out(f"  costly: code request -> computed {old.code_computed} -> {new.code_computed};   "
        f"computation -> not computed {old.not_computed} -> {new.not_computed}")


def report(rows: Sequence[Row], old: Sequence[str], new: Sequence[str], out: Callable[[str], None] = print) -> None:
    """Side-by-side tables over all rows, then per part (hand, selfplay, eval) and for the two eval suites the
    product must keep (wordproblems quantitative, humaneval code)."""
    subsets: list[tuple[str, Callable[[Row], bool]]] = [
        ("all (grouped CV, out-of-fold)", lambda r: True),
        ("hand-written", lambda r: r.part == "hand"),
        ("self-play prompts", lambda r: r.part == "selfplay"),
        ("eval suites", lambda r: r.part == "eval"),
        ("eval wordproblems (held out as one group)", lambda r: r.source.startswith("eval/wordproblems/")),
        ("eval humaneval (held out as one group)", lambda r: r.source.startswith("eval/humaneval/")),
    ]
    for title, keep in subsets:
        a, b = Table(), Table()
        for r, o, m in zip(rows, old, new, strict=True):
            if keep(r):
                a.add(r.label, o)
                b.add(r.label, m)
        if a.cells:
            side_by_side(title, a, b, out)


def rules_decision(text: str) -> str:
    kind = classify_rules(text)
    return "code" if kind.code else "quantitative" if kind.quantitative else "general"


# ------------------------------------------------------------------------------------------ checkpoint


def checkpoint(heads: Heads, t_code: float, t_number: float, training: dict[str, Any]) -> bytes:
    """The checkpoint bytes: weights rounded (features weighing ~0 in both heads dropped), keys sorted."""
    weights = {}
    for i, name in enumerate(heads.vocab):
        pair = [round(float(heads.code[0][i]), WEIGHT_DECIMALS), round(float(heads.number[0][i]), WEIGHT_DECIMALS)]
        if any(pair):
            weights[name] = [v + 0.0 for v in pair]  # + 0.0: no "-0.0" in the file
    data = {
        "schema": kind_model.SCHEMA,
        "features_version": FEATURES_VERSION,
        "heads": {"code": {"bias": round(heads.code[1], WEIGHT_DECIMALS), "threshold": t_code},
                  "number": {"bias": round(heads.number[1], WEIGHT_DECIMALS), "threshold": t_number}},
        "weights": weights,
        "training": training,
    }
    kind_model.from_dict(data)  # what the daemon will read must validate
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def train(rows: Sequence[Row], *, folds: int = FOLDS, out: Callable[[str], None] = print,
          l2_grid: Iterable[float] = L2_GRID, errors: bool = False, metadata: dict[str, Any] | None = None) -> bytes:
    """Everything after the corpus: features, the L2 and threshold choice by grouped CV, the report, the final
    fit on all rows; the checkpoint's bytes (`metadata` joins its `training` record)."""
    feature_sets = [features(r.text) for r in rows]
    y_code = np.asarray([r.label == "code" for r in rows], dtype=np.float64)
    y_number = np.asarray([r.label == "number" for r in rows], dtype=np.float64)
    w = np.asarray([r.weight for r in rows])
    labels = Counter(r.label for r in rows)
    out(f"{len(rows)} requests ({', '.join(f'{labels[lab]} {lab}' for lab in LABELS)}), "
        f"{len({r.source for r in rows})} groups, {folds} grouped folds")
    best: tuple[float, float, np.ndarray, np.ndarray] | None = None
    for l2 in l2_grid:
        pc, pn = cross_validate(rows, feature_sets, l2, folds)
        loss = log_loss(pc, y_code, w) + log_loss(pn, y_number, w)
        out(f"  l2 {l2:g}: CV log loss code+number {loss:.4f}")
        if best is None or loss < best[0] - 1e-12:
            best = (loss, l2, pc, pn)
    assert best is not None
    _, l2, p_code, p_number = best
    t_code, t_number, cost = choose_thresholds(rows, p_code, p_number)
    out(f"chosen: l2 {l2:g}, thresholds code {t_code:.2f} number {t_number:.2f} (weighted CV error cost {cost:.1f})")
    old = [rules_decision(r.text) for r in rows]
    new = [decide(pc, pn, t_code, t_number) for pc, pn in zip(p_code, p_number, strict=True)]
    report(rows, old, new, out)
    if errors:
        out("\nout-of-fold mistakes (label -> decision, P(code) P(number), source, text):")
        for r, d, pc, pn in zip(rows, new, p_code, p_number, strict=True):
            if d != DECISION[r.label]:
                out(f"  {r.label:6s} -> {d:12s} {pc:.2f} {pn:.2f}  {r.source:28s} {r.text[:90]!r}")
    heads = fit(feature_sets, [r.label for r in rows], [r.weight for r in rows], l2)
    corpus_digest = hashlib.sha256("\n".join(f"{r.label}\t{r.source}\t{r.text}" for r in rows).encode()).hexdigest()
    cv = {"code_recall": _recall(rows, new, "code"), "number_recall": _recall(rows, new, "number"),
          "other_recall": _recall(rows, new, "other")}
    training = {"requests": len(rows), "groups": len({r.source for r in rows}), "folds": folds, "l2": l2,
                "min_count": MIN_COUNT, "seed": SEED, "corpus_sha256": corpus_digest, "cv": cv,
                "features": len(heads.vocab), **(metadata or {})}
    data = checkpoint(heads, t_code, t_number, training)
    out(f"\ncheckpoint: {len(json.loads(data)['weights'])} features, {len(data) / 1024:.0f} KB")
    return data


def _recall(rows: Sequence[Row], decisions: Sequence[str], label: str) -> float:
    hits = [d == DECISION[label] for r, d in zip(rows, decisions, strict=True) if r.label == label]
    return round(sum(hits) / len(hits), 4) if hits else math.nan


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.train_request_kind", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the hand-written labelled JSONL")
    parser.add_argument("--out", type=Path, default=CHECKPOINT, help="where the checkpoint goes")
    parser.add_argument("--no-generated", action="store_true", help="the corpus file alone (no self-play/eval)")
    parser.add_argument("--folds", type=int, default=FOLDS)
    parser.add_argument("--errors", action="store_true", help="list the out-of-fold mistakes")
    args = parser.parse_args(argv)
    rows = build_corpus(args.corpus, generated=not args.no_generated)
    hand_digest = hashlib.sha256(args.corpus.read_bytes()).hexdigest()
    data = train(rows, folds=args.folds, errors=args.errors, metadata={"hand_corpus_sha256": hand_digest})
    args.out.write_bytes(data)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
