"""Builders the reflection tests share: failed trajectories, critique replies, a real store on a temp home."""

from __future__ import annotations

import json
from typing import Any

from ghost_agent.llm.scripted import ScriptedReply
from ghost_agent.trajectories.record import Outcome, Step, Trajectory

THREE_WORDS = "Reply with three words exactly: kangaroo trampoline lighthouse"
THREE_WORDS_FIX = "no, reply with three words exactly: kangaroo trampoline metronome"


def failed(
    request: str = THREE_WORDS,
    reply: str = "Sure! kangaroo trampoline lighthouse",
    *,
    steps: list[Step] | None = None,
    session: str = "s1",
    ts: str | None = None,
    **kwargs: Any,
) -> Trajectory:
    """A FAILED chat trajectory (as the correction overlay leaves it)."""
    extra = kwargs.pop("extra", {"model": "m"})
    traj = Trajectory(session_id=session, user_request=request, final_response=reply, steps=steps or [],
                      outcome=Outcome.FAILED, failure_reason=kwargs.pop("failure_reason", "user-correction signal"),
                      extra=extra, **kwargs)
    if ts is not None:
        traj.ts = ts
    return traj


def step(i: int, tool: str = "python", *, ok: bool = True, error: str | None = None, preview: str = "") -> Step:
    return Step(i=i, description=f"run {tool}", tool_name=tool, tool_args={"code": "print(1)"}, ok=ok, error=error,
                result_preview=preview)


def critique(task: str = "replying with an exact list of words", mistake: str = "added a word",
             solution: str = "Reply with exactly the requested words and nothing else.", **kw: Any) -> ScriptedReply:
    return ScriptedReply(content=json.dumps({"task": task, "mistake": mistake, "solution": solution}), **kw)
