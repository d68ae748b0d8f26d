"""Router labels (one test per rule) and RouterTrainer (fit, bails, checkpoints, learning check)."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from ghost_agent.agent.stages.record import build_trajectory
from ghost_agent.agent.stages.routing import RouterStage
from ghost_agent.agent.turn import Turn
from ghost_agent.learned.linear import roc_auc
from ghost_agent.learned.training import Floors, RewardSource
from ghost_agent.router.dispatch import Router, RouterRequest
from ghost_agent.router.labels import iter_router_samples, label_rule, router_label, router_sample
from ghost_agent.router.model import RouterModel
from ghost_agent.router.trainer import RouterTrainer
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Step, Trajectory, new_trajectory_id

# ---------------------------------------------------------------------------------- synthetic corpus

TOOL_TEMPLATES = (
    "run this python: print({a} * {b})",
    "list files in /tmp/{name}",
    "compute the sha256 of {name}.txt",
    "count the lines in {name}.csv",
    "Execute `ls -la /var/{name}` and show me the output",
    "Write a python script that sorts {name}.json by date",
    "calculate {a} * {b} + {c} exactly",
    "Read ./{name}/config.yaml and tell me the port",
    "fix the failing test in tests/test_{name}.py",
    "download https://example.com/{name}.csv and plot column {a}",
    "grep for TODO in src/{name} and list the files",
    "convert {name}.csv to json and save it as {name}.json",
)
CHAT_TEMPLATES = (
    "hi",
    "hello!",
    "thanks, that helps",
    "what is a monad?",
    "how are you today?",
    "tell me a joke about {animal}s",
    "who wrote {book}?",
    "why is the sky blue?",
    "what does the word {word} mean?",
    "good morning :)",
    "do you like {animal}s?",
    "what's the difference between {word} and {other}?",
)
FILL = {
    "name": ("report", "sales", "notes", "data", "build", "logs", "alpha", "queue"),
    "animal": ("cat", "penguin", "otter", "dog", "owl"),
    "book": ("Dune", "Hamlet", "Emma", "Ulysses"),
    "word": ("serendipity", "ennui", "hubris", "liminal"),
    "other": ("luck", "boredom", "pride", "transition"),
}


def synth_request(rng: random.Random, needs_agent: bool, split: str = "train") -> str:
    """One request from the tool-needing or the chit-chat templates, slots filled at random.

    `split` "train" draws from the even-numbered templates, "test" from the odd ones: held-out requests
    are phrased in ways the trainer never saw.
    """
    templates = TOOL_TEMPLATES if needs_agent else CHAT_TEMPLATES
    template = rng.choice(templates[0::2] if split == "train" else templates[1::2])
    fills: dict[str, Any] = {k: rng.choice(v) for k, v in FILL.items()}
    fills.update(a=rng.randint(2, 999), b=rng.randint(2, 999), c=rng.randint(2, 999))
    return template.format(**fills)


def synth_corpus(
    n: int, seed: int, ts: str = "2026-04-26T10:00:00+00:00", noise: float = 0.1
) -> Iterator[tuple[Trajectory, str | None]]:
    """`(trajectory, correction outcome or None)` pairs: half need the agent, half are chit-chat.

    Tool requests mostly ran tools on the agent route (label 1 by `used_tools`); some went the fast path and
    were corrected by the user (label 1 by `fast_failed`). Chit-chat went the fast path and passed a check or
    was implicitly accepted, or took the agent route without tools (label 0). A `noise` fraction of the
    requests carries the other kind's outcome (a chat question the agent answered with a tool, a tool
    request the fast path got away with), so the classes overlap as real traffic does.
    """
    rng = random.Random(seed)
    for i in range(n):
        needs_agent = i % 2 == 0
        traj = Trajectory(
            session_id=f"s{seed}", ts=ts, user_request=synth_request(rng, needs_agent),
            extra={"messages": rng.randint(1, 9)},
        )
        if rng.random() < noise:
            needs_agent = not needs_agent
        correction = None
        roll = rng.random()
        if needs_agent and roll < 0.7:
            traj.router = {"decision": "agent", "p": 0.9, "reason": "confident_agent", "model": None}
            traj.steps = [Step(i=0, tool_name=rng.choice(("python", "bash", "file_system")), tool_args={"x": 1})]
        elif needs_agent:
            traj.router = {"decision": "fast", "p": 0.2, "reason": "confident_fast", "model": None}
            correction = "failed"
        elif roll < 0.4:
            traj.router = {"decision": "fast", "p": 0.1, "reason": "confident_fast", "model": None}
            correction = "passed"
        elif roll < 0.85:
            traj.router = {"decision": "fast", "p": 0.1, "reason": "confident_fast", "model": None}
        else:
            traj.router = {"decision": "agent", "p": 0.5, "reason": "uncertain", "model": None}
        yield traj, correction


def write_corpus(collector: TrajectoryCollector, n: int, seed: int, ts: str = "2026-04-26T10:00:00+00:00") -> None:
    """Append a synthetic corpus through the real collector, corrections through the real sidecar."""
    for traj, correction in synth_corpus(n, seed, ts):
        collector.append(traj)
        if correction == "failed":
            collector.update_outcome(traj.id, Outcome.FAILED, "that's not what I asked", source="user_correction")
        elif correction == "passed":
            collector.update_outcome(traj.id, Outcome.PASSED, None, source="verifier")


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[TrajectoryCollector]:
    # tests/trajectories/conftest.py has the same fixture; conftests do not reach across sibling packages
    with TrajectoryCollector(tmp_path / "trajectories") as c:
        yield c


# --------------------------------------------------------------------------------------------- labels


def tool_step(i: int = 0, name: str | None = "bash") -> Step:
    return Step(i=i, description="do it", tool_name=name, tool_args={"cmd": "ls"})


def routed(decision: str | None, **kwargs: Any) -> Trajectory:
    router = None if decision is None else {"decision": decision, "p": 0.4, "reason": "x", "model": None}
    kwargs.setdefault("user_request", "list files in /tmp")
    return Trajectory(router=router, **kwargs)


def stored(collector: TrajectoryCollector, traj: Trajectory, correction: tuple[str, str] | None = None) -> Trajectory:
    """`traj` written and read back through the real collector, with an optional (outcome, source) correction."""
    collector.append(traj)
    if correction is not None:
        collector.update_outcome(traj.id, correction[0], "because", source=correction[1])
    found = collector.get(traj.id)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("traj", "correction", "rule", "label", "weight"),
    [
        (routed("agent", steps=[tool_step()]), None, "used_tools", 1.0, 0.3),
        (routed("agent", steps=[tool_step()], source="eval", outcome=Outcome.PASSED), None, "used_tools", 1.0, 0.6),
        (routed("agent", steps=[tool_step()], extra={"backend_error": {"status": 502}}), None, "used_tools", 1.0, 0.3),
        (routed(None, steps=[tool_step()]), None, "used_tools", 1.0, 0.3),
        (routed("fast"), ("failed", "user_correction"), "fast_failed", 1.0, 1.0),
        (routed("fast"), ("failed", "heuristic"), "fast_failed", 1.0, 0.3),
        (routed("fast"), ("passed", "verifier"), "fast_passed", 0.0, 0.6),
        (routed("fast", source="self_play", outcome=Outcome.PASSED), None, "fast_passed", 0.0, 0.6),
        (routed("fast"), None, "fast_accepted", 0.0, 0.3),
        (routed("fast", verifier={"verdict": "SUPPORTED"}), None, "fast_accepted", 0.0, 0.3),
        (routed("agent", outcome=Outcome.PASSED, source="eval"), None, "agent_no_tools", 0.0, 0.6),
        (routed("agent"), None, "agent_no_tools", 0.0, 0.3),
        (routed("agent", steps=[tool_step(name="")]), None, "agent_no_tools", 0.0, 0.3),
        (routed("agent"), ("failed", "user_correction"), "ambiguous", None, None),
        (routed("fast"), ("unknown", "heuristic"), "ambiguous", None, None),
        (routed("fast", source="self_play"), None, "ambiguous", None, None),
        (routed(None), None, "unrouted", None, None),
        (routed("sideways"), None, "unrouted", None, None),
        (routed("fast", source="reflection", outcome=Outcome.PASSED), None, "skip_source", None, None),
        (routed("agent", source="self_consistency", steps=[tool_step()]), None, "skip_source", None, None),
        (routed("fast", user_request="  \n"), None, "skip_empty", None, None),
        (routed("fast", extra={"client_tool_calls": [{"id": "c1"}]}), None, "skip_client_tools", None, None),
        (routed("fast", extra={"backend_error": {"status": 502}}), None, "skip_infrastructure", None, None),
        (routed("fast", extra={"client_disconnected": True}), None, "skip_infrastructure", None, None),
    ],
)
def test_label_rules(
    collector: TrajectoryCollector, traj: Trajectory, correction: tuple[str, str] | None, rule: str,
    label: float | None, weight: float | None,
) -> None:
    back = stored(collector, traj, correction)
    assert label_rule(back) == rule
    assert router_label(back) == (None if label is None else (label, weight))


def test_implicit_acceptance_uses_the_heuristic_weight_of_the_table() -> None:
    table = {RewardSource.HUMAN: 2.0, RewardSource.SELF: 0.5, RewardSource.HEURISTIC: 0.25, RewardSource.TEACHER: 0.0}
    assert router_label(routed("fast"), table) == (0.0, 0.25)
    assert router_label(routed("fast", source="eval", outcome=Outcome.PASSED), table) == (0.0, 0.5)


def constant_router(p: float) -> RouterModel:
    """A fitted router model that predicts exactly `p` for every request."""
    return RouterModel(weights=np.zeros(len(RouterModel.FEATURE_NAMES)), bias=math.log(p / (1.0 - p)))


def confident(decision: str, confidence: object, **kwargs: Any) -> Trajectory:
    """`routed`, with the router record carrying `confidence` (as `RouterDecision.to_dict` now writes it)."""
    traj = routed(decision, **kwargs)
    assert traj.router is not None
    traj.router["confidence"] = confidence
    return traj


@pytest.mark.parametrize(
    ("traj", "correction", "rule", "weight"),
    [
        # the source weight times 0.5 + 0.5 * confidence
        (confident("fast", 0.0), ("failed", "user_correction"), "fast_failed", 0.5),
        (confident("fast", 1.0), ("failed", "user_correction"), "fast_failed", 1.0),
        (confident("fast", 0.6), ("failed", "user_correction"), "fast_failed", 0.8),
        (confident("fast", 0.0), ("passed", "verifier"), "fast_passed", 0.3),
        (confident("fast", 0.0), None, "fast_accepted", 0.15),  # the implicit-acceptance weight is scaled too
        (confident("agent", 0.4, steps=[tool_step()]), None, "used_tools", 0.21),
        (confident("agent", 1.0, outcome=Outcome.PASSED, source="eval"), None, "agent_no_tools", 0.6),
        # missing or unusable confidence: the weight of `test_label_rules`, unchanged
        (confident("fast", None), ("failed", "user_correction"), "fast_failed", 1.0),
        (confident("fast", "0.9"), ("failed", "user_correction"), "fast_failed", 1.0),
        (confident("fast", True), ("passed", "verifier"), "fast_passed", 0.6),
        (confident("fast", [1.0]), None, "fast_accepted", 0.3),
        # out of range: clamped
        (confident("fast", 7.0), ("failed", "heuristic"), "fast_failed", 0.3),
        (confident("fast", -2.0), ("failed", "heuristic"), "fast_failed", 0.15),
    ],
)
def test_router_weights_are_modulated_by_the_decision_confidence(
    collector: TrajectoryCollector, traj: Trajectory, correction: tuple[str, str] | None, rule: str, weight: float
) -> None:
    back = stored(collector, traj, correction)
    sample = router_sample(back)
    assert sample is not None and sample.rule == rule
    assert sample.weight == pytest.approx(weight)


def test_non_finite_confidence_leaves_the_weight_unchanged() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        assert router_label(confident("fast", bad)) == (0.0, 0.3)


def test_the_confidence_the_router_stage_records_reaches_the_sample_weight(
    collector: TrajectoryCollector,
) -> None:
    """Dispatch → RouterStage → recorder → store → label: the whole path a real turn takes."""
    chat = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    cases = [
        (Router(constant_router(0.2)), 0.8),  # confident fast: 1 − p
        (Router(constant_router(0.1), mode="always-fast"), None),  # forced: the model did not decide
        (Router(), None),  # the prior: no probability
    ]
    for router, confidence in cases:
        turn = Turn(body=chat, trajectory_id=new_trajectory_id())
        asyncio.run(RouterStage(SimpleNamespace(router=router)).run(turn))  # type: ignore[arg-type]
        back = stored(collector, build_trajectory(turn, None), ("failed", "user_correction"))
        assert back.router is not None and back.router["decision"] == "fast"
        if confidence is None:
            assert back.router["confidence"] is None
            assert router_label(back) == (1.0, 1.0)
        else:
            assert back.router["confidence"] == pytest.approx(confidence)
            assert router_label(back) == (1.0, pytest.approx(0.5 + 0.5 * confidence))


def test_samples_carry_the_dispatch_request(collector: TrajectoryCollector) -> None:
    traj = stored(collector, routed("fast", user_request="what is a monad?", extra={"messages": 5}))
    (sample,) = iter_router_samples([traj])
    assert sample.request == RouterRequest("what is a monad?", 5)
    assert sample.features() == RouterRequest("what is a monad?", 5).features()
    assert (sample.trajectory_id, sample.rule, sample.reward_source) == (traj.id, "fast_accepted", "heuristic")


def test_sample_iteration_is_lazy() -> None:
    def trajectories() -> Iterator[Trajectory]:
        yield routed("fast")
        raise AssertionError("read past the first sample")

    assert next(iter_router_samples(trajectories())).rule == "fast_accepted"


# -------------------------------------------------------------------------------------------- trainer


@pytest.fixture
def corpus(collector: TrajectoryCollector) -> TrajectoryCollector:
    write_corpus(collector, 120, seed=11)
    return collector


def test_fit_writes_a_loadable_checkpoint(corpus: TrajectoryCollector, tmp_path: Path) -> None:
    path = tmp_path / "router" / "checkpoint.json"
    trainer = RouterTrainer(corpus, checkpoint_path=path)
    with capture_logs() as logs:
        report = trainer.run()
    assert (report.kind, report.fit_attempted, report.fit_succeeded, report.error) == ("router", True, True, None)
    assert (report.trajectories_seen, report.trajectories_used, report.samples) == (120, 120, 120)
    assert report.positives + report.negatives == 120 and 40 < report.positives < 80
    assert set(report.weight_by_source) == {"heuristic", "human", "self"}
    assert report.metrics["auc"] > 0.9 and report.fit["converged"]
    assert report.checkpoint == str(path) and trainer.model is not None
    loaded = RouterModel.load(path)
    assert loaded.model_id == report.model_id == trainer.model.model_id
    meta = loaded.metadata
    assert {"trained_at", "n_samples", "class_balance", "rules", "metrics", "fit", "source_weights"} <= meta.keys()
    assert meta["n_samples"] == 120 and meta["class_balance"]["positives"] == report.positives
    assert "band" not in meta  # a dispatch setting, not part of the model
    assert sum(meta["rules"].values()) == 120
    assert meta["rules"]["used_tools"] + meta["rules"]["fast_failed"] == report.positives
    assert [e["event"] for e in logs if e["event"].startswith("router_train")] == ["router_train_fit"]


def test_repeat_runs_give_the_same_model(corpus: TrajectoryCollector) -> None:
    trainer = RouterTrainer(corpus)
    first, second = trainer.run(), trainer.run()
    assert first.model_id == second.model_id is not None
    assert first.checkpoint is None  # no path given: the model stays in memory
    assert "kept in memory" in first.render()


def lopsided(n: int) -> list[Trajectory]:
    return [routed("agent", steps=[tool_step()]) for _ in range(n)]


@pytest.mark.parametrize(
    ("trajectories", "floors", "reason"),
    [
        (lambda: lopsided(2) + [routed("fast")] * 2, Floors(), "only 4 usable trajectories"),
        (lambda: lopsided(5) + [routed("fast")] * 5, Floors(min_trajectories=5, min_samples=20), "only 10 training"),
        (lambda: lopsided(40), Floors(), "class balance too lopsided"),
        (lambda: lopsided(39) + [routed("fast")], Floors(min_class_fraction=0.05), "class balance too lopsided"),
        (lambda: [routed(None)] * 30, Floors(), "only 0 usable trajectories"),
    ],
)
def test_each_floor_bails_without_a_checkpoint(
    tmp_path: Path, trajectories: Any, floors: Floors, reason: str
) -> None:
    path = tmp_path / "checkpoint.json"
    with capture_logs() as logs:
        report = RouterTrainer(trajectories(), floors=floors, checkpoint_path=path).run()
    assert not report.fit_attempted and not report.fit_succeeded
    assert report.bail_reason is not None and reason in report.bail_reason
    assert not path.exists()
    assert [e["event"] for e in logs] == ["router_train_bail"]


def test_bail_keeps_the_previous_model_and_checkpoint(corpus: TrajectoryCollector, tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    trainer = RouterTrainer(corpus, checkpoint_path=path)
    assert trainer.run().fit_succeeded
    before, model = path.read_bytes(), trainer.model
    trainer.source = lopsided(3)
    report = trainer.run()
    assert report.bail_reason is not None
    assert trainer.model is model and path.read_bytes() == before


def test_save_failure_is_reported_and_the_model_kept(corpus: TrajectoryCollector, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    trainer = RouterTrainer(corpus, checkpoint_path=blocker / "checkpoint.json")
    report = trainer.run()
    assert report.fit_succeeded and report.checkpoint is None
    assert report.error is not None and "saving the checkpoint" in report.error
    assert trainer.model is not None and trainer.model.model_id == report.model_id


def test_a_failing_source_is_reported_not_raised() -> None:
    def broken() -> Iterator[Trajectory]:
        yield routed("fast")
        raise OSError("disk gone")

    with capture_logs() as logs:
        report = RouterTrainer(broken()).run()
    assert report.error is not None and "disk gone" in report.error and report.trajectories_seen == 1
    assert not report.fit_attempted and logs[0]["event"] == "router_train_error"


def test_since_limits_what_a_collector_run_reads(collector: TrajectoryCollector) -> None:
    write_corpus(collector, 30, seed=1, ts="2026-04-20T10:00:00+00:00")
    write_corpus(collector, 40, seed=2, ts="2026-04-26T10:00:00+00:00")
    assert RouterTrainer(collector).run().trajectories_seen == 70
    report = RouterTrainer(collector, since="2026-04-25").run()
    assert report.trajectories_seen == 40 and report.fit_succeeded


def test_a_fit_error_is_reported_and_keeps_the_previous_model(corpus: TrajectoryCollector) -> None:
    trainer = RouterTrainer(corpus)
    assert trainer.run().fit_succeeded
    previous = trainer.model
    trainer.source_weights = dict.fromkeys(RewardSource, 0.0)  # every sample weighs nothing: cannot fit
    with capture_logs() as logs:
        report = trainer.run()
    assert report.fit_attempted and not report.fit_succeeded
    assert report.error is not None and report.error.startswith("fit failed")
    assert trainer.model is previous and trainer.last_report is report
    assert [(e["event"], e["stage"]) for e in logs] == [("router_train_error", "fit")]


def test_since_needs_a_collector() -> None:
    with pytest.raises(ValueError, match="since= needs a TrajectoryCollector"):
        RouterTrainer([routed("fast")], since="2026-04-01")


async def test_arun(corpus: TrajectoryCollector) -> None:
    report = await RouterTrainer(corpus).arun()
    assert report.fit_succeeded


def test_learning_check_routes_held_out_requests(corpus: TrajectoryCollector) -> None:
    """Trained on a noisy corpus (seed 11), the router separates held-out phrasings (seed 12): AUC ≥ 0.85."""
    trainer = RouterTrainer(corpus)
    assert trainer.run().fit_succeeded and trainer.model is not None
    router = Router(trainer.model)
    rng = random.Random(12)
    held_out = [(synth_request(rng, i % 2 == 0, "test"), rng.randint(1, 9), i % 2 == 0) for i in range(200)]
    decisions = [router.dispatch(RouterRequest(text, n)) for text, n, _ in held_out]
    needs = [needs_agent for _, _, needs_agent in held_out]
    auc = roc_auc([d.p for d in decisions], needs)
    assert auc is not None and auc >= 0.85
    tool_routes = [d.route for d, need in zip(decisions, needs, strict=True) if need]
    chat_routes = [d.route for d, need in zip(decisions, needs, strict=True) if not need]
    assert tool_routes.count("agent") / len(tool_routes) >= 0.9
    # borderline chit-chat lands in the uncertainty band and goes to the agent on purpose (fail-safe)
    assert chat_routes.count("fast") / len(chat_routes) >= 0.6
    assert Router().dispatch(RouterRequest(held_out[0][0])).p is None  # untrained: no opinion, agent
