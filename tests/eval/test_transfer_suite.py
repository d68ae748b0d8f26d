"""The correction-transfer suite's data: enough families and probes, unique ids, every example reply graded as
intended, and every correction one the daemon's correction check takes as a correction (a family whose
correction is missed could never be taught)."""

from __future__ import annotations

import pytest

from ghost_agent.eval.conventions import CHECKS, get_check
from ghost_agent.eval.suites.transfer import FAMILIES, Family, families, family_ids
from ghost_agent.feedback.correction.detector import classify_user_correction


def test_at_least_eight_families_each_with_three_probes_and_unique_ids() -> None:
    assert len(FAMILIES) >= 8
    ids = [p.id for f in FAMILIES for p in (f.teach, *f.probes)]
    assert len(ids) == len(set(ids))
    prompts = [p.prompt for f in FAMILIES for p in (f.teach, *f.probes)]
    assert len(prompts) == len(set(prompts))
    for family in FAMILIES:
        assert len(family.probes) >= 3 and family.check in CHECKS
        assert all(p.id.startswith(family.id + "/") for p in (family.teach, *family.probes))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_every_check_accepts_the_convention_and_rejects_the_default(family: Family) -> None:
    check = get_check(family.check)
    for probe in (family.teach, *family.probes):
        good, bad = family.example(probe, good=True), family.example(probe, good=False)
        assert check(good, probe.expected).passed, (probe.id, good, check(good, probe.expected).reason)
        assert not check(bad, probe.expected).passed, (probe.id, bad)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_every_correction_reads_as_a_correction(family: Family) -> None:
    default_reply = family.example(family.teach, good=False)
    verdict = classify_user_correction(family.teach.prompt, family.correction, default_reply)
    assert verdict.is_correction, (family.id, verdict.reason)


def test_corrections_are_varied_and_state_the_convention() -> None:
    openings = {f.correction.split()[0].strip(",.—").lower() for f in FAMILIES}
    assert len(openings) >= 5  # "no", "nope", "that's", "not", "wrong", ...


def test_selecting_families() -> None:
    assert [f.id for f in families(["money", "dates"])] == ["dates", "money"]  # suite order
    assert families(None) == list(FAMILIES) and family_ids()[0] == "dates"
    with pytest.raises(ValueError, match="unknown transfer family nope"):
        families(["nope"])
    assert FAMILIES[0].to_dict()["probes"][0]["id"] == "dates/new-years-eve"
