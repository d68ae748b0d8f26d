"""How the transfer run sees a daemon: the status counts read leniently, loopback only, and a home that is not
(yet) a daemon's home read without creating anything in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_agent.eval.transfer_client import Counts, HomeStore, TransferClient


def test_counts_read_leniently_from_a_status_document() -> None:
    doc = {"counts": {"trajectories": {"corrections": 3, "by_source": {"chat": 9, "reflection": 2}},
                      "lessons": {"total": 5, "by_status": {"active": 4, "retracted": 1}}}}
    assert Counts.from_status(doc) == Counts(corrections=3, reflections=2, lessons=5)
    assert Counts.from_status({}) == Counts(0, 0, 0)
    assert Counts.from_status({"counts": {"trajectories": None, "lessons": "x"}}) == Counts(0, 0, 0)


def test_the_client_talks_to_loopback_only() -> None:
    with pytest.raises(ValueError, match="not loopback"):
        TransferClient("http://192.0.2.1:8000")
    with pytest.raises(ValueError, match="positive"):
        TransferClient("http://127.0.0.1:8000", timeout_s=0)


def test_an_empty_home_reads_as_nothing_and_stays_empty(tmp_path: Path) -> None:
    store = HomeStore(tmp_path)
    assert not store.has_trajectory("abc") and not store.corrected("abc")
    assert store.lesson_from("abc") is None and store.shown_ids("abc") is None
    assert store.lessons_shown("abc") is None and store.no_lesson_reason("abc") == ""
    assert list(tmp_path.iterdir()) == []
