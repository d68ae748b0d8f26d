"""Corpora for the swap-gate and retrain tests: real Trajectory records with chosen times and known signal.

"Normal" world: a turn that uses python then file_system passes, a turn that keeps re-firing a failing bash
fails. The "inverted" world says the opposite, so a model fitted on it is confidently wrong on normal data.
Fast-path chat turns (no tools, routed `fast`, passed) give the router its negatives.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from ghost_agent.prm.features import ActionCandidate, PlanState
from ghost_agent.prm.model import StepValueModel
from ghost_agent.prm.trainer import PRMTrainer
from ghost_agent.trajectories.record import Outcome, Trajectory
from tests.prm.samplehelp import traj

START = datetime.now(timezone.utc) - timedelta(days=1)
GOOD = ("python", "file_system")
BAD = (("bash", False), ("bash", False))


def at(minute: int) -> str:
    """A time stamp `minute` minutes after START (later = newer)."""
    return (START + timedelta(minutes=minute)).isoformat()


def world(n: int, *, start: int = 0, inverted: bool = False) -> list[Trajectory]:
    """`n` trajectories alternating pass / fail, one minute apart from minute `start`."""
    out = []
    for k in range(n):
        passed = k % 2 == 0
        calls = (BAD if passed else GOOD) if inverted else (GOOD if passed else BAD)
        request = f"compute thing {k}" if passed else f"fetch page {k}"
        out.append(traj(Outcome.PASSED if passed else Outcome.FAILED, calls, request=request, ts=at(start + k)))
    return out


def fast_turns(n: int, *, start: int = 0) -> list[Trajectory]:
    """`n` passed fast-path chat turns without tools (router label 0), one minute apart."""
    router = {"decision": "fast", "p": None, "reason": "prior_fast", "model": None}
    return [Trajectory(ts=at(start + k), user_request=f"hi there, how are you today {k}?", final_response="fine",
                       outcome=Outcome.PASSED, router=router) for k in range(n)]


def normal_model(n: int = 20) -> StepValueModel:
    """A PRM fitted on the normal world (what a good live model looks like)."""
    trainer = PRMTrainer(world(n))
    report = trainer.run()
    assert report.fit_succeeded and trainer.model is not None
    return trainer.model


def inverted_model(n: int = 20) -> StepValueModel:
    """A PRM fitted on the inverted world (confidently wrong on normal data)."""
    trainer = PRMTrainer(world(n, inverted=True))
    assert trainer.run().fit_succeeded and trainer.model is not None
    return trainer.model


# Re-firing bash after it failed: what every failed turn of the normal world does (a trained PRM scores it low).
PROBE_STATE = PlanState(user_request="fetch page 99", steps_so_far=1, failures_so_far=1,
                        tools_used=frozenset({"bash"}), tools_failed=frozenset({"bash"}))
PROBE_ACTION = ActionCandidate("call bash (1)", "bash", {"cmd": "echo 1"})
