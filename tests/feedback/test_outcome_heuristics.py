"""The outcome heuristics: each signal below and at its threshold, combinations, and the conservative rules."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from ghost_agent.feedback import outcome_heuristics as oh
from ghost_agent.feedback.outcome_heuristics import (
    REPEATED_ERROR_THRESHOLD,
    SELECTOR_THRASH_THRESHOLD,
    apply_chat_outcome_heuristics,
    classify_chat_outcome,
    is_browser_tool,
    normalize_error,
)
from ghost_agent.trajectories.record import Outcome, Step, Trajectory


def traj(*steps: Step, final: str = "Done.", outcome: Outcome = Outcome.UNKNOWN) -> Trajectory:
    return Trajectory(user_request="fix the login page", steps=list(steps), final_response=final, outcome=outcome)


def click(i: int, selector: str, tool: str = "browser.click") -> Step:
    return Step(i=i, tool_name=tool, tool_args={"selector": selector})


def interact(i: int, *selectors: str) -> Step:
    actions = [{"action": "click", "selector": s} for s in selectors]
    return Step(i=i, tool_name="browser.interact", tool_args={"url": "http://localhost:8080", "actions": actions})


def failing(i: int, tool: str, error: str) -> Step:
    return Step(i=i, tool_name=tool, tool_args={"code": "print(x)"}, ok=False, error=error)


def healthy_turn() -> Trajectory:
    """Busy but fine: everything just below threshold, plus one ordinary error."""
    below = SELECTOR_THRASH_THRESHOLD - 1
    steps = [click(i, "#submit") for i in range(below)]
    steps += [
        failing(10 + i, "python", "NameError: name 'x' is not defined") for i in range(REPEATED_ERROR_THRESHOLD - 1)
    ]
    steps += [failing(20, "shell", "command not found: foo")]
    steps += [Step(i=30, tool_name="browser.extract_text", result_preview="Sequence complete, 3 actions ok")]
    return traj(*steps, final="The form now submits. I fixed the handler.")


# --- no-op on healthy turns ---------------------------------------------------------------------------------


def test_healthy_turn_fires_nothing_and_is_left_untouched() -> None:
    t = healthy_turn()
    before = t.to_dict()
    verdict = classify_chat_outcome(t)
    assert verdict.fired is False
    assert verdict.outcome is Outcome.UNKNOWN
    assert verdict.reason == ""
    assert verdict.promoted is False
    assert apply_chat_outcome_heuristics(t) is t
    assert t.to_dict() == before
    assert "heuristics" not in t.extra


def test_empty_turn_is_a_no_op() -> None:
    t = Trajectory()
    assert classify_chat_outcome(t).fired is False
    assert apply_chat_outcome_heuristics(t).outcome is Outcome.UNKNOWN


# --- signal 1: abort markers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "final",
    [
        "[ATTEMPT_ABORTED_CROSS_TURN_LOOP] I keep repeating myself.",
        "Partial answer...\n[ATTEMPT_ABORTED_THINKING_BUDGET]",
        "text [ATTEMPT_ABORTED_NGRAM_LOOP] more text",
    ],
)
def test_abort_marker_fires(final: str) -> None:
    verdict = classify_chat_outcome(traj(final=final))
    assert verdict.signal_names == ("abort_marker",)
    assert verdict.outcome is Outcome.FAILED


@pytest.mark.parametrize(
    "final",
    [
        "ATTEMPT_ABORTED_CROSS_TURN_LOOP without brackets",
        "[ATTEMPT_ABORTED] has no kind suffix",
        "[attempt_aborted_loop] wrong case",
        "The attempt was aborted by the user",
    ],
)
def test_abort_marker_lookalikes_do_not_fire(final: str) -> None:
    assert classify_chat_outcome(traj(final=final)).fired is False


def test_abort_marker_detail_lists_distinct_markers_and_counts_all() -> None:
    final = "[ATTEMPT_ABORTED_A] x [ATTEMPT_ABORTED_B] y [ATTEMPT_ABORTED_A]"
    (signal,) = classify_chat_outcome(traj(final=final)).signals
    assert signal.detail == "[ATTEMPT_ABORTED_A], [ATTEMPT_ABORTED_B]"
    assert signal.count == 3


# --- signal 2: selector thrash ------------------------------------------------------------------------------


def test_selector_thrash_threshold_constant() -> None:
    assert SELECTOR_THRASH_THRESHOLD == 4


@pytest.mark.parametrize("uses, fires", [(SELECTOR_THRASH_THRESHOLD - 1, False), (SELECTOR_THRASH_THRESHOLD, True)])
def test_selector_thrash_atomic_ops(uses: int, fires: bool) -> None:
    verdict = classify_chat_outcome(traj(*(click(i, "#login") for i in range(uses))))
    assert verdict.fired is fires
    if fires:
        assert verdict.signals[0].name == "selector_thrash"
        assert verdict.signals[0].detail == f"'#login' ×{uses}"


@pytest.mark.parametrize("uses, fires", [(SELECTOR_THRASH_THRESHOLD - 1, False), (SELECTOR_THRASH_THRESHOLD, True)])
def test_selector_thrash_counts_each_interact_sub_action(uses: int, fires: bool) -> None:
    assert classify_chat_outcome(traj(interact(0, *["button.ok"] * uses))).fired is fires


def test_selector_thrash_mixes_atomic_ops_and_nested_interact_calls() -> None:
    # The incident shape: the same click selector spread over several interact calls and a direct click.
    t = traj(
        interact(0, "#app .icon", "#other"),
        interact(1, "#app .icon"),
        interact(2, "#app .icon"),
        click(3, "#app .icon"),
    )
    (signal,) = classify_chat_outcome(t).signals
    assert signal.name == "selector_thrash"
    assert signal.count == 4


def test_selector_thrash_counts_only_the_same_selector() -> None:
    below = SELECTOR_THRASH_THRESHOLD - 1
    steps = [click(i, "#a") for i in range(below)] + [click(10 + i, "#b") for i in range(below)]
    assert classify_chat_outcome(traj(*steps)).fired is False


def test_selector_whitespace_is_normalized_but_case_is_not() -> None:
    assert classify_chat_outcome(traj(click(0, "#a"), click(1, " #a"), click(2, "#a "), click(3, "\t#a\n"))).fired
    assert not classify_chat_outcome(traj(click(0, "#A"), click(1, "#a"), click(2, "#a"), click(3, "#A"))).fired


def test_selectors_in_non_browser_tools_are_ignored() -> None:
    steps = [click(i, "#login", tool="python") for i in range(SELECTOR_THRASH_THRESHOLD + 2)]
    assert classify_chat_outcome(traj(*steps)).fired is False


@pytest.mark.parametrize(
    "name, browser",
    [
        ("browser", True),
        ("browser.click", True),
        ("browser_interact", True),
        ("Browser.Click", True),
        ("browsers", False),
        ("web_browser", False),
        ("python", False),
        (None, False),
        (42, False),
    ],
)
def test_browser_tool_names(name: Any, browser: bool) -> None:
    assert is_browser_tool(name) is browser


# --- signal 3: repeated identical tool errors ---------------------------------------------------------------


def test_repeated_error_threshold_constant() -> None:
    assert REPEATED_ERROR_THRESHOLD == 3


@pytest.mark.parametrize(
    "times, fires", [(1, False), (REPEATED_ERROR_THRESHOLD - 1, False), (REPEATED_ERROR_THRESHOLD, True)]
)
def test_repeated_tool_error_threshold(times: int, fires: bool) -> None:
    t = traj(*(failing(i, "python", "name x is not defined") for i in range(times)))
    assert classify_chat_outcome(t).fired is fires


def test_repeated_tool_error_reason_format() -> None:
    t = traj(*(failing(i, "python", "name x is not defined") for i in range(3)))
    apply_chat_outcome_heuristics(t)
    assert t.outcome is Outcome.FAILED
    assert t.failure_reason == "heuristic: repeated_tool_error (python: 'name x is not defined' ×3)"


def test_error_normalization_merges_textual_variants() -> None:
    t = traj(
        failing(0, "shell", "Error: File not found"),
        failing(1, "shell", "  file   NOT found "),
        failing(2, "shell", "ERROR:file not\nfound"),
    )
    (signal,) = classify_chat_outcome(t).signals
    assert signal.detail == "shell: 'file not found' ×3"


@pytest.mark.parametrize(
    "raw, key",
    [
        ("Error: boom", "boom"),
        ("error:   Boom  Again", "boom again"),
        ("  ERROR :x", "x"),
        ("ValueError: bad", "valueerror: bad"),  # only a leading bare "error:" is a prefix
        ("", ""),
    ],
)
def test_normalize_error(raw: str, key: str) -> None:
    assert normalize_error(raw) == key


def test_same_error_from_different_tools_is_not_merged() -> None:
    t = traj(failing(0, "python", "timeout"), failing(1, "python", "timeout"), failing(2, "shell", "timeout"))
    assert classify_chat_outcome(t).fired is False


def test_long_errors_are_clipped_in_the_reason() -> None:
    long_error = "x" * 1000
    t = traj(*(failing(i, "python", long_error) for i in range(3)))
    apply_chat_outcome_heuristics(t)
    assert t.failure_reason is not None
    assert len(t.failure_reason) < 200


# --- signal 4: sequence aborted -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preview, fires",
    [
        ("⚠ SEQUENCE ABORTED: goto_failed\n0/54 actions ran", True),
        ("results...\nSEQUENCE ABORTED", True),
        ("sequence aborted (page prose, not the banner)", False),
        ("SEQUENCE COMPLETE", False),
    ],
)
def test_sequence_aborted_marker(preview: str, fires: bool) -> None:
    t = traj(Step(i=7, tool_name="browser.interact", result_preview=preview))
    verdict = classify_chat_outcome(t)
    assert verdict.fired is fires
    if fires:
        assert verdict.signals[0].name == "sequence_aborted"
        assert verdict.signals[0].detail == "step 7"


# --- combinations -------------------------------------------------------------------------------------------


def test_all_four_signals_fire_together_in_a_stable_order() -> None:
    steps = [click(i, "#go") for i in range(4)]
    steps += [failing(10 + i, "python", "boom") for i in range(3)]
    steps += [Step(i=20, tool_name="browser.interact", result_preview="⚠ SEQUENCE ABORTED: goto_failed")]
    t = traj(*steps, final="[ATTEMPT_ABORTED_CROSS_TURN_LOOP]")
    verdict = classify_chat_outcome(t)
    assert verdict.signal_names == ("abort_marker", "selector_thrash", "repeated_tool_error", "sequence_aborted")
    assert verdict.reason.startswith("heuristic: abort_marker (")
    assert verdict.reason.count("; ") == 3


def test_two_below_threshold_signals_do_not_add_up() -> None:
    steps = [click(i, "#go") for i in range(SELECTOR_THRASH_THRESHOLD - 1)]
    steps += [failing(10 + i, "python", "boom") for i in range(REPEATED_ERROR_THRESHOLD - 1)]
    assert classify_chat_outcome(traj(*steps)).fired is False


# --- conservative: decided outcomes stand -------------------------------------------------------------------


@pytest.mark.parametrize("outcome", [Outcome.PASSED, Outcome.FAILED])
def test_decided_outcomes_are_never_overruled(outcome: Outcome) -> None:
    t = traj(*(failing(i, "python", "boom") for i in range(5)), final="[ATTEMPT_ABORTED_X]", outcome=outcome)
    t.failure_reason = "validator: exit 1" if outcome is Outcome.FAILED else None
    verdict = classify_chat_outcome(t)
    assert verdict.fired is True
    assert verdict.promoted is False
    assert verdict.outcome is outcome
    apply_chat_outcome_heuristics(t)
    assert t.outcome is outcome
    assert t.failure_reason == ("validator: exit 1" if outcome is Outcome.FAILED else None)
    assert t.extra["heuristics"]["promoted"] is False


def test_outcome_given_as_a_string_is_understood() -> None:
    t = traj(final="[ATTEMPT_ABORTED_X]")
    t.outcome = "passed"  # type: ignore[assignment]  # a lenient caller
    assert classify_chat_outcome(t).promoted is False


# --- the record in extra ------------------------------------------------------------------------------------


def test_fired_signals_are_recorded_in_extra_and_survive_a_round_trip() -> None:
    t = traj(*(failing(i, "python", "boom") for i in range(3)))
    t.extra["client"] = "cli"
    apply_chat_outcome_heuristics(t)
    assert t.extra["client"] == "cli"
    assert t.extra["heuristics"] == {
        "signals": [{"name": "repeated_tool_error", "detail": "python: 'boom' ×3", "count": 3}],
        "promoted": True,
    }
    back = Trajectory.from_json(t.to_json())
    assert back.outcome is Outcome.FAILED
    assert back.extra["heuristics"] == t.extra["heuristics"]
    orjson.dumps(t.to_dict())  # JSON-ready


def test_classify_does_not_mutate() -> None:
    t = traj(*(failing(i, "python", "boom") for i in range(3)))
    before = t.to_dict()
    classify_chat_outcome(t)
    assert t.to_dict() == before


# --- garbage never raises -----------------------------------------------------------------------------------


def garbage_steps() -> list[Any]:
    return [
        Step(i=0, tool_name="browser.click", tool_args=None),  # type: ignore[arg-type]
        Step(i=1, tool_name="browser.interact", tool_args=["#a", "#a"]),  # type: ignore[arg-type]
        Step(i=2, tool_name="browser.interact", tool_args={"actions": "not a list"}),
        Step(i=3, tool_name="browser.interact", tool_args={"actions": [None, 3, {"selector": None}, {"x": 1}]}),
        Step(i=4, tool_name="browser", tool_args={"selector": 12}),
        Step(i=5, tool_name=None, error={"code": 1}),  # type: ignore[arg-type]
        Step(i=6, tool_name=None, error="   "),
        Step(i=7, result_preview=None),  # type: ignore[arg-type]
        None,
        object(),
        {"tool_name": "python"},
        {},
        "a string step",
    ]


def test_garbage_steps_never_raise_and_fire_nothing() -> None:
    t = traj(*garbage_steps())
    t.final_response = None  # type: ignore[assignment]
    assert classify_chat_outcome(t).fired is False
    assert apply_chat_outcome_heuristics(t) is t
    assert t.outcome is Outcome.UNKNOWN


def test_dict_shaped_steps_are_read_too() -> None:
    t = traj()
    t.steps = [{"i": i, "tool_name": "python", "error": "boom"} for i in range(3)]  # type: ignore[misc]
    assert classify_chat_outcome(t).signal_names == ("repeated_tool_error",)


def test_missing_tool_name_is_grouped_as_unknown_tool() -> None:
    t = traj(*(Step(i=i, error="boom") for i in range(3)))
    assert classify_chat_outcome(t).signals[0].detail == "?: 'boom' ×3"


def test_none_steps_list() -> None:
    t = traj(final="[ATTEMPT_ABORTED_X]")
    t.steps = None  # type: ignore[assignment]
    assert classify_chat_outcome(t).signal_names == ("abort_marker",)


class Exploding:
    """A trajectory-shaped object whose every attribute read blows up."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"cannot read {name}")


def test_apply_swallows_classification_errors_and_logs_at_debug() -> None:
    bad = Exploding()
    structlog.reset_defaults()  # capture must see debug events whatever an earlier test configured
    with capture_logs() as logs:
        assert apply_chat_outcome_heuristics(bad) is bad  # type: ignore[arg-type,comparison-overlap]
    (event,) = [e for e in logs if e["event"] == "outcome_heuristics_error"]
    assert event["log_level"] == "debug"
    assert "RuntimeError" in event["error"]


def test_apply_on_non_dict_extra_leaves_the_trajectory_unchanged() -> None:
    t = traj(*(failing(i, "python", "boom") for i in range(3)))
    t.extra = ["not", "a", "dict"]  # type: ignore[assignment]
    apply_chat_outcome_heuristics(t)
    assert t.outcome is Outcome.UNKNOWN
    assert t.failure_reason is None
    assert t.extra == ["not", "a", "dict"]  # type: ignore[comparison-overlap]


def test_apply_on_none_returns_none() -> None:
    assert apply_chat_outcome_heuristics(None) is None  # type: ignore[arg-type]


def test_thresholds_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # The constants are runtime knobs: lowering one takes effect without a reload.
    monkeypatch.setattr(oh, "REPEATED_ERROR_THRESHOLD", 2)
    t = traj(*(failing(i, "python", "boom") for i in range(2)))
    assert classify_chat_outcome(t).fired is True


def test_promotion_is_logged_with_signal_names_only() -> None:
    t = traj(*(failing(i, "python", "secret-token-in-error") for i in range(3)))
    structlog.reset_defaults()  # capture must see debug events whatever an earlier test configured
    with capture_logs() as logs:
        apply_chat_outcome_heuristics(t)
    (event,) = [e for e in logs if e["event"] == "outcome_heuristics_fired"]
    assert event["signals"] == ["repeated_tool_error"]
    assert "secret-token-in-error" not in repr(event)
