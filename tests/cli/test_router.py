"""`ghost-agent router train | inspect | decide`, run through `run_router_cli` on real homes."""

from __future__ import annotations

import argparse
import io
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pytest
import structlog

from ghost_agent.cli.router import add_subparser, run_router_cli
from ghost_agent.home import GhostHome
from ghost_agent.prm.features import PRM_FEATURE_NAMES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.router.features import ROUTER_FEATURE_NAMES
from ghost_agent.router.model import RouterModel
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.router.test_trainer import write_corpus


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def trained_home(home: Path) -> Iterator[Path]:
    with TrajectoryCollector(GhostHome(home).trajectories) as collector:
        write_corpus(collector, 80, seed=5)
    yield home


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_router_cli(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def constant_model(p: float) -> RouterModel:
    return RouterModel(weights=np.zeros(len(ROUTER_FEATURE_NAMES)), bias=math.log(p / (1 - p)))


# ----------------------------------------------------------------------------------------------- train


def test_train_writes_the_homes_checkpoint_and_logs_to_its_file(trained_home: Path) -> None:
    structlog.reset_defaults()  # as in a fresh `ghost-agent` process (an earlier capture_logs marks it configured)
    code, out, _ = run("train", "--home", str(trained_home), "--json")
    assert not structlog.is_configured()  # the command put the process's logging back as it found it
    assert code == 0
    report = orjson.loads(out)  # stdout is exactly the report: no log lines mixed in
    checkpoint = GhostHome(trained_home).router_checkpoint
    assert report["kind"] == "router" and report["fit_succeeded"] and report["checkpoint"] == str(checkpoint)
    assert RouterModel.load(checkpoint).model_id == report["model_id"]
    events = [orjson.loads(line)["event"] for line in GhostHome(trained_home).log_file.read_bytes().splitlines()]
    assert "router_train_fit" in events


def test_train_to_another_path_prints_the_readable_report(trained_home: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "elsewhere" / "router.json"
    code, out, _ = run("train", "--home", str(trained_home), "--out", str(out_path))
    assert code == 0 and out_path.exists()
    assert out.startswith("router trainer: fitted") and f"checkpoint: {out_path}" in out
    assert not GhostHome(trained_home).router_checkpoint.exists()


def test_train_bails_with_exit_3_and_no_checkpoint(home: Path) -> None:
    code, out, _ = run("train", "--home", str(home))
    assert code == 3
    assert "did not fit" in out and "only 0 usable trajectories" in out
    assert not GhostHome(home).router_checkpoint.exists()


def test_train_since_excludes_older_trajectories(trained_home: Path) -> None:
    code, out, _ = run("train", "--home", str(trained_home), "--since", "2099-01-01", "--json")
    assert code == 3 and orjson.loads(out)["trajectories_seen"] == 0


def test_train_save_failure_exits_1(trained_home: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, _ = run("train", "--home", str(trained_home), "--out", str(blocker / "router.json"), "--json")
    report = orjson.loads(out)
    assert code == 1 and report["fit_succeeded"] and "saving the checkpoint" in report["error"]


def test_train_rejects_a_bad_since(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run("train", "--home", str(home), "--since", "yesterday-ish")
    assert code == 2 and "invalid time" in capsys.readouterr().err  # argparse writes usage errors itself


# --------------------------------------------------------------------------------------------- inspect


def test_inspect_text_and_json(trained_home: Path) -> None:
    assert run("train", "--home", str(trained_home))[0] == 0
    path = GhostHome(trained_home).router_checkpoint
    model = RouterModel.load(path)
    code, out, _ = run("inspect", str(path))
    assert code == 0
    assert "ghost.router.logreg.v1" in out and model.model_id in out and "trained_at" in out
    assert all(name in out for name in ROUTER_FEATURE_NAMES)
    code, out, _ = run("inspect", str(path), "--json")
    figures = orjson.loads(out)
    assert code == 0 and figures["model_id"] == model.model_id and figures["schema"] == "ghost.router.logreg.v1"
    assert figures["feature_names"] == list(ROUTER_FEATURE_NAMES) and figures["n_features"] == 11
    strengths = [abs(w["standardized"]) for w in figures["weights_ranked"]]
    assert len(strengths) == len(ROUTER_FEATURE_NAMES) and strengths == sorted(strengths, reverse=True)
    assert figures["training"]["n_samples"] == model.metadata["n_samples"] == 80


@pytest.mark.parametrize("content", ["{broken", "[]"])
def test_inspect_unusable_file_is_one_line_exit_2(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run("inspect", str(path))
    assert code == 2 and out == ""
    assert err.startswith("ghost-agent router inspect: ") and err.count("\n") == 1


def test_inspect_refuses_a_prm_checkpoint(tmp_path: Path) -> None:
    path = StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES))).save(tmp_path / "prm.json")
    code, _, err = run("inspect", str(path))
    assert code == 2 and "ghost.prm.logreg.v1" in err


# ---------------------------------------------------------------------------------------------- decide


def test_decide_with_a_model(tmp_path: Path, home: Path) -> None:
    model = constant_model(0.1)
    path = model.save(tmp_path / "router.json")
    code, out, _ = run("decide", "hi there", "--model", str(path), "--home", str(home))
    assert code == 0
    assert orjson.loads(out) == {"decision": "fast", "p": pytest.approx(0.1), "reason": "confident_fast",
                                 "model": model.model_id, "confidence": pytest.approx(0.9)}
    code, out, _ = run("decide", "hi there", "--model", str(path), "--home", str(home), "--band", "0.45")
    assert orjson.loads(out)["reason"] == "uncertain"
    code, out, _ = run("decide", "hi", "--model", str(path), "--home", str(home), "--mode", "always-agent")
    assert orjson.loads(out)["decision"] == "agent" and orjson.loads(out)["reason"] == "forced"


def test_decide_uses_the_homes_checkpoint_by_default(trained_home: Path) -> None:
    code, out, _ = run("decide", "list files in /tmp", "--home", str(trained_home))
    assert code == 0 and orjson.loads(out) == {
        "decision": "agent", "p": None, "reason": "prior_agent", "model": None, "confidence": None
    }
    assert run("train", "--home", str(trained_home))[0] == 0
    model_id = RouterModel.load(GhostHome(trained_home).router_checkpoint).model_id
    code, out, _ = run("decide", "list files in /tmp", "--home", str(trained_home), "--messages", "3")
    decision = orjson.loads(out)
    assert code == 0 and decision["model"] == model_id and decision["decision"] == "agent"
    assert decision["p"] > 0.65


def test_decide_prefers_the_configured_model(trained_home: Path, tmp_path: Path) -> None:
    assert run("train", "--home", str(trained_home))[0] == 0  # the home's own checkpoint exists too
    configured = constant_model(0.9)
    path = configured.save(tmp_path / "configured.json")
    config = tmp_path / "ghost.toml"
    config.write_text(f'[learning]\nrouter_model = "{path}"\n')
    code, out, _ = run("decide", "hi", "--home", str(trained_home), "--config", str(config))
    assert code == 0 and orjson.loads(out)["model"] == configured.model_id


def test_decide_messages_change_the_features(tmp_path: Path, home: Path) -> None:
    weights = np.zeros(len(ROUTER_FEATURE_NAMES))
    weights[ROUTER_FEATURE_NAMES.index("conv_messages_log")] = 1.0
    path = RouterModel(weights=weights, bias=-2.0).save(tmp_path / "router.json")
    one = orjson.loads(run("decide", "hi", "--model", str(path), "--home", str(home))[1])
    many = orjson.loads(run("decide", "hi", "--model", str(path), "--home", str(home), "--messages", "40")[1])
    assert one["decision"] == "fast" and many["decision"] == "agent"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--band", "0.7"], "invalid band"),
        (["--band", "nan"], "invalid band"),
        (["--messages", "-1"], "invalid message count"),
        (["--mode", "sometimes"], "invalid choice"),
    ],
)
def test_decide_usage_errors(home: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run("decide", "hi", "--home", str(home), *argv)
    assert code == 2 and message in capsys.readouterr().err


def test_decide_with_an_unusable_model_is_exit_2(tmp_path: Path, home: Path) -> None:
    code, out, err = run("decide", "hi", "--model", str(tmp_path / "missing.json"), "--home", str(home))
    assert code == 2 and out == "" and err.startswith("ghost-agent router decide: cannot read checkpoint")


def test_registers_on_the_main_parser() -> None:
    root = argparse.ArgumentParser(prog="ghost-agent")
    sub = root.add_subparsers(dest="command")
    add_subparser(sub)
    args = root.parse_args(["router", "inspect", "x.json"])
    assert args.router_command == "inspect" and callable(args.func) and isinstance(args.parser, argparse.ArgumentParser)
