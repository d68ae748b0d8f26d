"""The compressed-time learning demo (`scripts/demo_learning.py`) end to end against the scripted model on the fake
upstream (loopback): the daemon it starts takes the correction, stores the lesson, runs the retrain phase while
idle, and shows the lesson to the next similar turn; the log it follows shows each step."""

from __future__ import annotations

import io
from pathlib import Path

from scripts.demo_learning import main

from tests.eval.transfer_fake import convention_upstream


def test_the_demo_shows_correction_lesson_retrain_and_the_lesson_used(tmp_path: Path) -> None:
    out = io.StringIO()
    with convention_upstream() as (url, model):
        code = main(["--upstream-url", url, "--idle-time-scale", "0.002", "--home", str(tmp_path / "home"),
                     "--family", "time_24h", "--startup-timeout", "60", "--lesson-timeout", "20",
                     "--retrain-timeout", "30", "--timeout", "30"], out=out)
    text = out.getvalue()
    assert code == 0, text
    assert model.critiques == 0  # the correction states its convention: the lesson is the user's words, no critique
    for marker in ("user_correction_promoted", "post_turn_reflection", "lesson_learned", "phase=retrain",
                   "lessons_shown", "retrain ran: ok", "the next similar turn was shown the lesson: yes",
                   "(follows the convention: yes)"):
        assert marker in text, marker
    assert "kind=idle_below_window" not in text  # the gating skips are left out
    story = [text.index(m) for m in ("== 1.", "== 2.", "== 3.", "lesson ", "== 4.", "retrain ran", "== 5.")]
    assert story == sorted(story)
    assert (tmp_path / "home" / "demo-daemon.out").exists()
