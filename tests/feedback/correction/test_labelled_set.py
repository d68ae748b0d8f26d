"""The labelled follow-up set (`data/user_corrections.jsonl`, see `data/README.md`): its shape, and precision /
recall floors for the cue scorer on each split. Both detectors are deterministic, so the floors are regression
tests, not benchmarks; `bench/bench_correction_detector.py` prints the full table.

The floors sit at (or just under) the measured figures. Held-out batch a meets the issue's 0.9 / 0.9 target.
Batches b–g were each run once when written (their first-run figures are in the README) and then developed on,
so they are dev: batch g (written blind, first run P 1.000 / R 0.517) was tuned on in the round that built the
pushback signals (`user_correction_pushback`) and is now nearly caught in full, which says nothing about unseen
text — the next blind batch does.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.feedback.correction.cues import CUES, normalize
from ghost_agent.feedback.correction.detector import classify_user_correction, classify_user_correction_legacy

DATA = Path(__file__).parent / "data" / "user_corrections.jsonl"
FIELDS = {"id", "split", "batch", "shape", "is_correction", "prior_user", "prior_reply", "follow_up"}


def _load() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


EXAMPLES = _load()


def precision_recall(rows: list[dict[str, Any]], legacy: bool = False) -> tuple[float, float, int]:
    """(precision, recall, false positives) of one detector over `rows`."""
    tp = fp = fn = 0
    for ex in rows:
        if legacy:
            predicted = classify_user_correction_legacy(ex["prior_user"], ex["follow_up"]).is_correction
        else:
            predicted = classify_user_correction(ex["prior_user"], ex["follow_up"], ex["prior_reply"]).is_correction
        actual = bool(ex["is_correction"])
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
    return (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0), fp


def rows(split: str, batch: str | None = None) -> list[dict[str, Any]]:
    return [ex for ex in EXAMPLES if ex["split"] == split and (batch is None or ex["batch"] == batch)]


# --- the set itself -----------------------------------------------------------------------------------------


def test_the_set_is_large_balanced_and_well_formed() -> None:
    assert len(EXAMPLES) >= 150
    assert all(set(ex) == FIELDS for ex in EXAMPLES)
    assert len({ex["id"] for ex in EXAMPLES}) == len(EXAMPLES)
    # the same short follow-up ("wrong", "nah") may answer different exchanges; the same exchange only once
    assert len({(ex["prior_user"], ex["follow_up"]) for ex in EXAMPLES}) == len(EXAMPLES)
    assert {ex["split"] for ex in EXAMPLES} == {"dev", "heldout"}
    assert all(isinstance(ex["is_correction"], bool) for ex in EXAMPLES)
    assert all(ex["prior_user"].strip() and ex["prior_reply"].strip() and ex["follow_up"].strip() for ex in EXAMPLES)
    labels = Counter((ex["split"], ex["is_correction"]) for ex in EXAMPLES)
    for split in ("dev", "heldout"):
        assert min(labels[split, True], labels[split, False]) >= 0.4 * (labels[split, True] + labels[split, False])
    assert len(rows("heldout")) >= 80  # batch a's held-out part; new batches join it blind
    # b–g were each tuned on after their first run
    assert {ex["batch"] for ex in rows("heldout")} == {"a", "h"}  # b–g were each tuned on after their first run


def test_the_set_covers_the_shapes_the_issue_names() -> None:
    shapes = {ex["shape"] for ex in EXAMPLES}
    assert {"explicit_no", "thats_wrong", "not_what_i_asked", "i_meant", "actually", "wrong_format", "try_again",
            "you_forgot", "should_be_not", "polite", "terse", "reject_no_rephrase", "caps_punct"} <= shapes
    assert {"thanks", "great_now", "new_question", "no_polite", "no_thats_all", "not_bad", "no_other_sense",
            "clarification", "actually_new", "answer_to_question"} <= shapes
    assert any(ex["follow_up"].startswith("No, wrong format — tell me what 15% of 2340") for ex in EXAMPLES)


# --- precision / recall floors ------------------------------------------------------------------------------


def test_held_out_batch_a_meets_the_target() -> None:
    precision, recall, false_alarms = precision_recall(rows("heldout", "a"))
    assert precision >= 0.9 and recall >= 0.9
    assert false_alarms == 0


def test_batch_e_is_now_dev_and_caught_without_false_alarms() -> None:
    # Measured P 1.000, R 1.000 (52 of 52; its two "… though" remarks no longer fire).
    assert all(ex["split"] == "dev" for ex in EXAMPLES if ex["batch"] == "e")
    precision, recall, false_alarms = precision_recall(rows("dev", "e"))
    assert recall >= 0.98 and false_alarms == 0


@pytest.mark.parametrize(("batch", "floor"), [("b", 0.96), ("c", 0.97), ("d", 0.92)])
def test_the_earlier_adversarial_batches_hold(batch: str, floor: float) -> None:
    # Measured R 0.969 (b), 0.971 (c), 0.925 (d); no false alarms in any.
    precision, recall, false_alarms = precision_recall(rows("dev", batch))
    assert recall >= floor and false_alarms == 0


def test_batch_f_is_now_dev_and_caught_without_false_alarms() -> None:
    # Batch f was written by someone who never saw the detector and run once, blind: P 0.979, R 0.767 (46 of 60,
    # 1 false alarm: "danke!"). Tuned on since: P 1.000, R 0.983 (59 of 60; the miss needs knowledge: "Dinners
    # with no meat or fish in them, please." after a list with chicken and salmon).
    assert all(ex["split"] == "dev" for ex in EXAMPLES if ex["batch"] == "f")
    precision, recall, false_alarms = precision_recall(rows("dev", "f"))
    assert recall >= 0.98 and false_alarms == 0


def test_batch_g_is_now_dev_and_caught_without_false_alarms() -> None:
    # Batch g was written by someone who never saw the detector, and run once after the round on f was frozen:
    # P 1.000, R 0.517 (31 of 60, no false alarm). 8 of its corrections (cg15–cg22) were format wishes the request
    # never stated ("as a table please"): relabelled refinements since (R 31/52 = 0.596 at that freeze). Tuned on
    # since: P 1.000, R 0.962 (50 of 52; the misses: "50, Alaska and Hawaii count too", "In hands, to the withers.
    # A hand is 4 inches.").
    assert all(ex["split"] == "dev" for ex in EXAMPLES if ex["batch"] == "g")
    relabelled = [ex for ex in EXAMPLES if ex["id"] in {f"cg{i}" for i in range(15, 23)}]
    assert len(relabelled) == 8 and all(not ex["is_correction"] and ex["shape"] == "refinement" for ex in relabelled)
    precision, recall, false_alarms = precision_recall(rows("dev", "g"))
    assert recall >= 0.96 and false_alarms == 0


def test_held_out_batch_h_written_blind_does_not_regress() -> None:
    # Batch h was written by someone who never saw the detector, and run once after the round on g was frozen:
    # P 0.932, R 0.683 (41 of 60, 3 false alarms). On the same batch the detector as this session found it:
    # P 0.943, R 0.550; after the round on f: P 0.930, R 0.667.
    precision, recall, false_alarms = precision_recall(rows("heldout", "h"))
    assert precision >= 0.93 and recall >= 0.68 and false_alarms <= 3


def test_all_held_out_and_dev() -> None:
    # Measured: held-out batch a P 1.000, R 1.000; dev (a–g, 709) P 1.000, R 0.977.
    precision, recall, false_alarms = precision_recall(rows("heldout", "a"))
    assert precision >= 0.99 and recall >= 0.97 and false_alarms == 0
    precision, recall, false_alarms = precision_recall(rows("dev"))
    assert recall >= 0.975 and false_alarms == 0


def test_the_legacy_rule_is_kept_and_misses_almost_everything() -> None:
    precision, recall, false_alarms = precision_recall(rows("heldout"), legacy=True)
    assert recall < 0.1 and false_alarms == 0


# --- cost -----------------------------------------------------------------------------------------------------


def test_needles_never_change_what_a_cue_matches() -> None:
    for ex in EXAMPLES:
        norm = normalize(ex["follow_up"])
        for cue in CUES:
            assert (cue.search(norm) is None) == (cue.pattern.search(norm) is None), (cue.name, ex["id"])


@pytest.mark.parametrize(
    "message",
    [
        "hmm, " * 2000 + "no",
        "no " * 3000,
        "a" * 50_000,
        "?" * 5000,
        "you " + "x " * 3000 + "instead",
        "1." * 5000,
        "that's " * 3000,
        "def f(x):\n    return x  # not the same error\n" * 500,
    ],
)
def test_pathological_messages_stay_cheap(message: str) -> None:
    # Only the head and tail of a long message are scanned and no pattern backtracks without bound: each of
    # these takes well under a millisecond on an idle core; the bound is loose for loaded CI machines.
    start = time.perf_counter()
    classify_user_correction("prior question " * 500, message, "reply " * 5000 + "?")
    assert time.perf_counter() - start < 0.25


def test_no_cue_pattern_has_nested_unbounded_repetition() -> None:
    # A cheap guard against the catastrophic-backtracking shape `(x+)*` / `(x*)+` creeping into a cue.
    nested = re.compile(r"\([^()]*[+*]\)[+*]")
    assert [cue.name for cue in CUES if nested.search(cue.pattern.pattern)] == []
