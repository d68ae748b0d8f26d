"""The swap gate: the time-ordered split, the verdict, and a gated trainer run (accept, reject, keep, no news)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ghost_agent.learned.holdout import PRIMARY, HoldoutGate, judge, time_split
from ghost_agent.learned.training import Floors
from ghost_agent.prm.trainer import PRMTrainer
from tests.learned.retrainhelp import inverted_model, normal_model, world


def test_the_split_holds_out_the_newest_whole_trajectories() -> None:
    # six trajectories of 4 samples each, read out of time order; the newest two are groups 4 and 1
    groups = [g for g in range(6) for _ in range(4)]
    times = [10.0, 60.0, 20.0, 30.0, 70.0, 40.0]
    split = time_split(groups, times, fraction=0.2, min_samples=8)
    assert split is not None
    assert split.holdout_samples == 8 and split.holdout_trajectories == 2 and split.train_trajectories == 4
    assert sorted({groups[i] for i in np.flatnonzero(split.holdout)}) == [1, 4]
    assert split.cutoff == 60.0 and not (split.train & split.holdout).any()


def test_equal_times_go_by_read_order_and_the_slice_never_passes_half() -> None:
    split = time_split([0, 0, 1, 1, 2, 2, 3, 3], [5.0] * 4, fraction=0.25, min_samples=2)
    assert split is not None and np.flatnonzero(split.holdout).tolist() == [6, 7]  # read last = newest
    # the newest trajectory holds 7 of 10 samples: more than half, so no slice can be held out
    assert time_split([0, 1, 2, 3, 3, 3, 3, 3, 3, 3], [5.0] * 4, fraction=0.2, min_samples=2) is None
    assert time_split([0, 0, 0, 1], [1.0, 2.0], fraction=0.5, min_samples=2) is None  # 1 sample is too few
    assert time_split([0], [1.0], fraction=0.5, min_samples=1) is None


def test_judge_is_no_worse_on_log_loss_with_a_tolerance() -> None:
    assert judge({PRIMARY: 0.30}, {PRIMARY: 0.30})[0] is True
    assert judge({PRIMARY: 0.31}, {PRIMARY: 0.30})[0] is False
    assert judge({PRIMARY: 0.31}, {PRIMARY: 0.30}, tolerance=0.02)[0] is True
    with pytest.raises(ValueError):
        HoldoutGate(fraction=0.9)


def test_a_first_model_is_judged_against_the_neutral_scorer_and_refitted_on_everything() -> None:
    trainer = PRMTrainer(world(20))
    report = trainer.run(gate=HoldoutGate(None))
    gate = report.gate
    assert report.fit_succeeded and gate["accepted"] and gate["judged"] and gate["live_id"] == "neutral"
    assert gate["live"][PRIMARY] == pytest.approx(math.log(2), abs=1e-6)
    assert gate["candidate"][PRIMARY] < gate["live"][PRIMARY]
    assert gate["holdout_samples"] == 10 and gate["train_samples"] == 30
    model = trainer.model
    assert model is not None and model.metadata["n_samples"] == 40  # refitted on every sample
    assert model.metadata["gate"] == gate and gate["candidate_id"] != model.model_id


def test_a_candidate_worse_than_the_live_model_is_rejected_and_kept_aside() -> None:
    live = normal_model()
    data = world(16, inverted=True) + world(8, start=100)  # the newest turns follow the normal world again
    trainer = PRMTrainer(data)
    trainer.model = live
    report = trainer.run(gate=HoldoutGate(live))
    gate = report.gate
    assert not gate["accepted"] and gate["judged"] and gate["live_id"] == live.model_id
    assert gate["candidate"][PRIMARY] > gate["live"][PRIMARY]
    assert trainer.model is live and not report.fit_succeeded  # the live model is untouched
    rejected = trainer.rejected
    assert rejected is not None and report.rejected_model_id == rejected.model_id
    assert rejected.metadata["gate"] == gate and rejected.metadata["n_samples"] == gate["train_samples"]
    assert "rejected" in report.render()


def test_a_better_candidate_replaces_a_worse_live_model() -> None:
    live = inverted_model()
    report = PRMTrainer(world(20)).run(gate=HoldoutGate(live))
    assert report.gate["accepted"] and report.fit_succeeded


def test_too_little_data_to_hold_out_keeps_a_live_model_and_accepts_a_first_one() -> None:
    small, floors = world(6), Floors(min_samples=5)  # 12 samples: a slice of 10 would pass half
    kept = PRMTrainer(small, floors=floors).run(gate=HoldoutGate(normal_model(), min_samples=10))
    assert not kept.fit_attempted and "keeping the live model" in (kept.bail_reason or "")
    first = PRMTrainer(small, floors=floors).run(gate=HoldoutGate(None, min_samples=10))
    assert first.fit_succeeded and first.gate["judged"] is False and first.gate["accepted"] is True


def test_the_same_data_as_the_live_model_is_no_news() -> None:
    data = world(20)
    trainer = PRMTrainer(data)
    trainer.run(gate=HoldoutGate(None))
    live = trainer.model
    assert live is not None
    again = PRMTrainer(data).run(gate=HoldoutGate(live))
    assert again.bail_reason == "no new data since the live model was trained" and not again.fit_attempted
    flipped = world(20)
    flipped[3].outcome = flipped[2].outcome  # a correction that flips one label is news
    assert PRMTrainer(flipped).run(gate=HoldoutGate(live)).bail_reason is None
