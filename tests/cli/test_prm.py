"""`ghost-agent prm train | inspect | score` through run_prm_cli, on real stores and checkpoint files."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
import structlog

from ghost_agent.cli.prm import run_prm_cli
from ghost_agent.home import GhostHome
from ghost_agent.prm.features import PRM_FEATURE_NAMES, PlanState
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.prm.samplehelp import balanced, store, traj

STATE = {"user_request": "run the tests", "steps_so_far": 2, "failures_so_far": 1, "tools_used": ["bash"],
         "tools_failed": ["bash"]}
ACTION = {"description": "try again", "tool_name": "bash", "tool_args": {"cmd": "pytest"}}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_prm_cli(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def home(tmp_path: Path) -> GhostHome:
    return GhostHome(tmp_path / "home")


def fill(home: GhostHome, trajectories: list[Trajectory] | None = None) -> None:
    with TrajectoryCollector(home.trajectories) as collector:
        store(collector, balanced(6, 6) if trajectories is None else trajectories)


@pytest.fixture
def trained(home: GhostHome) -> Path:
    fill(home)
    code, _, _ = run("train", "--home", str(home.root))
    assert code == 0
    return home.prm_checkpoint


# --------------------------------------------------------------------------------------------------- train


def test_train_writes_the_home_checkpoint(home: GhostHome) -> None:
    fill(home)
    structlog.reset_defaults()  # start unconfigured, as the console script does
    code, out, err = run("train", "--home", str(home.root))
    assert code == 0, err
    assert home.prm_checkpoint.exists()
    assert "prm trainer: fitted" in out and str(home.prm_checkpoint) in out
    model = StepValueModel.load(home.prm_checkpoint)
    assert model.metadata["n_trajectories"] == 12 and model.metadata["label_mode"] == "continuous"
    events = [orjson.loads(line) for line in home.log_file.read_bytes().splitlines()]
    assert [e["event"] for e in events] == ["prm_train_fit"]  # the log file got it, stdout did not
    assert "prm_train_fit" not in out
    assert not structlog.is_configured()  # the CLI leaves process-wide logging as it found it


def test_train_json_binary_and_custom_out(home: GhostHome, tmp_path: Path) -> None:
    fill(home)
    out_path = tmp_path / "elsewhere" / "prm.json"
    code, out, _ = run("train", "--home", str(home.root), "--out", str(out_path), "--binary", "--json")
    assert code == 0
    report = orjson.loads(out)
    assert report["fit_succeeded"] and report["checkpoint"] == str(out_path) and report["samples"] == 24
    assert StepValueModel.load(out_path).metadata["label_mode"] == "binary"
    assert not home.prm_checkpoint.exists()


def test_train_bail_exits_3_and_writes_nothing(home: GhostHome) -> None:
    fill(home, [traj(Outcome.PASSED, ["bash"], request=f"r{k}") for k in range(3)])
    code, out, _ = run("train", "--home", str(home.root))
    assert code == 3
    assert "did not fit" in out and "only 3 usable trajectories" in out
    assert not home.prm_checkpoint.exists()


def test_train_since_excludes_old_days(home: GhostHome) -> None:
    fill(home)  # recorded on 2026-04-26
    code, out, _ = run("train", "--home", str(home.root), "--since", "2099-01-01", "--json")
    assert code == 3 and orjson.loads(out)["trajectories_seen"] == 0
    code, _, _ = run("train", "--home", str(home.root), "--since", "2026-04-26")
    assert code == 0


def test_train_save_failure_exits_1(home: GhostHome, tmp_path: Path) -> None:
    fill(home)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, _ = run("train", "--home", str(home.root), "--out", str(blocker / "prm.json"))
    assert code == 1 and "saving the checkpoint" in out


def test_train_on_a_home_without_a_store_bails_and_creates_no_store(home: GhostHome) -> None:
    code, _, _ = run("train", "--home", str(home.root))
    assert code == 3 and not home.trajectories.exists() and not home.prm_checkpoint.exists()


def test_train_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("train", "--help")[0] == 0
    text = capsys.readouterr().out
    assert "exit codes" in text and "3  bailed" in text and "1  error" in text


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run()[0] == 2
    assert run("train", "--since", "yesterday-ish")[0] == 2
    assert "invalid time" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------- inspect


def test_inspect_prints_weights_ranked_and_metadata(trained: Path) -> None:
    code, out, _ = run("inspect", str(trained))
    assert code == 0
    model = StepValueModel.load(trained)
    assert "schema: ghost.prm.logreg.v1" in out and f"model_id: {model.model_id}" in out and "features: 25" in out
    ranked = [name for name, _, _ in model.ranked_weights()]
    positions = [out.index(f"  {name} ") for name in ranked]
    assert positions == sorted(positions)  # strongest first, every feature listed
    assert "n_samples: 24" in out and "trained_at:" in out


def test_inspect_json(trained: Path) -> None:
    code, out, _ = run("inspect", str(trained), "--json")
    assert code == 0
    info = orjson.loads(out)
    assert info["schema"] == "ghost.prm.logreg.v1" and info["n_features"] == len(PRM_FEATURE_NAMES)
    strengths = [abs(w["standardized"]) for w in info["weights_ranked"]]
    assert strengths == sorted(strengths, reverse=True) and len(strengths) == 25
    assert info["model_id"] == StepValueModel.load(trained).model_id
    assert info["training"]["n_samples"] == 24


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read checkpoint"),
        (b"{not json", "not valid JSON"),
        (b'{"schema": "ghost.router.logreg.v1"}', "schema"),
        (b'{"schema": "ghost.prm.logreg.v1", "feature_names": ["a", "b"], "weights": [1, 2], "bias": 0}',
         "feature layout differs"),
    ],
    ids=["missing", "not-json", "wrong-schema", "feature-drift"],
)
def test_inspect_bad_checkpoint_is_one_line_exit_2(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "ckpt.json"
    if content is not None:
        path.write_bytes(content)
    code, out, err = run("inspect", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


# --------------------------------------------------------------------------------------------------- score


def test_score_without_a_model_is_neutral(home: GhostHome) -> None:
    code, out, _ = run("score", "--home", str(home.root), "--state", orjson.dumps(STATE).decode(),
                       "--action", orjson.dumps(ACTION).decode())
    assert code == 0
    result = orjson.loads(out)
    assert result["score"] == 0.5 and result["uncertainty"] == 1.0
    assert result["model"] is None and result["model_id"] is None
    assert list(result["features"]) == list(PRM_FEATURE_NAMES)
    assert result["features"]["cross_tool_failed_this_turn"] == 1.0 and result["features"]["plan_steps_so_far"] == 2


def test_score_uses_the_home_checkpoint_by_default(home: GhostHome, trained: Path) -> None:
    code, out, _ = run("score", "--home", str(home.root), "--state", orjson.dumps(STATE).decode(),
                       "--action", orjson.dumps(ACTION).decode())
    assert code == 0
    result = orjson.loads(out)
    scorer = PRMScorer.load(trained)
    assert result["model"] == str(trained) and result["model_id"] == scorer.model_id
    assert result["score"] == pytest.approx(scorer.score(PlanState.from_dict(STATE), ACTION))
    assert result["uncertainty"] == pytest.approx(1 - 2 * abs(result["score"] - 0.5))


def test_score_with_model_and_at_file_inputs(trained: Path, tmp_path: Path) -> None:
    state_file, action_file = tmp_path / "state.json", tmp_path / "action.json"
    state_file.write_bytes(orjson.dumps({"user_request": "compute thing 3"}))
    action_file.write_bytes(orjson.dumps({"description": "run", "tool_name": "python"}))
    code, out, _ = run("score", "--home", str(tmp_path / "empty-home"), "--model", str(trained),
                       "--state", f"@{state_file}", "--action", f"@{action_file}")
    assert code == 0
    result = orjson.loads(out)
    expected = PRMScorer.load(trained).score({"user_request": "compute thing 3"}, {"tool_name": "python",
                                                                                     "description": "run"})
    assert result["score"] == pytest.approx(expected) and result["model"] == str(trained)
    assert result["features"]["tool_is_heavyweight"] == 1.0


@pytest.mark.parametrize(
    ("state", "action", "message"),
    [
        ("{oops", orjson.dumps(ACTION).decode(), "--state is not valid JSON"),
        (orjson.dumps(STATE).decode(), "[1, 2]", "--action must be a JSON object"),
        ("@/nonexistent/state.json", orjson.dumps(ACTION).decode(), "cannot read --state file"),
    ],
    ids=["bad-json", "not-an-object", "missing-file"],
)
def test_score_bad_input_exits_2(home: GhostHome, state: str, action: str, message: str) -> None:
    code, out, err = run("score", "--home", str(home.root), "--state", state, "--action", action)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_score_with_an_unusable_model_exits_2(home: GhostHome, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    code, out, err = run("score", "--home", str(home.root), "--model", str(bad), "--state", "{}", "--action", "{}")
    assert code == 2 and out == "" and "not a JSON object" in err
