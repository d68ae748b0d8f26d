"""The child side of `watchdog.process.run_in_process`: `python -m ghost_agent.watchdog.job_worker MODULE:FUNC NICE`.

It sits at the package root, importing nothing of ours, so the first thing the child does is lower its CPU
priority — before the job's own imports (numpy, the trainers), which are most of a short job's CPU. Then it
reads `(sys.path, pickled argument)` from stdin, imports `MODULE`, calls `FUNC(argument)` and writes
`(True, result)` or `(False, "Type: message")`, pickled, to its stdout. Anything the job prints goes to
stderr instead, so nothing can corrupt the answer.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys


def main(argv: list[str]) -> int:
    """Run one job; exit 0 after answering (a raising job is an answer too), 2 on a malformed call."""
    if len(argv) != 2 or ":" not in argv[0]:
        sys.stderr.write("usage: python -m ghost_agent.watchdog.job_worker MODULE:FUNC NICE\n")
        return 2
    ref, nice = argv[0], int(argv[1])
    if nice > 0:
        try:
            os.nice(nice)
        except OSError:
            pass
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints (and a library's banner) go to stderr, never into the answer
    path, payload = pickle.load(sys.stdin.buffer)
    sys.path[:] = [p for p in path if p not in sys.path] + sys.path
    module, _, name = ref.partition(":")
    try:
        fn = importlib.import_module(module)
        for part in name.split("."):
            fn = getattr(fn, part)
        result: tuple[bool, object] = (True, fn(pickle.loads(payload)))  # type: ignore[operator]
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, whatever it is
        result = (False, f"{type(exc).__name__}: {exc}"[:2000])
    try:
        data = pickle.dumps(result)
    except Exception as exc:  # noqa: BLE001 - an unpicklable result is the job's bug: say so
        data = pickle.dumps((False, f"the result cannot be sent back: {type(exc).__name__}: {exc}"[:2000]))
    answer.write(data)
    answer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
