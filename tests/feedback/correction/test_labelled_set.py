"""The labelled exchanges (`data/user_corrections.jsonl`, see `data/README.md`) and the model trained on them.

The set is the evaluation, not the specification: nothing here pins what one example is labelled. It checks that
the set is well formed, that the packaged checkpoint was trained on exactly this set with the features the code
makes now (change either and `python -m scripts.train_correction` must be rerun), that the cross-validated figures
it recorded meet their floors, that it is cheap, and that an unusable checkpoint degrades to the explicit verdicts.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from scripts.train_correction import corpus_digest, read_examples, train
from structlog.testing import capture_logs

from ghost_agent.feedback.correction import model as correction_model
from ghost_agent.feedback.correction.detector import classify_user_correction
from ghost_agent.feedback.correction.features import CUES, FEATURES_VERSION, features

DATA = Path(__file__).parent / "data" / "user_corrections.jsonl"
FIELDS = {"id", "split", "batch", "shape", "is_correction", "prior_user", "prior_reply", "follow_up"}
EXAMPLES: list[dict[str, Any]] = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]


def packaged() -> dict[str, Any]:
    data = json.loads(correction_model.CHECKPOINT.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


# --- the set ----------------------------------------------------------------------------------------------------


def test_the_set_is_large_balanced_and_well_formed() -> None:
    assert len(EXAMPLES) >= 900
    assert all(set(ex) == FIELDS for ex in EXAMPLES)
    assert len({ex["id"] for ex in EXAMPLES}) == len(EXAMPLES)
    # the same short follow-up ("wrong", "nah") may answer different exchanges; the same exchange only once
    assert len({(ex["prior_user"], ex["follow_up"]) for ex in EXAMPLES}) == len(EXAMPLES)
    assert all(isinstance(ex["is_correction"], bool) for ex in EXAMPLES)
    assert all(ex["prior_user"].strip() and ex["prior_reply"].strip() and ex["follow_up"].strip() for ex in EXAMPLES)
    labels = Counter(ex["is_correction"] for ex in EXAMPLES)
    assert min(labels.values()) >= 0.4 * len(EXAMPLES)
    batches = Counter(ex["batch"] for ex in EXAMPLES)
    assert len(batches) >= 8 and min(batches.values()) >= 60  # leave-one-batch-out needs real batches


def test_the_set_covers_the_shapes_the_issue_names() -> None:
    shapes = {ex["shape"] for ex in EXAMPLES}
    assert {"explicit_no", "thats_wrong", "not_what_i_asked", "i_meant", "actually", "wrong_format", "try_again",
            "you_forgot", "should_be_not", "polite", "terse", "reject_no_rephrase", "caps_punct", "sarcastic",
            "counter_number", "error_message"} <= shapes
    assert {"thanks", "great_now", "new_question", "no_polite", "no_thats_all", "not_bad", "no_other_sense",
            "clarification", "actually_new", "answer_to_question", "follow_on_fact", "refinement"} <= shapes


# --- the packaged checkpoint ------------------------------------------------------------------------------------


def test_the_packaged_checkpoint_loads_and_matches_the_code() -> None:
    data = packaged()
    assert data["schema"] == correction_model.SCHEMA and data["features_version"] == FEATURES_VERSION
    model = correction_model.from_dict(data)
    assert 0.3 <= model.thresholds[0] <= 0.9
    assert all(name[:2] in ("w:", "b:", "k:", "x:", "p:") for name in model.weights)
    assert correction_model.default_model() is not None
    assert len(correction_model.CHECKPOINT.read_bytes()) < 400_000


def test_the_checkpoint_was_trained_on_the_set_in_the_repository() -> None:
    training = packaged()["training"]
    assert training["corpus_sha256"] == corpus_digest(read_examples([DATA])), \
        "the set changed: retrain with `python -m scripts.train_correction`"
    assert training["exchanges"] == len(EXAMPLES)


def test_its_leave_one_batch_out_figures_meet_the_floors() -> None:
    # Recorded by the training run: each batch predicted by a model that never saw it. The floors sit under the
    # measured figures (README); a retrain that falls below them is a regression to look at, not to ship.
    cv = packaged()["training"]["cv_leave_one_batch_out"]
    assert cv["precision"] >= 0.9 and cv["recall"] >= 0.75


def test_training_is_deterministic_and_reproduces_the_checkpoint() -> None:
    lines = []
    data = train(read_examples([DATA]), without=frozenset(packaged()["training"]["without"]), out=lines.append)
    assert data == correction_model.CHECKPOINT.read_bytes()
    assert any(line.startswith("chosen: l2") for line in lines)


@pytest.mark.parametrize("content", [
    None,  # missing
    "not json",
    json.dumps({"schema": "ghost.other.v1"}),
    json.dumps({"schema": correction_model.SCHEMA, "features_version": FEATURES_VERSION + 1,
                "heads": {"correction": {"bias": 0, "threshold": 0.5}}, "weights": {"w:no": [1]}}),
    json.dumps({"schema": correction_model.SCHEMA, "features_version": FEATURES_VERSION,
                "heads": {"correction": {"bias": 0, "threshold": 0.5}}, "weights": {"w:no": [1, 2]}}),
    b"\xff\xfe\x00",
])
def test_an_unusable_checkpoint_leaves_the_explicit_verdicts_with_a_warning(
    use_checkpoint: Callable[[ModuleType, str | bytes | None], Path], content: str | bytes | None
) -> None:
    use_checkpoint(correction_model, content)
    with capture_logs() as logs:
        wrong = classify_user_correction("What is 9 * 7?", "That's wrong, it's 63", "9 * 7 = 56")
        thanks = classify_user_correction("What is 9 * 7?", "thanks!", "9 * 7 = 63")
        bare = classify_user_correction("capital of australia?", "Canberra", "Sydney")
    assert wrong.is_correction and wrong.signals == ("explicit_verdict",)
    assert not thanks.is_correction and not bare.is_correction  # only the rule layer is left
    warnings = [e for e in logs if e["event"] == "correction_model_unusable"]
    assert len(warnings) == 1 and warnings[0]["fallback"] == "explicit-verdict rules"


# --- cost ---------------------------------------------------------------------------------------------------------


def test_a_call_costs_well_under_a_millisecond() -> None:
    classify_user_correction("warm", "up", "the model")
    sample = EXAMPLES[::4]
    times = []
    for ex in sample:
        start = time.perf_counter()
        classify_user_correction(ex["prior_user"], ex["follow_up"], ex["prior_reply"])
        times.append(time.perf_counter() - start)
    # ~0.2-0.4 ms on an idle core (the bench prints it); loose for a loaded CI machine
    assert statistics.median(times) < 0.003


@pytest.mark.parametrize(
    "message",
    ["hmm, " * 2000 + "no", "no " * 3000, "a" * 50_000, "?" * 5000, "you " + "x " * 3000 + "instead", "1." * 5000,
     "that's " * 3000, "def f(x):\n    return x  # not the same error\n" * 500, "是" * 20_000],
)
def test_pathological_messages_stay_cheap(message: str) -> None:
    start = time.perf_counter()
    classify_user_correction("prior question " * 500, message, "reply word " * 5000 + "?")
    assert time.perf_counter() - start < 0.25


def test_no_cue_pattern_has_nested_unbounded_repetition() -> None:
    nested = re.compile(r"\([^()]*[+*]\)[+*]")
    assert [name for name, pattern in CUES.items() if nested.search(pattern)] == []


def test_features_are_sorted_unique_and_total() -> None:
    found = features("What is 9 * 7?", "9 * 7 = 56", "No, it's 63. Silly me for trusting you!")
    assert found == sorted(set(found))
    assert {"k:lead_no", "k:irony", "x:number_new", "w:<n>"} <= set(found)
    assert features("", "", "") == sorted(set(features("", "", "")))
