"""`ghost-agent skills` on a real home without a daemon: listing, prefixes, promote (a pinned `skill` lesson),
reject (retracts a promoted skill's lesson), and a home with no store yet."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ghost_agent.cli.main import main
from ghost_agent.home import GhostHome
from ghost_agent.memory.store import SkillMemory
from ghost_agent.skills_auto.mining import mine, observe
from ghost_agent.skills_auto.store import SkillStore
from ghost_agent.trajectories.record import Outcome
from tests.skills_auto.helpers import GREP, LIST, LOG_TASK, PANDAS, READ, turn


def mined_home(root: Path) -> GhostHome:
    home = GhostHome(root)
    turns = [turn([LIST, READ, GREP], Outcome.PASSED, "count errors in access.log") for _ in range(3)]
    turns += [turn([PANDAS, READ], Outcome.PASSED, "load data.csv with pandas\x1b[31m") for _ in range(4)]
    observed = [o for t in turns if (o := observe(t)) is not None]
    with SkillStore(home.skills_db) as store:
        store.sync(*mine(observed, min_support=3))
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["skills", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_skills_cli_lists_promotes_and_rejects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = mined_home(tmp_path / "home")
    at = ["--home", str(home.root)]
    code, out, _ = run(capsys, "candidates", *at, "--json")
    listed = orjson.loads(out)
    assert code == 0 and [c["support"] for c in listed] == [4, 3]  # most supported first
    log_task = next(c for c in listed if tuple(c["steps"]) == LOG_TASK)
    code, out, _ = run(capsys, "candidates", *at)
    assert "\x1b" not in out and "load data.csv with pandas" in out  # no control characters reach the terminal

    assert run(capsys, "promote", "abc", *at)[0] == 1  # too short a prefix
    assert run(capsys, "promote", "ffffffff", *at)[0] == 1  # no such candidate
    code, out, err = run(capsys, "promote", log_task["id"][:5], *at, "--json")
    assert code == 0, err
    promoted = orjson.loads(out)
    assert promoted["status"] == "promoted" and promoted["lesson_id"]
    with SkillMemory(home.lessons_db) as memory:
        lesson = memory.get(promoted["lesson_id"])
        assert lesson is not None and (lesson.status, lesson.source) == ("pinned", "skill")
        assert lesson.task == "count errors in access.log" and lesson.source_trajectory_id in log_task["trajectory_ids"]
        hits = memory.search("count the errors in server.log", 3, session="any-session")
        assert [h.lesson.id for h in hits] == [lesson.id]  # pinned: every session finds it for similar requests
    # Promoting again is idempotent: the same lesson, strengthened.
    assert orjson.loads(run(capsys, "promote", log_task["id"], *at, "--json")[1])["lesson_id"] == lesson.id

    code, out, _ = run(capsys, "ls", *at)
    assert code == 0 and log_task["id"] in out and "pinned" in out
    assert run(capsys, "candidates", *at, "--json")[1].count('"id"') == 1  # the promoted one is no longer proposed
    assert run(capsys, "reject", log_task["id"], *at, "--reason", "wrong tool")[0] == 0
    with SkillMemory(home.lessons_db) as memory:
        after = memory.get(lesson.id)
        assert after is not None and after.status == "retracted"
    with SkillStore(home.skills_db) as store:
        rejected = store.get(log_task["id"])
    assert rejected is not None and rejected.status == "rejected" and rejected.reason == "wrong tool"
    all_of_them = orjson.loads(run(capsys, "candidates", *at, "--all", "--json")[1])
    assert {c["status"] for c in all_of_them} == {"candidate", "rejected"}


def test_a_home_without_a_skills_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    at = ["--home", str(tmp_path / "empty")]
    assert run(capsys, "candidates", *at) == (0, "", "")
    assert run(capsys, "ls", *at, "--json") == (0, "[]\n", "")
    code, _, err = run(capsys, "promote", "abcdef", *at)
    assert code == 1 and "has not run yet" in err
    assert not (tmp_path / "empty").exists()  # listing creates nothing
