"""Router.dispatch: modes, every reason, determinism, fail-safe, request building, hot swap, loading."""

from __future__ import annotations

import dataclasses
import math
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from ghost_agent.agent.stages.record import build_trajectory
from ghost_agent.agent.turn import Turn
from ghost_agent.prm.features import PRM_FEATURE_NAMES
from ghost_agent.prm.model import StepValueModel
from ghost_agent.router.dispatch import Router, RouterDecision, RouterRequest
from ghost_agent.router.features import ROUTER_FEATURE_NAMES, router_features
from ghost_agent.router.model import RouterModel
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Trajectory

N = len(ROUTER_FEATURE_NAMES)


def constant_model(p: float) -> RouterModel:
    """A fitted model that predicts exactly `p` for every request (zero weights, bias = logit(p))."""
    return RouterModel(weights=np.zeros(N), bias=math.log(p / (1.0 - p)))


def body(*user_texts: str, system: str | None = "be brief") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for i, text in enumerate(user_texts):
        if i:
            messages.append({"role": "assistant", "content": "ok"})
        messages.append({"role": "user", "content": text})
    return {"model": "m", "messages": messages}


class ExplodingModel(RouterModel):
    """A router model whose prediction raises (a stand-in for any bug below dispatch)."""

    def predict_one(self, row: Sequence[float]) -> float:
        raise RuntimeError("boom")


class NaNModel(RouterModel):
    """A router model that returns NaN."""

    def predict_one(self, row: Sequence[float]) -> float:
        return math.nan


# ------------------------------------------------------------------------------------------- reasons


@pytest.mark.parametrize(
    ("p", "route", "reason"),
    [
        (0.05, "fast", "confident_fast"),
        (0.34, "fast", "confident_fast"),
        (0.36, "agent", "uncertain"),
        (0.5, "agent", "uncertain"),
        (0.64, "agent", "uncertain"),
        (0.66, "agent", "confident_agent"),
        (0.97, "agent", "confident_agent"),
    ],
)
def test_auto_mode_reasons_by_p(p: float, route: str, reason: str) -> None:
    model = constant_model(p)
    decision = Router(model, band=0.15).dispatch(body("hello there"))
    assert decision == RouterDecision(route, decision.p, reason, model.model_id)  # type: ignore[arg-type]
    assert decision.p == pytest.approx(p)


def test_band_edges_are_uncertain() -> None:
    assert Router(constant_model(0.5), band=0.0).dispatch("x").reason == "uncertain"  # p == 0.5 exactly
    assert Router(constant_model(0.45), band=0.0).dispatch("x").route == "fast"
    wide = Router(constant_model(0.01), band=0.5)  # the widest band: nothing is ever confident
    assert wide.dispatch("x").reason == "uncertain"


def test_no_model_routes_by_the_prior() -> None:
    """Untrained: the fixed prior decides (tests/router/test_prior.py has its table); p stays None."""
    assert Router().dispatch(body("hi")) == RouterDecision("fast", None, "prior_fast", None)
    assert Router().dispatch(body("run ls")) == RouterDecision("agent", None, "prior_agent", None)
    assert Router().dispatch(body("go on then")) == RouterDecision("agent", None, "prior_uncertain", None)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_request_goes_to_the_agent(text: str) -> None:
    model = constant_model(0.01)  # would be confidently fast for any text
    decision = Router(model).dispatch(body(text))
    assert decision == RouterDecision("agent", None, "empty_request", model.model_id)


def test_body_without_a_user_message_is_an_empty_request() -> None:
    decision = Router(constant_model(0.01)).dispatch({"messages": [{"role": "system", "content": "hi"}]})
    assert decision.reason == "empty_request"


@pytest.mark.parametrize(
    "bad",
    [
        {"model": "m", "messages": "not a list"},
        {"model": "m", "messages": {"role": "user", "content": "hi"}},
        {"model": "m"},
        42,
        None,
        ["hi"],
    ],
)
def test_malformed_requests_fail_safe_to_the_agent(bad: Any) -> None:
    model = constant_model(0.01)
    with capture_logs() as logs:
        decision = Router(model).dispatch(bad)
    assert decision == RouterDecision("agent", None, "error", model.model_id)
    assert [e["event"] for e in logs] == ["router_dispatch_error"]
    assert logs[0]["model_id"] == model.model_id


@pytest.mark.parametrize("model_class", [ExplodingModel, NaNModel])
def test_prediction_failures_fail_safe_to_the_agent(model_class: type[RouterModel]) -> None:
    model = model_class(weights=np.zeros(N), bias=-3.0)
    with capture_logs() as logs:
        decision = Router(model).dispatch(body("hi"))
    assert (decision.route, decision.reason, decision.p) == ("agent", "error", None)
    assert logs[0]["event"] == "router_dispatch_error"


# --------------------------------------------------------------------------------------------- modes


@pytest.mark.parametrize(("mode", "route"), [("always-agent", "agent"), ("always-fast", "fast")])
def test_forced_modes_without_a_model(mode: str, route: str) -> None:
    assert Router(mode=mode).dispatch(body("run ls")) == RouterDecision(route, None, "forced", None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "route", "p"), [("always-agent", "agent", 0.1), ("always-fast", "fast", 0.9)])
def test_forced_modes_override_the_model_and_report_its_shadow_p(mode: str, route: str, p: float) -> None:
    model = constant_model(p)
    decision = Router(model, mode=mode).dispatch(body("run ls"))
    assert (decision.route, decision.reason, decision.model_id) == (route, "forced", model.model_id)
    assert decision.p == pytest.approx(p)


@pytest.mark.parametrize("mode", ["always-agent", "always-fast"])
def test_forced_modes_never_fail(mode: str) -> None:
    decision = Router(ExplodingModel(weights=np.zeros(N)), mode=mode).dispatch({"messages": 7})
    assert decision.reason == "forced" and decision.p is None


@pytest.mark.parametrize(
    "kwargs",
    [{"mode": "sometimes"}, {"band": -0.01}, {"band": 0.51}, {"band": math.nan}, {"band": "0.1"}],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Router(**kwargs)


def test_models_that_are_not_fitted_router_models_are_refused() -> None:
    with pytest.raises(ValueError, match="not a fitted router model"):
        Router(RouterModel())
    with pytest.raises(ValueError, match="kind 'prm'"):
        Router(StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES))))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- determinism


def test_same_input_same_decision_1000_times() -> None:
    rng = np.random.default_rng(4)
    model = RouterModel(weights=rng.normal(size=N), bias=0.3)
    router = Router(model)
    requests = [body("list files in /tmp/a and count them"), body("hi", "what is a monad?"), "compute 2**64"]
    for request in requests:
        first = router.dispatch(request)
        assert all(router.dispatch(request) == first for _ in range(1000))
        assert Router(RouterModel(weights=model.weights, bias=model.bias)).dispatch(request) == first


def test_decision_record_shape_and_immutability() -> None:
    decision = Router(constant_model(0.2)).dispatch("hi")
    assert decision.to_dict() == {
        "decision": "fast", "p": decision.p, "reason": "confident_fast", "model": decision.model_id,
        "confidence": pytest.approx(0.8),
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.route = "agent"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("p", "band", "confidence"),
    [(0.2, 0.15, 0.8), (0.05, 0.15, 0.95), (0.9, 0.15, 0.9), (0.4, 0.15, 0.4), (0.5, 0.15, 0.5)],
)
def test_confidence_is_the_probability_of_the_route_the_model_took(p: float, band: float, confidence: float) -> None:
    """`agent` → p, `fast` → 1 − p; the fail-safe agent inside the band keeps its (possibly < 0.5) p."""
    decision = Router(constant_model(p), band=band).dispatch(body("hello there"))
    assert decision.confidence == pytest.approx(confidence)
    assert decision.to_dict()["confidence"] == pytest.approx(confidence)


def test_no_confidence_when_no_model_chose_the_route() -> None:
    """The prior, a forced mode (even with a shadow p), an empty request and an error record None."""
    model = constant_model(0.1)
    decisions = [
        Router().dispatch(body("hi")),
        Router(model, mode="always-agent").dispatch(body("hi")),
        Router(model, mode="always-fast").dispatch(body("hi")),
        Router(model).dispatch(body("   ")),
        Router(model).dispatch(42),
    ]
    assert decisions[1].p == pytest.approx(0.1)  # the shadow p is still reported
    for decision in decisions:
        assert decision.confidence is None and decision.to_dict()["confidence"] is None


# ---------------------------------------------------------------------------------- request building


def test_from_body_reads_the_last_user_message_and_counts_messages() -> None:
    request = RouterRequest.from_body(body("first question", "list files in /tmp"))
    assert request == RouterRequest("list files in /tmp", 4)
    content = [{"type": "text", "text": "run"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "ls"}]
    parts = {"messages": [{"role": "user", "content": content}]}
    assert RouterRequest.from_body(parts) == RouterRequest("run ls", 1)


def test_dispatch_accepts_a_request_a_body_or_a_text() -> None:
    rng = np.random.default_rng(1)
    router = Router(RouterModel(weights=rng.normal(size=N), bias=0.0))
    via_body = router.dispatch(body("compute the mean of 3 4 5", system=None))
    assert router.dispatch(RouterRequest("compute the mean of 3 4 5", 1)) == via_body
    assert router.dispatch("compute the mean of 3 4 5") == via_body


def test_from_body_and_from_trajectory_agree_through_the_recorder(tmp_path: Path) -> None:
    """The request the router sees at dispatch equals the one training rebuilds from the stored record."""
    bodies = [
        body("hi"),
        body("what is a monad?", "and in python? show 2 examples from ./notes/monads.md"),
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "count lines in data.csv"}]}]},
        {"messages": [{"role": "assistant", "content": "hello"}]},
    ]
    with TrajectoryCollector(tmp_path / "trajectories") as collector:
        for i, b in enumerate(bodies):
            collector.append(build_trajectory(Turn(body=b, trajectory_id=f"t{i}"), None))
        stored = {t.id: t for t in collector.iter_trajectories()}
    for i, b in enumerate(bodies):
        at_dispatch = RouterRequest.from_body(b)
        at_training = RouterRequest.from_trajectory(stored[f"t{i}"])
        assert at_training == at_dispatch
        assert at_training.features() == router_features(at_dispatch.text, at_dispatch.n_messages)


def test_from_trajectory_tolerates_damaged_message_counts() -> None:
    for bad in ("3", -1, True, None, 2.5):
        traj = Trajectory(user_request="hi", extra={"messages": bad})
        assert RouterRequest.from_trajectory(traj) == RouterRequest("hi", 1)
    assert RouterRequest.from_trajectory(Trajectory(user_request="hi")) == RouterRequest("hi", 1)


# -------------------------------------------------------------------------------------------- swapping


def test_set_model_hot_swaps_for_the_next_dispatch() -> None:
    router = Router()
    assert router.dispatch("hi").reason == "prior_fast"
    fast = constant_model(0.1)
    with capture_logs() as logs:
        router.set_model(fast, source="trainer")
    assert router.dispatch("hi") == RouterDecision("fast", pytest.approx(0.1), "confident_fast", fast.model_id)  # type: ignore[arg-type]
    assert [(e["event"], e["previous"], e["model_id"], e["source"]) for e in logs] == [
        ("router_swapped", None, fast.model_id, "trainer")
    ]
    agent = constant_model(0.9)
    router.set_model(agent)
    assert router.dispatch("hi").reason == "confident_agent"
    assert (router.model, router.model_id, router.swaps) == (agent, agent.model_id, 2)
    router.set_model(None)
    assert not router.has_model and router.dispatch("hi").reason == "prior_fast"  # back to the prior


def test_refused_swaps_keep_the_live_model() -> None:
    live = constant_model(0.1)
    router = Router(live)
    for bad in (RouterModel(), StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES)))):
        with pytest.raises(ValueError):
            router.set_model(bad)  # type: ignore[arg-type]
    assert router.model is live and router.swaps == 0


def test_concurrent_swaps_never_mix_models() -> None:
    """4 dispatching threads, 1 swapping: every decision's p belongs to the model id it reports."""
    models = [constant_model(0.1), constant_model(0.9), constant_model(0.5)]
    p_of = {m.model_id: m.predict_one([0.0] * N) for m in models}
    router = Router(models[0])
    stop = threading.Event()
    errors: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            d = router.dispatch("list files in /tmp")
            if d.model_id not in p_of or d.p != p_of[d.model_id]:
                errors.append(repr(d))

    threads = [threading.Thread(target=reader) for _ in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so a torn swap would be observed
    try:
        for t in threads:
            t.start()
        with capture_logs():  # 1,000 swap events are not worth printing
            for i in range(1000):
                router.set_model(models[i % 3])
        stop.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert router.swaps == 1000


# ------------------------------------------------------------------------------------------- loading


def test_load_and_from_setting(tmp_path: Path) -> None:
    model = constant_model(0.2)
    path = model.save(tmp_path / "router.json")
    with capture_logs() as logs:
        loaded = Router.load(path, band=0.05)
    assert loaded.model_id == model.model_id and loaded.band == 0.05 and loaded.source == str(path)
    assert logs[0]["event"] == "router_loaded"
    assert Router.from_setting(path).model_id == model.model_id
    assert not Router.from_setting(None).has_model
    assert not Router.from_setting("").has_model


def test_from_setting_warns_and_runs_without_a_model(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{nope")
    prm = StepValueModel(weights=np.zeros(len(PRM_FEATURE_NAMES))).save(tmp_path / "prm.json")
    cases = [(tmp_path / "missing.json", "router_model_missing"), (garbage, "router_model_unusable"),
             (prm, "router_model_unusable")]
    for path, event in cases:
        with capture_logs() as logs:
            router = Router.from_setting(path, mode="auto")
        assert not router.has_model
        assert [e["event"] for e in logs] == [event]
        assert router.dispatch("hi").reason == "prior_fast"  # the untrained prior, as with no file at all
