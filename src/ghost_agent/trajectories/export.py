"""Training data a user with a GPU can take elsewhere (seed 001 "Stage 2", seed 003): validated turns in chat
format for supervised fine-tuning, and (rejected, chosen) pairs of one task for preference tuning.

Both read what is on disk, which is already redacted (`privacy/redact.py`): a secret never reaches an export.
- `sft_records`: every PASSED trajectory with a reply, `{"messages": [user, assistant], "id", "source",
  "cluster", "outcome_source"}`.
- `dpo_pairs`: for each task with both outcomes, up to `max_per_task` pairs `{"prompt": [user], "chosen":
  [assistant], "rejected": [assistant], "task"}` (TRL's conversational preference format). A task is a
  self-play task id (`extra.selfplay.task`), else the request's text normalised: two chat turns asking the
  same thing, one failed and one passed, are a pair too. Identical replies never pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ghost_agent.jsonsafe import JSON
from ghost_agent.trajectories.record import Outcome, Trajectory

MAX_PAIRS_PER_TASK = 4
_SPACE = re.compile(r"\s+")


def task_key(traj: Trajectory) -> str:
    """What makes two trajectories attempts at one task."""
    selfplay = traj.extra.get("selfplay") if isinstance(traj.extra, dict) else None
    task = selfplay.get("task") if isinstance(selfplay, dict) else None
    if isinstance(task, str):
        return "selfplay:" + task
    return "request:" + _SPACE.sub(" ", traj.user_request).strip().casefold()


def _usable(traj: Trajectory) -> bool:
    return bool(traj.user_request.strip()) and bool(traj.final_response.strip())


def sft_records(trajectories: Iterable[Trajectory]) -> Iterator[JSON]:
    """Validated (PASSED) turns as chat-format training records."""
    for traj in trajectories:
        if traj.outcome is not Outcome.PASSED or not _usable(traj):
            continue
        yield {
            "messages": [{"role": "user", "content": traj.user_request},
                         {"role": "assistant", "content": traj.final_response}],
            "id": traj.id, "source": traj.source, "cluster": traj.cluster,
            "outcome_source": traj.extra.get("outcome_source") if isinstance(traj.extra, dict) else None,
        }


def dpo_pairs(trajectories: Iterable[Trajectory], *, max_per_task: int = MAX_PAIRS_PER_TASK) -> Iterator[JSON]:
    """(rejected, chosen) pairs of one task (see the module doc), in the order tasks first appear."""
    tasks: dict[str, tuple[str, list[str], list[str]]] = {}
    for traj in trajectories:
        if traj.outcome is Outcome.UNKNOWN or not _usable(traj):
            continue
        prompt, passed, failed = tasks.setdefault(task_key(traj), (traj.user_request, [], []))
        bucket = passed if traj.outcome is Outcome.PASSED else failed
        if traj.final_response not in bucket:
            bucket.append(traj.final_response)
    for key, (prompt, passed, failed) in tasks.items():
        pairs = [(good, bad) for bad in failed for good in passed if good != bad][:max_per_task]
        for good, bad in pairs:
            yield {"prompt": [{"role": "user", "content": prompt}],
                   "chosen": [{"role": "assistant", "content": good}],
                   "rejected": [{"role": "assistant", "content": bad}], "task": key}


__all__ = ["MAX_PAIRS_PER_TASK", "dpo_pairs", "sft_records", "task_key"]
