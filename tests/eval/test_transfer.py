"""The correction-transfer driver against a real daemon on a loopback port, in front of a scripted model on
the fake upstream (also loopback) that follows a convention only when a lesson in its prompt states it.

The driver must see: every probe failing before learning, the correction followed, the lesson stored, the
family's probes passing after learning (shown the lesson), the controls unchanged (and not shown it) — and
report a model that ignores lessons, a critique without a lesson, a correction the daemon does not take and a
failing teaching turn for what they are, without waiting out the lesson timeout.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ghost_agent.cli.eval import run_eval_cli
from ghost_agent.eval.suites.transfer import FAMILIES, families
from ghost_agent.eval.transfer import HomeStore, TransferClient, control_probes, run_transfer
from ghost_agent.eval.transfer_report import (
    LESSON_MISSED,
    LESSON_NONE,
    LESSON_STORED,
    LESSON_TEACH_FAILED,
    FamilyRun,
    LessonWait,
    TransferResult,
    TurnRun,
)
from ghost_agent.settings import Settings
from tests.conftest import daemon_on_port, make_settings
from tests.eval.transfer_fake import ConventionModel, convention_upstream

TWO = families(["dates", "money"])


@pytest.fixture
def upstream() -> Iterator[tuple[str, ConventionModel]]:
    with convention_upstream(families=FAMILIES) as pair:
        yield pair


def settings_for(tmp_path: Path, url: str) -> Settings:
    return make_settings(tmp_path, upstream_url=url, router="always-fast", watchdog=False)


def run(url: str, settings: Settings | None, fams: Any = TWO, *, store: bool = True, **options: Any) -> TransferResult:
    async def go() -> TransferResult:
        client = TransferClient(url, timeout_s=30)
        try:
            home = HomeStore(settings.home) if (store and settings is not None) else None
            options.setdefault("lesson_timeout_s", 20.0)
            options.setdefault("poll_s", 0.05)
            options.setdefault("correction_delay_s", 0.2)
            return await run_transfer(client, fams, pool=options.pop("pool", fams), store=home, **options)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_a_lesson_learned_from_one_correction_transfers_to_new_requests_of_its_kind(
    tmp_path: Path, upstream: tuple[str, ConventionModel]
) -> None:
    url, model = upstream
    settings = settings_for(tmp_path, url)
    lines: list[str] = []
    with daemon_on_port(settings) as daemon:
        result = run(daemon, settings, probes_per_family=2, controls_per_family=1, progress=lines.append)

    totals = result.totals()
    assert (str(totals["before"]), str(totals["after"])) == ("0/4", "4/4")
    assert (str(totals["controls_before"]), str(totals["controls_after"])) == ("0/2", "0/2")
    assert str(totals["lessons_stored"]) == "2/2" and str(totals["told"]) == "2/2"
    assert (str(totals["shown"]), str(totals["controls_shown"])) == ("4/4", "0/2")
    for family in result.families:
        assert family.lesson.status == LESSON_STORED and family.lesson.lesson_id
        assert family.lesson.seconds < 10
        assert not family.teach.passed and family.correction is not None and family.correction.passed
        assert {p.session for p in family.probes + family.controls} == {family.session}
        assert all(model.asked_with_notes(p.prompt) for p in family.probes)
        assert all(c.lessons_shown == 0 for c in family.controls)
        assert [c.family for c in family.controls] == [f.id for f in TWO if f.id != family.family]
    # before learning: each probe in a fresh session of its own, never shown a lesson
    sessions = [r.session for r in result.before.values()]
    assert len(set(sessions)) == len(sessions) == 4
    assert all(r.lessons_shown == 0 and not r.passed for r in result.before.values())
    assert model.critiques == 0  # each correction states its convention: the lesson is the user's words
    assert any("[lesson] dates" in line and "stored" in line for line in lines)

    doc = result.to_dict()
    assert doc["schema"] == "ghost.eval.transfer_result.v1"
    assert doc["summary"]["after"] == {"passed": 4, "total": 4, "rate": 1.0} and doc["summary"]["target_met"]
    assert doc["metadata"]["home_store"] == "used" and doc["metadata"]["backend"]
    assert TransferResult.from_dict(json.loads(json.dumps(doc))).to_dict() == doc
    table = result.render_table()
    assert "dates" in table and "0/2" in table and "2/2" in table and "target after >= 80%: met" in table


def test_a_model_that_ignores_its_lessons_shows_no_transfer(tmp_path: Path) -> None:
    with convention_upstream(learns=False) as (url, model):
        settings = settings_for(tmp_path, url)
        with daemon_on_port(settings) as daemon:
            result = run(daemon, settings, families(["dates"]), probes_per_family=3, controls_per_family=0)
    [family] = result.families
    assert family.lesson.status == LESSON_STORED
    rates = result.family_rates(family)
    assert (str(rates["before"]), str(rates["after"]), str(rates["shown"])) == ("0/3", "0/3", "3/3")
    assert rates["told"] is True  # told directly it complies; it just does not use the lesson
    assert "not met" in result.render_table()


def test_watching_the_status_route_alone_still_sees_the_lesson(
    tmp_path: Path, upstream: tuple[str, ConventionModel]
) -> None:
    url, _ = upstream
    settings = settings_for(tmp_path, url)
    with daemon_on_port(settings) as daemon:
        result = run(daemon, settings, families(["money"]), store=False, probes_per_family=2, controls_per_family=0)
    [family] = result.families
    assert family.lesson.status == LESSON_STORED and family.lesson.detail == "seen in the lesson count"
    assert str(result.family_rates(family)["after"]) == "2/2"
    assert result.totals()["shown"] is None and family.probes[0].lessons_shown is None
    assert result.metadata["home_store"] == "not given"


def test_a_home_that_is_not_the_daemons_is_not_trusted(tmp_path: Path, upstream: tuple[str, ConventionModel]) -> None:
    url, _ = upstream
    settings = settings_for(tmp_path, url)
    elsewhere = make_settings(tmp_path / "other")
    with daemon_on_port(settings) as daemon:
        result = run(daemon, elsewhere, families(["money"]), probes_per_family=1, controls_per_family=0)
    assert result.families[0].lesson.status == LESSON_STORED
    assert result.metadata["home_store"].startswith("not the daemon's home")


def test_a_critique_without_a_lesson_ends_the_wait_at_once(tmp_path: Path) -> None:
    # a correction that states no preference (only a rephrase): the critique is the only source of a lesson
    bare = replace(FAMILIES[0], correction="No, that's not it. When is Christmas Day in 2025? Just the date, please.")
    with convention_upstream(families=[bare], critique="none") as (url, _):
        settings = settings_for(tmp_path, url)
        with daemon_on_port(settings) as daemon:
            t0 = time.perf_counter()
            result = run(daemon, settings, [bare], probes_per_family=1, controls_per_family=0,
                         lesson_timeout_s=60.0)
    lesson = result.families[0].lesson
    assert lesson.status == LESSON_NONE and "nothing to learn" in lesson.detail
    assert time.perf_counter() - t0 < 30 and str(result.totals()["after"]) == "0/1"


def test_a_message_the_daemon_does_not_take_as_a_correction_is_reported_as_missed(tmp_path: Path) -> None:
    polite = replace(FAMILIES[0], correction="Thanks, that's great. What's the date of Christmas Day 2025?")
    with convention_upstream(families=[polite]) as (url, model):
        settings = settings_for(tmp_path, url)
        with daemon_on_port(settings) as daemon:
            result = run(daemon, settings, [polite], probes_per_family=1, controls_per_family=0,
                         lesson_timeout_s=60.0)
    lesson = result.families[0].lesson
    assert lesson.status == LESSON_MISSED and lesson.seconds < 5
    assert model.critiques == 0


def test_a_failing_teaching_turn_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    dates, money = TWO
    with convention_upstream(fail={dates.teach.prompt}) as (url, _):
        settings = settings_for(tmp_path, url)
        with daemon_on_port(settings) as daemon:
            result = run(daemon, settings, probes_per_family=1, controls_per_family=0)
    first, second = result.families
    assert first.lesson.status == LESSON_TEACH_FAILED and first.correction is None and first.teach.error
    assert second.lesson.status == LESSON_STORED and str(result.family_rates(second)["after"]) == "1/1"


def test_every_family_of_the_suite_transfers_through_the_real_retrieval(
    tmp_path: Path, upstream: tuple[str, ConventionModel]
) -> None:
    """A lesson worded like its correction is found for every probe of its family (the probes name the kind
    of request, as a user asking for more of the same does), and the controls' results do not move. (Whether a
    control is *shown* a lesson is the memory's relevance floor at work, reported but not pinned here: the
    python lesson's "list of numbers" meets "List the four planets" at one word in five.)"""
    url, _ = upstream
    settings = settings_for(tmp_path, url)
    with daemon_on_port(settings) as daemon:
        result = run(daemon, settings, FAMILIES, pool=FAMILIES, controls_per_family=2)
    totals = result.totals()
    assert totals["before"].passed == 0 and totals["after"].passed == totals["after"].total == 40
    assert totals["controls_after"].passed == totals["controls_before"].passed == 0
    assert totals["controls_shown"] is not None and totals["controls_shown"].total == 20


def test_controls_come_from_other_families_and_are_spread_over_the_suite() -> None:
    for family in FAMILIES:
        picked = control_probes(family, FAMILIES, 3)
        owners = [p.id.split("/")[0] for p in picked]
        assert len(set(owners)) == 3 and family.id not in owners
    assert control_probes(FAMILIES[0], FAMILIES[:1], 2) == []
    assert [p.id.split("/")[0] for p in control_probes(FAMILIES[0], FAMILIES[:2], 5)] == [FAMILIES[1].id]


# ---- the command line ---------------------------------------------------------------------------------------

def cli(*argv: str) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = run_eval_cli(["transfer", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_cli_runs_the_suite_and_prints_a_table_or_json(tmp_path: Path, upstream: tuple[str, ConventionModel]) -> None:
    url, _ = upstream
    settings = settings_for(tmp_path, url)
    output = tmp_path / "transfer.json"
    with daemon_on_port(settings) as daemon:
        common = ["--url", daemon, "--home", str(settings.home), "--families", "time_24h", "--probes", "2",
                  "--controls", "1", "--poll", "0.05", "--lesson-timeout", "20"]
        code, out, err = cli(*common, "--output", str(output))
        assert code == 0, err
        assert "time_24h" in out and "taught families: before 0/2" in out and str(output) in out
        assert "[lesson] time_24h" in err and "PASS" in err
        code, out, err = cli(*common, "--output", str(output), "--json", "--no-progress")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc == json.loads(output.read_text())
    assert doc["summary"]["after"]["passed"] == 2 and doc["families"][0]["lesson"]["status"] == "stored"
    assert doc["metadata"]["families"] == ["time_24h"] and doc["metadata"]["probes_per_family"] == 2


def test_cli_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path / "home")]
    code, _, err = cli("--url", "http://192.0.2.1:8000", *home)
    assert code == 2 and "not loopback" in err
    code, _, err = cli("--families", "nope", *home)
    assert code == 2 and "unknown transfer family nope" in err
    code, _, err = cli("--url", "http://127.0.0.1:9", "--timeout", "2", *home)
    assert code == 2 and "cannot reach the daemon" in err
    code, out, _ = cli("--list", "--families", "dates")
    assert code == 0 and "dates/new-years-eve" in out and "money" not in out


def test_probes_whose_answer_got_worse_after_learning_are_reported() -> None:
    def turn(probe: str, phase: str, *, passed: bool, content: bool) -> TurnRun:
        return TurnRun(probe_id=probe, family="dates", role="probe", phase=phase, session="s", prompt="?",
                       passed=passed, content=content, content_reason="" if content else "the date is not stated")

    before = {"dates/a": turn("dates/a", "before", passed=False, content=True),
              "dates/b": turn("dates/b", "before", passed=False, content=True),
              "dates/c": turn("dates/c", "before", passed=False, content=False)}
    run = FamilyRun(family="dates", convention="dd/mm", session="s",
                    teach=turn("dates/t", "learn", passed=False, content=True), correction=None,
                    lesson=LessonWait(status=LESSON_STORED),
                    probes=[turn("dates/a", "after", passed=True, content=True),
                            turn("dates/b", "after", passed=True, content=False),
                            turn("dates/c", "after", passed=False, content=False)])
    result = TransferResult(before=before, families=[run])
    assert result.content_worse() == ["dates/b"]
    summary = result.to_dict()["summary"]
    assert summary["content_worse"] == ["dates/b"] and summary["content_before"]["passed"] == 2
    assert "worse after learning: 1 (target 0): dates/b" in result.render_table()
    again = TransferResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.content_worse() == ["dates/b"]
