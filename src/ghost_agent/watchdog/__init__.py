"""The biological watchdog (DESIGN §5): idle-time phases that turn history into better lessons and models.

```
watchdog/clock.py      ActivityClock (only user requests move it), SystemClock / ManualClock
watchdog/activity.py   the ASGI hook on POST /v1/chat/completions (touches the clock, holds the gate)
watchdog/base.py       Phase, Timing, PhaseResult, PhaseContext, NotBuiltPhase
watchdog/table.py      the phase table (DESIGN §5) from the settings, PHASES registry
watchdog/runner.py     Watchdog: the tick loop, cooldown anchors, per-phase state, status
watchdog/counts.py     cached lesson / candidate / trajectory counts
watchdog/host.py       PhaseHost: what a phase may use of the daemon (the server's AppContext meets it)
watchdog/service.py    build_watchdog / start_watchdog for a WatchdogHost
watchdog/protocol.py   the models of GET /v1/ghost/status (the route is server/status.py)
watchdog/process.py    run_in_process: a job in a niced child process; job_worker.py is the child's side
watchdog/retrain_pass.py  one retrain pass: the PRM and the router fitted over the store, each gated
watchdog/phases/       one module per implemented phase
```
The model-priority gate the phases yield to is `llm/gate.py` (the agent holds it too); `ghost-agent status` is
`cli/status.py`.
"""

from __future__ import annotations

from ghost_agent.llm.gate import ModelGate, ModelPreempted
from ghost_agent.watchdog.base import NotBuiltPhase, Phase, PhaseContext, PhaseResult, PhaseYielded, Timing
from ghost_agent.watchdog.clock import ActivityClock, Clock, ManualClock, SystemClock
from ghost_agent.watchdog.runner import PhaseState, Watchdog

__all__ = [
    "ActivityClock",
    "Clock",
    "ManualClock",
    "ModelGate",
    "ModelPreempted",
    "NotBuiltPhase",
    "Phase",
    "PhaseContext",
    "PhaseResult",
    "PhaseState",
    "PhaseYielded",
    "SystemClock",
    "Timing",
    "Watchdog",
]
