"""Baseline freeze / load / compare: atomic JSON round trip, a clear error for every unusable baseline, the
per-suite and per-cluster diff (rates, deltas, newly failing / passing ids), `regressed` on any top-level drop."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ghost_agent.eval.baseline import BaselineError, Comparison, compare, freeze, load
from ghost_agent.eval.task import RESULT_SCHEMA, SuiteResult, TaskOutcome


def outcome(task_id: str, cluster: str, passed: bool, trajectory_id: str | None = None) -> TaskOutcome:
    reward = {"success": passed, "failure_class": "keep" if passed else "discard", "auxiliary": {},
              "scalar": float(passed)}
    return TaskOutcome(task_id=task_id, cluster=cluster, passed=passed, reward=reward, duration_ms=12.5,
                       reply="r", trajectory_id=trajectory_id)


def result(passes: dict[str, tuple[str, bool]], suite: str = "default", **metadata: object) -> SuiteResult:
    """{task id: (cluster, passed)} -> a SuiteResult (trajectory ids "traj-<task id>")."""
    return SuiteResult(
        suite=suite,
        outcomes=[outcome(tid, cluster, ok, f"traj-{tid}") for tid, (cluster, ok) in passes.items()],
        metadata=dict(metadata),
    )


BASE = {
    "algo/1": ("algo", True),
    "algo/2": ("algo", True),
    "sql/1": ("sql", True),
    "sql/2": ("sql", False),
    "bash/1": ("bash", False),
}


def test_freeze_then_load_round_trips_atomically(tmp_path: Path) -> None:
    original = result(BASE, runner="stub", settings_hash="abc")
    path = freeze(original, tmp_path / "deep" / "eval" / "default.json")
    assert path.exists() and os.listdir(path.parent) == ["default.json"]  # no temp file left behind
    data = json.loads(path.read_text())
    assert data["schema"] == RESULT_SCHEMA and data["pass_rate"] == 0.6 and data["total"] == 5
    assert data["clusters"] == {"algo": 1.0, "bash": 0.0, "sql": 0.5}
    loaded = load(path)
    assert loaded.to_dict() == original.to_dict()
    # Freezing again replaces the file whole.
    freeze(result({"algo/1": ("algo", False)}), path)
    assert load(path).pass_rate == 0.0 and os.listdir(path.parent) == ["default.json"]


def test_unusable_baselines_say_why(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="does not exist"):
        load(tmp_path / "missing.json")
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text(json.dumps(result(BASE).to_dict())[:40])
    with pytest.raises(BaselineError, match="not valid JSON"):
        load(corrupt)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "ghost.prm.logreg.v1", "weights": []}))
    with pytest.raises(BaselineError, match="not a usable suite result.*schema"):
        load(other)
    no_outcomes = tmp_path / "no_outcomes.json"
    no_outcomes.write_text(json.dumps({"schema": RESULT_SCHEMA, "suite": "default"}))
    with pytest.raises(BaselineError, match="outcomes"):
        load(no_outcomes)
    bad_outcome = tmp_path / "bad_outcome.json"
    bad_outcome.write_text(json.dumps({"schema": RESULT_SCHEMA, "suite": "default", "outcomes": [{"passed": True}]}))
    with pytest.raises(BaselineError, match="task_id"):
        load(bad_outcome)
    with pytest.raises(BaselineError, match="cannot read"):
        load(tmp_path)  # a directory


def test_an_unchanged_run_is_not_a_regression() -> None:
    comparison = compare(result(BASE), result(BASE))
    assert not comparison.regressed
    assert comparison.suite_row.delta == 0.0 and comparison.notes == ()
    assert all(not r.newly_failing and not r.newly_passing for r in comparison.rows)
    assert "ok: no drop" in comparison.render_table()


def test_any_top_level_drop_is_a_regression_with_the_failing_ids_per_cluster() -> None:
    current = dict(BASE, **{"algo/2": ("algo", False), "sql/2": ("sql", True), "bash/1": ("bash", False),
                            "sql/1": ("sql", False)})
    comparison = compare(result(BASE), result(current))
    assert comparison.regressed
    suite = comparison.suite_row
    assert (suite.scope, suite.name) == ("suite", "default")
    assert (suite.baseline_passed, suite.baseline_total, suite.current_passed, suite.current_total) == (3, 5, 2, 5)
    assert suite.delta == pytest.approx(-0.2)
    assert suite.newly_failing == ("algo/2", "sql/1") and suite.newly_passing == ("sql/2",)
    clusters = {r.name: r for r in comparison.cluster_rows}
    assert list(clusters) == ["algo", "bash", "sql"]
    assert clusters["algo"].baseline_rate == 1.0 and clusters["algo"].current_rate == 0.5
    assert clusters["algo"].delta == pytest.approx(-0.5) and clusters["algo"].dropped
    assert clusters["algo"].newly_failing == ("algo/2",) and clusters["algo"].newly_passing == ()
    assert clusters["sql"].delta == 0.0 and not clusters["sql"].dropped
    assert clusters["sql"].newly_failing == ("sql/1",) and clusters["sql"].newly_passing == ("sql/2",)
    table = comparison.render_table()
    lines = table.splitlines()
    algo_line = next(line for line in lines if line.strip().startswith("algo "))
    assert "100.0% (2/2)" in algo_line and "50.0% (1/2)" in algo_line and "-50.0 pts" in algo_line
    assert "algo/2" in algo_line
    sql_line = next(line for line in lines if line.strip().startswith("sql "))
    assert "+0.0 pts" in sql_line and "sql/1" in sql_line and "sql/2" in sql_line
    suite_line = next(line for line in lines if line.startswith("suite default"))
    assert "60.0% (3/5)" in suite_line and "40.0% (2/5)" in suite_line and "-20.0 pts" in suite_line
    assert "  algo/2  trajectory traj-algo/2" in table  # a failing task links to its trajectory
    assert "REGRESSED" in table.splitlines()[-1]
    assert comparison.to_dict()["regressed"] is True


def test_the_smallest_drop_counts_and_an_improvement_does_not() -> None:
    many = {f"t/{i}": ("c", True) for i in range(1000)}
    one_less = dict(many, **{"t/999": ("c", False)})
    assert compare(result(many), result(one_less)).regressed
    assert not compare(result(one_less), result(many)).regressed


def test_a_cluster_drop_alone_is_not_a_top_level_regression() -> None:
    current = dict(BASE, **{"algo/2": ("algo", False), "bash/1": ("bash", True)})
    comparison = compare(result(BASE), result(current))
    assert not comparison.regressed
    assert [r.name for r in comparison.cluster_rows if r.dropped] == ["algo"]
    assert " !" in next(line for line in comparison.render_table().splitlines() if line.strip().startswith("algo"))


def test_differing_task_sets_and_settings_are_noted() -> None:
    current = {k: v for k, v in BASE.items() if k != "bash/1"} | {"new/1": ("new", True)}
    comparison = compare(result(BASE, settings_hash="h1", model="a", limit=None),
                         result(current, settings_hash="h2", model="b", limit=None))
    assert comparison.only_in_baseline == ("bash/1",) and comparison.only_in_current == ("new/1",)
    assert any("task sets differ" in n for n in comparison.notes)
    assert any("settings hash differs (model changed)" in n for n in comparison.notes)
    rows = {r.name: r for r in comparison.cluster_rows}
    assert rows["bash"].current_total == 0 and rows["new"].baseline_total == 0
    table = comparison.render_table()
    assert "only in the baseline (1): bash/1" in table and "only in this run (1): new/1" in table


def test_results_of_different_suites_do_not_compare() -> None:
    with pytest.raises(BaselineError, match="'default' result.*'humaneval'"):
        compare(result(BASE), result(BASE, suite="humaneval"))


def test_an_empty_current_run_against_a_passing_baseline_regresses() -> None:
    comparison: Comparison = compare(result(BASE), SuiteResult(suite="default", outcomes=[]))
    assert comparison.regressed and comparison.suite_row.current_total == 0
