"""The status page's JSON endpoints and the page itself, over loopback HTTP against a seeded home: what each
returns, paging and search, the actions and who may send them, auth, and the page's headers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.memory.store import SkillMemory
from ghost_agent.server.app import build_app
from ghost_agent.settings import Settings
from tests.conftest import daemon_on_port, make_settings
from tests.server.console_home import HOSTILE, Seeded, seed, seed_evals, seed_learning

KEY = "a-long-enough-api-key-1234"


@pytest.fixture
def home(tmp_path: Path) -> tuple[Settings, Seeded]:
    settings = make_settings(tmp_path, watchdog=False)
    return settings, seed(settings)


@pytest.fixture
def url(home: tuple[Settings, Seeded]) -> Iterator[str]:
    backend = ScriptedBackend(model="scripted-model", replies=[ScriptedReply(content="Hello there, friend.")])
    with daemon_on_port(home[0], backend) as base:
        yield base


def get(url: str, path: str, **kw: Any) -> Any:
    response = httpx.get(url + path, timeout=10, **kw)
    assert response.status_code == 200, response.text
    return response.json()


def test_now_reports_backend_sandbox_rates_models_and_counts(url: str) -> None:
    httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
               timeout=10).raise_for_status()
    now = get(url, "/v1/ghost/now")
    assert now["backend"]["kind"] and now["uptime_s"] >= 0 and now["in_flight"] == 0
    assert set(now["sandbox"]) >= {"backend", "isolated", "warnings", "error"}
    assert now["activity"]["requests_per_min"] > 0 and len(now["activity"]["replies"]) == 1
    assert set(now["models"]) == {"prm", "router"}


def test_counts_come_from_the_cache_and_fill_in_the_background(url: str) -> None:
    async def poll() -> Any:
        for _ in range(200):
            counts = get(url, "/v1/ghost/now")["counts"]
            if counts is not None:
                return counts
            await asyncio.sleep(0.05)
        raise AssertionError("counts never computed")

    counts = asyncio.run(poll())
    assert counts["lessons"]["by_status"] == {"active": 2} and counts["trajectories"]["total"] == 12


def test_turns_are_listed_newest_first_in_pages_and_searchable(url: str, home: tuple[Settings, Seeded]) -> None:
    seeded = home[1]
    first = get(url, "/v1/ghost/turns?limit=5")
    assert [t["id"] for t in first["items"]] == seeded.turn_ids[::-1][:5] and first["next"]
    second = get(url, "/v1/ghost/turns", params={"limit": 5, "before": first["next"]})
    assert [t["id"] for t in second["items"]] == seeded.turn_ids[::-1][5:10]
    newest = first["items"][0]
    assert newest["tools"] == ["python", "read_file"] and newest["strategy"] == "answer-first"
    assert newest["llm_calls"] == 2 and newest["latency_ms"] == pytest.approx(900.8 + 11, abs=0.2)
    found = get(url, "/v1/ghost/turns", params={"q": "NUMBER 3:"})["items"]
    assert [t["id"] for t in found] == [seeded.turn_ids[3]]
    assert get(url, "/v1/ghost/turns", params={"outcome": "passed"})["items"][0]["outcome"] == "passed"
    assert not any(k.startswith("_") for k in newest)


def test_one_turn_opens_as_a_tree_of_timed_steps(url: str, home: tuple[Settings, Seeded]) -> None:
    detail = get(url, f"/v1/ghost/turns/{home[1].turn_ids[-1]}")
    stages = {n["name"]: n for n in detail["tree"]["children"]}
    assert set(stages) == {"memory", "router", "respond"}
    (strategy,) = stages["respond"]["children"]
    names = [c["name"] for c in strategy["children"]]
    assert names[:4] == ["model: draft", "model: program", "0. python", "1. read_file"] and "computed answer" in names
    assert strategy["children"][0]["ms"] == 600.0 and strategy["children"][0]["detail"] == "40 in, 8 out"
    assert strategy["children"][3]["ok"] is False and strategy["detail"] == "2 model calls"
    missing = httpx.get(url + "/v1/ghost/turns/nope", timeout=10)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_a_new_turn_appears_without_a_restart(url: str) -> None:
    before = get(url, "/v1/ghost/turns?limit=1")["items"][0]["id"]
    response = httpx.post(url + "/v1/chat/completions", timeout=10,
                          json={"model": "m", "messages": [{"role": "user", "content": "brand new question"}]})
    latest = get(url, "/v1/ghost/turns?limit=1")["items"][0]
    assert latest["id"] == response.headers["x-ghost-trajectory-id"] != before
    assert latest["request"] == "brand new question"


def test_lessons_carry_their_provenance_and_actions_round_trip(url: str, home: tuple[Settings, Seeded]) -> None:
    settings, seeded = home
    page = get(url, "/v1/ghost/lessons")
    by_id = {lesson["id"]: lesson for lesson in page["items"]}
    assert by_id[seeded.lesson_id]["source"] == "preference"
    assert by_id[seeded.lesson_id]["source_trajectory_id"] == seeded.turn_ids[0]
    assert page["counts"] == {"active": 2}
    pinned = httpx.post(url + f"/v1/ghost/lessons/{seeded.lesson_id}/pin", timeout=10).json()
    assert pinned["pinned"] is True and pinned["status"] == "pinned"
    assert [x["id"] for x in get(url, "/v1/ghost/lessons?status=pinned")["items"]] == [seeded.lesson_id]
    retracted = httpx.post(url + f"/v1/ghost/lessons/{seeded.hostile_lesson_id}/retract", timeout=10).json()
    assert retracted["status"] == "retracted"
    with SkillMemory(GhostHome(settings.home).lessons_db) as memory:
        assert memory.get(seeded.lesson_id).pinned  # type: ignore[union-attr]
    assert httpx.post(url + "/v1/ghost/lessons/nope/pin", timeout=10).status_code == 404
    assert httpx.post(url + f"/v1/ghost/lessons/{seeded.lesson_id}/delete", timeout=10).status_code == 400


def test_skill_candidates_are_promoted_into_a_pinned_lesson(url: str, home: tuple[Settings, Seeded]) -> None:
    candidate = get(url, "/v1/ghost/skills")["items"][0]
    assert candidate["sequence"] and candidate["support"] == 3
    promoted = httpx.post(url + f"/v1/ghost/skills/{home[1].candidate_id}/promote", timeout=10).json()
    assert promoted["status"] == "promoted" and promoted["lesson_id"]
    assert get(url, "/v1/ghost/lessons?status=pinned")["items"][0]["id"] == promoted["lesson_id"]


def test_watchdog_runs_come_back_in_order_with_the_phase_table(url: str) -> None:
    runs = get(url, "/v1/ghost/watchdog/runs")
    assert [r["status"] for r in runs["items"]] == ["ok", "skipped", "failed", "ok", "yielded"]
    assert runs["phases"] and all("skip_reason" in p for p in runs["phases"])
    assert [r["phase"] for r in get(url, "/v1/ghost/watchdog/runs?phase=reflection")["items"]] == ["reflection"] * 2


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},                       # a foreign page (refused before anything runs)
    {"origin": "http://localhost:3000"},                     # another local page: same host name, other origin
    {"sec-fetch-site": "cross-site"},                        # a browser saying so, with no Origin
])
def test_actions_from_another_page_are_refused(url: str, home: tuple[Settings, Seeded],
                                               headers: dict[str, str]) -> None:
    response = httpx.post(url + f"/v1/ghost/lessons/{home[1].lesson_id}/retract", headers=headers, timeout=10)
    assert response.status_code == 403 and response.json()["error"]["code"] == "origin_not_allowed"
    assert get(url, "/v1/ghost/lessons?status=active")["counts"] == {"active": 2}


def test_the_daemons_own_page_may_act(url: str, home: tuple[Settings, Seeded]) -> None:
    origin = url.rstrip("/")
    response = httpx.post(url + f"/v1/ghost/lessons/{home[1].lesson_id}/archive", timeout=10,
                          headers={"origin": origin, "sec-fetch-site": "same-origin"})
    assert response.status_code == 200 and response.json()["status"] == "archived"


def test_the_page_is_served_with_a_strict_policy_and_lists_no_data(url: str) -> None:
    response = httpx.get(url + "/ui", timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert HOSTILE not in response.text and "/ui/app.js" in response.text
    for asset in ("/ui/app.js", "/ui/app.css"):
        assert httpx.get(url + asset, timeout=10).status_code == 200
    assert "/ui" not in get(url, "/openapi.json")["paths"]
    assert {"/v1/ghost/now", "/v1/ghost/turns", "/v1/ghost/lessons"} <= set(get(url, "/openapi.json")["paths"])


def test_with_an_api_key_the_data_needs_it_and_the_shell_does_not(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, watchdog=False, api_key=KEY)
    seed(settings)
    with daemon_on_port(settings, ScriptedBackend(model="m")) as base:
        assert httpx.get(base + "/ui", timeout=10).status_code == 200
        for path in ("/v1/ghost/now", "/v1/ghost/turns", "/v1/ghost/lessons", "/v1/ghost/watchdog/runs"):
            assert httpx.get(base + path, timeout=10).status_code == 401
        assert httpx.get(base + "/v1/ghost/now", headers={"authorization": f"Bearer {KEY}"}, timeout=10).is_success


async def test_without_a_key_the_page_is_refused_to_another_machine(tmp_path: Path) -> None:
    app = build_app(make_settings(tmp_path, watchdog=False), ScriptedBackend(model="m"))
    async with app.router.lifespan_context(app):
        for client, expected in ((("10.1.2.3", 5000), 403), (("127.0.0.1", 5000), 200)):
            transport = httpx.ASGITransport(app=app, client=client)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
                response = await http.get("/ui")
            assert response.status_code == expected
            if expected == 403:
                assert response.json()["error"]["code"] == "ui_needs_api_key"


def test_selfplay_and_models_report_pass_rates_retrains_and_router_days(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, watchdog=False)
    seed(settings)
    seed_learning(settings)
    with daemon_on_port(settings, ScriptedBackend(model="m")) as base:
        play = get(base, "/v1/ghost/selfplay")
        models = get(base, "/v1/ghost/models")
    assert play["history"]["algo"] == {"2026-11-20": {"passed": 1, "failed": 1}, "2026-11-21": {"passed": 2}}
    assert play["history"]["text"] == {"2026-11-20": {"failed": 2}, "2026-11-21": {"passed": 1, "failed": 1}}
    assert play["clusters"] and {"cluster", "attempts", "weight"} <= set(play["clusters"][0])
    assert [r["gate"]["candidate"]["auc"] for r in models["retrains"]] == [0.61, 0.74]
    assert models["router_days"]["2026-11-20"] == {"fast": 11, "agent": 1}
    assert set(models["live"]) == {"prm", "router"}


def test_evals_list_every_run_and_the_frozen_baselines(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, watchdog=False)
    seed_evals(settings)
    with daemon_on_port(settings, ScriptedBackend(model="m")) as base:
        evals = get(base, "/v1/ghost/evals")
    assert [(r["suite"], r["pass_rate"]) for r in evals["runs"]] == [("default", 0.5), ("default", 0.625),
                                                                    ("everyday", 0.9)]
    assert evals["baselines"] == [{"file": "broken.json", "error": "unreadable"},
                                  {"file": "default.json", "suite": "default", "pass_rate": 0.5, "passed": 4,
                                   "total": 8, "clusters": {}, "started_at": None, "runner": "http", "model": None}]
