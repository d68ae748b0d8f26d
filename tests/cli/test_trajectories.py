"""`ghost-agent trajectories ls | show | stats | export` on a real home."""

from __future__ import annotations

import argparse
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest

from ghost_agent.cli.trajectories import add_subparser, run_trajectories_cli
from ghost_agent.home import GhostHome
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.trajectories.trajhelp import make_traj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def trajs(home: Path) -> list[Trajectory]:
    """Four records on two days, plus one from two hours ago; one corrected to FAILED."""
    recent = (datetime.now(timezone.utc) - timedelta(hours=2)).isoformat()
    items = [
        make_traj("2026-04-20T08:00:00+00:00", session="a", request="first question\nwith a newline"),
        make_traj("2026-04-20T09:00:00+00:00", session="a", source="self_play", request="solve task 7",
                  outcome=Outcome.PASSED),
        make_traj("2026-04-21T10:00:00+00:00", session="b", request="x" * 200, steps=5),
        make_traj("2026-04-21T11:00:00+00:00", session="b", source="eval", request="eval item"),
        make_traj(recent, session="c", request="what did I just ask?"),
    ]
    with TrajectoryCollector(GhostHome(home).trajectories) as c:
        for t in items:
            c.append(t)
        c.update_outcome(items[0].id, "failed", "user said no", source="user_correction")
    return items


def run(args: list[str], home: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_trajectories_cli([*args, "--home", str(home)], out, err)
    return code, out.getvalue(), err.getvalue()


def test_ls_prints_one_line_per_trajectory(home: Path, trajs: list[Trajectory]) -> None:
    code, out, _ = run(["ls"], home)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 5
    first = lines[0].split()
    assert first[:5] == [trajs[0].ts, trajs[0].id, "chat", "failed", "2"]  # the correction is overlaid
    assert lines[0].endswith("first question with a newline")
    assert "…" in lines[2] and len(lines[2]) < 200


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--day", "2026-04-21"], [2, 3]),
        (["--source", "self_play"], [1]),
        (["--outcome", "failed"], [0]),
        (["--outcome", "unknown", "--day", "2026-04-21"], [2, 3]),
        (["--limit", "2"], [3, 4]),  # the most recent N, still oldest first
        (["--day", "2026-01-01"], []),
    ],
)
def test_ls_filters(home: Path, trajs: list[Trajectory], args: list[str], expected: list[int]) -> None:
    code, out, _ = run(["ls", *args], home)
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()] == [trajs[i].id for i in expected]


def test_show_prints_the_overlaid_record(home: Path, trajs: list[Trajectory]) -> None:
    code, out, _ = run(["show", trajs[0].id], home)
    assert code == 0
    record = orjson.loads(out)
    assert record["id"] == trajs[0].id and record["outcome"] == "failed"
    assert record["failure_reason"] == "user said no"
    assert out.count("\n") > 10  # pretty-printed


def test_show_unknown_id_exits_1_with_a_message(home: Path, trajs: list[Trajectory]) -> None:
    code, out, err = run(["show", "deadbeef"], home)
    assert code == 1 and out == ""
    assert "no trajectory with id 'deadbeef'" in err


def test_stats_text_and_json(home: Path, trajs: list[Trajectory]) -> None:
    root = GhostHome(home).trajectories
    with open(root / "2026-04-20" / "session-a.jsonl", "ab") as fh:
        fh.write(b"{torn")
    code, out, _ = run(["stats"], home)
    assert code == 0
    assert "trajectories: 5" in out and "2026-04-20" in out and "self_play" in out
    assert "1 applied" in out and "corrupt lines skipped: 1" in out
    code, out, _ = run(["stats", "--json"], home)
    figures = orjson.loads(out)
    assert figures["trajectories"] == 5 and figures["corrupt_lines"] == 1
    assert figures["outcomes"] == {"failed": 1, "passed": 1, "unknown": 3}
    assert figures["sources"] == {"chat": 3, "eval": 1, "self_play": 1}
    assert figures["days"]["2026-04-21"] == 2
    assert figures["corrections"]["applied"] == 1


def test_export_writes_json_lines(home: Path, trajs: list[Trajectory]) -> None:
    code, out, _ = run(["export"], home)
    assert code == 0
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == [t.id for t in trajs]
    assert records[0]["outcome"] == "failed"
    assert [Trajectory.from_dict(r).id for r in records] == [t.id for t in trajs]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--since", "1d"], [4]),
        (["--since", "2026-04-21"], [2, 3, 4]),
        (["--since", "2026-04-20T08:30:00Z", "--until", "2026-04-21"], [1, 2, 3]),
        (["--until", "2026-04-20T08:00:00+00:00"], [0]),
        (["--source", "eval"], [3]),
    ],
)
def test_export_since_until(home: Path, trajs: list[Trajectory], args: list[str], expected: list[int]) -> None:
    code, out, _ = run(["export", *args], home)
    assert code == 0
    assert [orjson.loads(line)["id"] for line in out.splitlines()] == [trajs[i].id for i in expected]


@pytest.mark.parametrize(
    "args",
    [["export", "--since", "last week"], ["ls", "--day", "April"], ["ls", "--limit", "0"], ["ls", "--source", "x"],
     ["frobnicate"], []],
)
def test_usage_errors_exit_2(home: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(args, home)
    assert code == 2
    assert "usage:" in capsys.readouterr().err


def test_empty_or_missing_home_is_not_an_error(home: Path) -> None:
    assert run(["ls"], home) == (0, "", "")
    code, out, _ = run(["stats"], home)
    assert code == 0 and "trajectories: 0" in out
    assert not home.exists()  # reading never creates anything


def test_home_from_env_and_config(tmp_path: Path, home: Path, trajs: list[Trajectory],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHOST_HOME", str(home))
    out = io.StringIO()
    assert run_trajectories_cli(["ls"], out) == 0 and len(out.getvalue().splitlines()) == 5
    monkeypatch.delenv("GHOST_HOME")
    config = tmp_path / "ghost.toml"
    config.write_text(f'home = "{home}"\n')
    out = io.StringIO()
    assert run_trajectories_cli(["ls", "--config", str(config)], out) == 0
    assert len(out.getvalue().splitlines()) == 5


def test_add_subparser_follows_the_cli_convention(home: Path, trajs: list[Trajectory],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="ghost-agent")
    sub = parser.add_subparsers(dest="command")
    add_subparser(sub)
    args = parser.parse_args(["trajectories", "show", trajs[1].id, "--home", str(home)])
    assert args.func(args, args.parser) == 0  # cli.main's call shape; prints to stdout
    assert orjson.loads(capsys.readouterr().out)["id"] == trajs[1].id


def test_ls_is_in_time_order_across_the_sessions_of_a_day(home: Path) -> None:
    """Help says oldest first: records of one day sit in per-session files, which must not decide the order."""
    items = [
        make_traj("2026-05-01T08:00:00+00:00", session="zeta", request="z first"),
        make_traj("2026-05-01T09:00:00+00:00", session="alpha", request="a second"),
        make_traj("2026-05-01T10:30:00+02:00", session="zeta", request="08:30 UTC: between the first two"),
        make_traj("2026-05-01T11:00:00+00:00", session="mid", request="m fourth"),
        make_traj("2026-05-02T07:00:00+00:00", session="alpha", request="a fifth, next day"),
    ]
    with TrajectoryCollector(GhostHome(home).trajectories) as c:
        for t in items:
            c.append(t)
    code, out, _ = run(["ls"], home)
    assert code == 0
    order = [line.split()[1] for line in out.splitlines()]
    assert order == [items[0].id, items[2].id, items[1].id, items[3].id, items[4].id]
    code, out, _ = run(["ls", "--limit", "3"], home)
    assert [line.split()[1] for line in out.splitlines()] == [items[1].id, items[3].id, items[4].id]


def test_export_training_data_sft_and_dpo(home: Path) -> None:
    task = {"task": "sql/top_products/d2/7"}
    items = [
        make_traj("2026-04-20T08:00:00+00:00", session="p1", source="self_play", request="write the query",
                  outcome=Outcome.FAILED, response="SELECT * FROM t", extra={"selfplay": task}),
        make_traj("2026-04-20T08:01:00+00:00", session="p2", source="self_play", request="write the query",
                  outcome=Outcome.PASSED, response="SELECT name FROM t ORDER BY n DESC LIMIT 3",
                  extra={"selfplay": task, "outcome_source": "self"}),
        make_traj("2026-04-20T08:02:00+00:00", session="p3", source="self_play", request="write the query",
                  outcome=Outcome.PASSED, response="SELECT name FROM t ORDER BY n DESC LIMIT 3",
                  extra={"selfplay": task}),
        make_traj("2026-04-20T09:00:00+00:00", session="c", request="What is 2 + 2?", outcome=Outcome.FAILED,
                  response="5"),
        make_traj("2026-04-20T09:05:00+00:00", session="d", request="what is 2 +  2?", outcome=Outcome.PASSED,
                  response="4"),
        make_traj("2026-04-20T10:00:00+00:00", session="e", request="hello", response="hi"),  # unknown: neither
        make_traj("2026-04-20T10:00:00+00:00", session="e", request="my key is sk-proj-4fG7hK2mN9pQ1rS5tU8vW3xY6zA0bC",
                  outcome=Outcome.PASSED, response="noted"),
    ]
    with TrajectoryCollector(GhostHome(home).trajectories) as c:
        for t in items:
            c.append(t)
    code, out, _ = run(["export", "--format", "sft"], home)
    assert code == 0
    sft = [orjson.loads(line) for line in out.splitlines()]
    assert sorted(r["messages"][1]["content"] for r in sft) == [
        "4", "SELECT name FROM t ORDER BY n DESC LIMIT 3", "SELECT name FROM t ORDER BY n DESC LIMIT 3", "noted"]
    played = next(r for r in sft if r["outcome_source"] == "self")
    assert played["messages"][0] == {"role": "user", "content": "write the query"}
    assert played["source"] == "self_play"
    assert "4fG7hK2mN9pQ1rS5tU8vW3xY6zA0bC" not in out  # records on disk are redacted
    code, out, _ = run(["export", "--format", "dpo"], home)
    pairs = [orjson.loads(line) for line in out.splitlines()]
    assert sorted((p["task"], p["chosen"][0]["content"], p["rejected"][0]["content"]) for p in pairs) == [
        ("request:what is 2 + 2?", "4", "5"),
        ("selfplay:sql/top_products/d2/7", "SELECT name FROM t ORDER BY n DESC LIMIT 3", "SELECT * FROM t"),
    ]
    assert next(p for p in pairs if p["task"].startswith("selfplay"))["prompt"] == [
        {"role": "user", "content": "write the query"}]
