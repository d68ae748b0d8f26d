"""The host side of self-play: one practice turn, the same pipeline a chat request runs (DESIGN §8).

`practice_turn` writes the task's files into a fresh session workspace, runs the turn inside the model gate's
background slot (low priority: a user request cancels it and `ModelPreempted` ends the pass as yielded), lets
the grader judge the reply and the workspace, and records the trajectory with the grade (source `self_play`,
cluster, outcome, `extra.selfplay`). The activity clock is never touched: only user requests move it. The
workspace is removed afterwards (a session of its own per attempt).
"""

from __future__ import annotations

import shutil
import time

from ghost_agent.agent.pipeline import TurnPipeline
from ghost_agent.agent.stages.record import reply_text
from ghost_agent.agent.turn import Turn
from ghost_agent.llm.gate import ModelGate
from ghost_agent.logging import get_logger
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.selfplay.checks import write_files
from ghost_agent.selfplay.practice import Grade, Grader, PracticeTurn
from ghost_agent.trajectories.record import Source

log = get_logger("selfplay")


async def practice_turn(
    pipeline: TurnPipeline, gate: ModelGate, workspaces: Workspaces | None, prompt: str, *, session_id: str,
    files: dict[str, str], grade: Grader, show_examples: bool = True,
) -> PracticeTurn:
    """One graded, recorded self-play turn (see the module doc); `show_examples=False`: no worked examples."""
    workspace = workspaces.path_for(session_id) if workspaces is not None else None
    if workspace is not None:
        write_files(workspace, files)
    turn = Turn(body={"messages": [{"role": "user", "content": prompt}]}, session_id=session_id)
    turn.source = Source.SELF_PLAY.value
    turn.show_examples = show_examples
    graded: list[Grade] = []
    started = time.perf_counter()

    async def whole_turn() -> None:
        try:
            await pipeline.run(turn)
        except Exception as exc:  # a backend failure is a failed attempt, recorded as such
            await pipeline.finish(turn, exc)
            raise
        text, _ = reply_text(turn)
        verdict = await grade(text, workspace, turn.finish_reason)
        graded.append(verdict)
        turn.cluster = verdict.cluster
        turn.outcome = verdict.outcome
        turn.record_labels = dict(verdict.labels)
        await pipeline.finish(turn, before_delivery=True)
        await pipeline.finish(turn)

    try:
        await gate.background(whole_turn)
    finally:
        if workspace is not None:
            shutil.rmtree(workspace, ignore_errors=True)
    text, _ = reply_text(turn)
    return PracticeTurn(reply=text, trajectory_id=turn.trajectory_id, grade=graded[0] if graded else None,
                        seconds=time.perf_counter() - started)


__all__ = ["practice_turn"]
