"""The JSON log on real files: size-based rotation, reopening after an external logrotate, the daemon's wiring."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import structlog

from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.logging import LogSink, configure_logging, get_logger
from tests.conftest import app_client, make_settings


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    configure_logging(None, console=None)  # closes the sink's file
    structlog.reset_defaults()


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def log_numbered(start: int, stop: int) -> None:
    log = get_logger("test")
    for n in range(start, stop):
        log.info("tick", n=n, padding="x" * 100)


def test_rotates_at_max_bytes_and_keeps_the_configured_backups(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "ghost.jsonl"
    configure_logging(path, console=None, max_bytes=2000, backups=2)
    log_numbered(0, 200)
    assert sorted(p.name for p in path.parent.iterdir()) == ["ghost.jsonl", "ghost.jsonl.1", "ghost.jsonl.2"]
    kept: list[int] = []
    for p in (path.with_name("ghost.jsonl.2"), path.with_name("ghost.jsonl.1"), path):  # oldest first
        assert 0 < p.stat().st_size <= 2000, p
        kept += [r["n"] for r in records(p)]  # every line whole and valid JSON
    assert kept == list(range(kept[0], 200))  # the newest events, consecutive, none lost across a rotation
    assert kept[0] > 0  # the oldest ones left with the third backup


def test_zero_backups_discards_the_old_log_and_zero_max_bytes_never_rotates(tmp_path: Path) -> None:
    path = tmp_path / "ghost.jsonl"
    configure_logging(path, console=None, max_bytes=1000, backups=0)
    log_numbered(0, 50)
    assert [p.name for p in tmp_path.iterdir()] == ["ghost.jsonl"]
    assert path.stat().st_size <= 1000 and records(path)[-1]["n"] == 49
    unlimited = tmp_path / "unlimited.jsonl"
    configure_logging(unlimited, console=None, max_bytes=0, backups=3)
    log_numbered(0, 200)
    assert len(records(unlimited)) == 200 and not unlimited.with_name("unlimited.jsonl.1").exists()


def test_a_line_longer_than_max_bytes_gets_its_own_file(tmp_path: Path) -> None:
    path = tmp_path / "ghost.jsonl"
    configure_logging(path, console=None, max_bytes=300, backups=5)
    get_logger().info("big", blob="y" * 1000)
    get_logger().info("small")
    get_logger().info("big", blob="z" * 1000)
    assert [r["event"] for r in records(path)] == ["big"]
    assert [r["event"] for r in records(path.with_name("ghost.jsonl.1"))] == ["small"]
    assert [r["event"] for r in records(path.with_name("ghost.jsonl.2"))] == ["big"]


def test_reopens_after_an_external_logrotate_moves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ghost.jsonl"
    configure_logging(path, console=None)
    get_logger().info("before")
    os.rename(path, tmp_path / "ghost.jsonl.1")  # what logrotate (without copytruncate) does
    get_logger().info("after")
    assert [r["event"] for r in records(tmp_path / "ghost.jsonl.1")] == ["before"]
    assert [r["event"] for r in records(path)] == ["after"]


def test_reopens_after_the_file_is_deleted_even_with_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "ghost.jsonl"
    configure_logging(path, console=None)
    get_logger().info("first")
    path.unlink()
    path.parent.rmdir()
    get_logger().info("second")
    assert [r["event"] for r in records(path)] == ["second"]


def test_a_second_writer_follows_the_rotation_of_the_first(tmp_path: Path) -> None:
    """The daemon rotates; a CLI tool (`prm train`) writing the same file reopens instead of writing to .1."""
    path = tmp_path / "ghost.jsonl"
    daemon = LogSink(path, None, "json", max_bytes=1000, backups=3)
    tool = LogSink(path, None, "json")  # no max_bytes: never rotates, only follows
    try:
        for n in range(30):
            for sink, who in ((daemon, "daemon"), (tool, "tool")):
                with pytest.raises(structlog.DropEvent):
                    sink(None, "info", {"event": "tick", "who": who, "n": n})
        files = [path.with_name(f"ghost.jsonl.{i}") for i in (3, 2, 1)] + [path]
        seen = [(r["who"], r["n"]) for f in files if f.exists() for r in records(f)]
        assert seen[-2:] == [("daemon", 29), ("tool", 29)]  # the tool's last write went to the current file
        assert path.stat().st_size <= 1000
    finally:
        daemon.close()
        tool.close()


async def test_the_daemon_rotates_its_log_with_the_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, log_max_bytes=4096, log_backups=1)
    async with app_client(settings, ScriptedBackend(model="m")) as client:
        for _ in range(30):
            assert (await client.get("/v1/models")).status_code == 200
            get_logger("test").info("filler", padding="p" * 200)
    logs = tmp_path / "home" / "system" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["ghost.jsonl", "ghost.jsonl.1"]
    assert (logs / "ghost.jsonl").stat().st_size <= 4096
    assert records(logs / "ghost.jsonl")[-1]["event"] == "shutdown_complete"
