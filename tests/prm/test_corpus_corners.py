"""Corner corpora for the PRM pipeline: one-outcome stores, NaN γ, corrupted and malformed records on disk."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pytest

from ghost_agent.prm.labels import StepLabelSpec, iter_step_samples
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.prm.trainer import PRMTrainer
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.prm.samplehelp import balanced, fitted, step, store, traj


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[TrajectoryCollector]:
    with TrajectoryCollector(tmp_path / "trajectories") as c:
        yield c


def session_files(collector: TrajectoryCollector) -> list[Path]:
    return sorted(collector.root.rglob("session-*.jsonl"))


def test_all_unknown_store_bails_on_trajectories(tmp_path: Path, collector: TrajectoryCollector) -> None:
    store(collector, [traj(Outcome.UNKNOWN, ["bash"] * 3, request=f"r{k}") for k in range(30)])
    path = tmp_path / "ckpt.json"
    report = PRMTrainer(collector, checkpoint_path=path).run()
    assert report.trajectories_seen == 30 and report.trajectories_used == 0 and report.samples == 0
    assert report.bail_reason is not None and report.bail_reason.startswith("only 0 usable trajectories")
    assert not path.exists()


def test_all_passed_store_bails_on_class_balance(tmp_path: Path, collector: TrajectoryCollector) -> None:
    store(collector, [traj(Outcome.PASSED, ["python", "bash"], request=f"r{k}") for k in range(15)])
    path = tmp_path / "ckpt.json"
    report = PRMTrainer(collector, checkpoint_path=path).run()
    assert (report.positives, report.negatives) == (30, 0)
    assert report.bail_reason is not None and "negative class is 0.0%" in report.bail_reason
    assert not path.exists()


def test_all_failed_store_bails_on_class_balance(tmp_path: Path, collector: TrajectoryCollector) -> None:
    store(collector, [traj(Outcome.FAILED, ["python", "bash"], request=f"r{k}") for k in range(15)])
    path = tmp_path / "ckpt.json"
    report = PRMTrainer(collector, checkpoint_path=path).run()
    assert (report.positives, report.negatives) == (0, 30)
    assert report.bail_reason is not None and "positive class is 0.0%" in report.bail_reason
    assert not path.exists()


def test_empty_or_missing_store_bails(tmp_path: Path) -> None:
    report = PRMTrainer(TrajectoryCollector(tmp_path / "nowhere", enabled=False)).run()
    assert report.trajectories_seen == 0 and report.bail_reason is not None and report.error is None
    assert not (tmp_path / "nowhere").exists()


def test_trajectories_without_steps_give_no_samples() -> None:
    report = PRMTrainer([traj(o, []) for o in (Outcome.PASSED, Outcome.FAILED) * 10]).run()
    assert report.trajectories_seen == 20 and report.samples == 0 and report.bail_reason is not None


def test_nan_gamma_trains_exactly_like_the_default() -> None:
    data = balanced(6, 6) + [traj(Outcome.PASSED, ["python"] * 4)]
    nan_trainer = PRMTrainer(data, spec=StepLabelSpec(discount_factor=math.nan))
    report = nan_trainer.run()
    assert report.fit_succeeded
    assert nan_trainer.model is not None and nan_trainer.model.metadata["spec"]["discount_factor"] == 0.9
    assert report.model_id == PRMTrainer(data).run().model_id


@pytest.mark.parametrize("gamma", [math.nan, math.inf, -math.inf, -1.0, 0.0, 2.0, 1e-300, 1.0])
def test_labels_are_always_finite_and_in_unit_range(gamma: float) -> None:
    data = [traj(Outcome.PASSED, ["bash"] * n) for n in range(1, 30)] + [traj(Outcome.FAILED, ["bash"] * 3)]
    values = [s.value for s in iter_step_samples(data, StepLabelSpec(discount_factor=gamma))]
    assert values and all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values)


def test_corrupted_lines_in_the_store_are_skipped(tmp_path: Path, collector: TrajectoryCollector) -> None:
    good = store(collector, balanced(6, 6))
    (path,) = session_files(collector)
    with path.open("ab") as fh:
        fh.write(b'{"schema": "ghost.trajectory.v1", "id": "torn", "steps": [\n')  # a torn record
        fh.write(b"not json at all\n")
        fh.write(b"[1, 2, 3]\n")  # JSON, but not an object
        fh.write(b'{"schema": "something.else", "id": "x"}\n')  # not ours
        fh.write(b'{"schema": "ghost.trajectory.v1", "steps": []}\n')  # no id
        fh.write(orjson.dumps(traj(Outcome.PASSED, ["bash"]).to_dict())[:40])  # torn last line, no newline
    ckpt = tmp_path / "ckpt.json"
    report = PRMTrainer(collector, checkpoint_path=ckpt).run()
    assert report.error is None and report.fit_succeeded
    assert report.trajectories_seen == len(good) == 12
    assert collector.corrupt_lines == 6
    assert 0.0 <= PRMScorer.load(ckpt).score({"user_request": "x"}, {"tool_name": "bash"}) <= 1.0


def test_malformed_steps_on_disk_do_not_break_training(collector: TrajectoryCollector) -> None:
    store(collector, balanced(6, 6))
    odd = traj(Outcome.FAILED, ["bash", "bash"]).to_dict()
    odd["steps"][0]["tool_args"] = "rm -rf --no-preserve-root"  # a bare string where a mapping belongs
    odd["steps"][0]["tool_name"] = 17
    odd["steps"][1]["tool_args"] = [[[["deep"]]]] * 50
    odd["steps"][1]["extra"] = {"prm_state": {"pending_count": "lots", "plan_depth": 1e308}}
    (path,) = session_files(collector)
    with path.open("ab") as fh:
        fh.write(orjson.dumps(odd) + b"\n")
    report = PRMTrainer(collector).run()
    assert report.fit_succeeded and report.trajectories_seen == 13 and report.samples == 26


def test_extreme_values_in_records_still_give_finite_weights() -> None:
    huge = Trajectory(
        user_request="x" * 200_000 + "?" * 1000,
        steps=[
            step(0, "python", args={"code": "y" * 100_000}, prm_state={"pending_count": 10**30, "plan_depth": 10**6}),
            step(1, "python", ok=False),
        ],
        outcome=Outcome.FAILED,
    )
    trainer = PRMTrainer(balanced(6, 6) + [huge])
    report = trainer.run()
    model, weights = fitted(trainer.model)
    assert report.fit_succeeded and np.all(np.isfinite(weights)) and math.isfinite(model.bias)


def test_corrections_can_make_an_unknown_store_trainable(collector: TrajectoryCollector) -> None:
    unknown = store(collector, [traj(Outcome.UNKNOWN, ["bash", "python"], request=f"r{k}") for k in range(12)])
    assert PRMTrainer(collector).run().bail_reason is not None
    for k, t in enumerate(unknown):
        verdict = Outcome.PASSED if k % 2 else Outcome.FAILED
        collector.update_outcome(t.id, verdict, "checked", source="user_correction")
    report = PRMTrainer(collector).run()
    assert report.fit_succeeded and report.trajectories_used == 12
    assert report.weight_by_source == {"human": pytest.approx(24.0)}
