"""At most `max_count` session workspaces: one more evicts the least recently used idle one."""

from __future__ import annotations

import os
from pathlib import Path

from ghost_agent.llm.scripted import ScriptedBackend
from ghost_agent.sandbox.workspace import EVICTED_PREFIX, Workspaces
from tests.conftest import app_client, make_settings, wait_until


def names(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def age(ws: Workspaces, session: str, seconds_ago: float) -> None:
    path = ws.root / session
    t = path.stat().st_mtime - seconds_ago
    os.utime(path, (t, t))


def test_creating_one_more_evicts_the_least_recently_used(tmp_path: Path) -> None:
    ws = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=0, max_count=3)
    for i, session in enumerate(["a", "b", "c"]):
        (ws.path_for(session) / "data.txt").write_text(session)
        age(ws, session, 100 - i)  # a is the oldest, c the newest
    ws.path_for("a")  # used again: now the newest
    ws.path_for("d")
    ws.wait_purged(5)
    assert names(ws.root) == ["a", "c", "d"]  # b was the least recently used
    assert (ws.root / "a" / "data.txt").read_text() == "a"


def test_active_workspaces_are_never_evicted(tmp_path: Path) -> None:
    ws = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=0, max_count=1)
    with ws.active("busy"):
        age(ws, "busy", 1000)
        ws.path_for("new")
        ws.wait_purged(5)
        assert names(ws.root) == ["busy", "new"]  # over the cap rather than pull a running turn's files
    ws.path_for("newer")
    ws.wait_purged(5)
    assert names(ws.root) == ["newer"]


def test_reusing_a_workspace_evicts_nothing_and_no_cap_means_no_eviction(tmp_path: Path) -> None:
    capped = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=0, max_count=2)
    for session in ["a", "b", "a", "b", "a"]:
        capped.path_for(session)
    assert names(capped.root) == ["a", "b"]
    free = Workspaces(tmp_path / "f", quota_mb=1, max_age_days=0)
    for i in range(20):
        free.path_for(f"s{i}")
    assert len(names(free.root)) == 20


def test_cleanup_removes_an_eviction_left_half_done(tmp_path: Path) -> None:
    ws = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=7, max_count=2)
    leftover = ws.root / f"{EVICTED_PREFIX}old-1234"
    (leftover / "sub").mkdir(parents=True)
    (leftover / "sub" / "f").write_text("x")
    ws.path_for("a")
    assert names(ws.root) == sorted([leftover.name, "a"])  # not a workspace: it does not count
    ws.cleanup()
    assert names(ws.root) == ["a"]


def test_evict_over_cap_trims_a_root_that_is_already_over(tmp_path: Path) -> None:
    ws = Workspaces(tmp_path / "w", quota_mb=1, max_age_days=0)
    for i in range(5):
        ws.path_for(f"s{i}")
        age(ws, f"s{i}", 100 - i)
    lowered = Workspaces(ws.root, quota_mb=1, max_age_days=0, max_count=2)  # the cap was lowered
    assert sorted(lowered.evict_over_cap()) == ["s0", "s1", "s2"]
    lowered.wait_purged(5)
    assert names(ws.root) == ["s3", "s4"]


async def test_the_daemon_caps_workspaces_of_invented_sessions(tmp_path: Path, scripted: ScriptedBackend) -> None:
    settings = make_settings(tmp_path, router="always-agent", agent_strategy="action-loop", mcts=False,
                             verifier=False, workspace_max_count=2)
    root = settings.home / "workspace"
    async with app_client(settings, scripted) as client:
        for i in range(4):
            response = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "hello"}]},
                headers={"x-ghost-session-id": f"invented-{i}"},
            )
            assert response.status_code == 200, response.text
        await wait_until(lambda: not [n for n in os.listdir(root) if n.startswith(".")])
        assert names(root) == ["invented-2", "invented-3"]
