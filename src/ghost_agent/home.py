"""GHOST_HOME layout (DESIGN §2), created on first start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GhostHome:
    """Paths inside GHOST_HOME. `ensure()` creates the tree; it is idempotent and safe to call on each start."""

    root: Path

    @property
    def system(self) -> Path:
        return self.root / "system"

    @property
    def trajectories(self) -> Path:
        return self.system / "trajectories"

    @property
    def corrections(self) -> Path:
        return self.trajectories / "corrections.jsonl"

    @property
    def prm_checkpoint(self) -> Path:
        return self.system / "prm" / "checkpoint.json"

    @property
    def router_checkpoint(self) -> Path:
        return self.system / "router" / "checkpoint.json"

    @property
    def skills(self) -> Path:
        return self.system / "skills"

    @property
    def lessons_db(self) -> Path:
        return self.skills / "lessons.sqlite3"

    @property
    def skills_db(self) -> Path:
        return self.skills / "skills.sqlite3"

    @property
    def selfhood(self) -> Path:
        return self.system / "selfhood"

    @property
    def selfplay(self) -> Path:
        return self.system / "selfplay"

    @property
    def frontier(self) -> Path:
        return self.selfplay / "frontier.json"

    @property
    def experience_db(self) -> Path:
        """The experience bank: validated self-play solutions shown as worked examples (`selfplay/experience.py`)."""
        return self.selfplay / "experience.sqlite3"

    @property
    def watchdog_runs(self) -> Path:
        """Every watchdog phase run, one JSON line each (`watchdog/run_log.py`)."""
        return self.system / "watchdog" / "runs.jsonl"

    @property
    def retrain_history(self) -> Path:
        """Every retrain's gate verdict per model, one JSON line each (the status page's model history)."""
        return self.system / "watchdog" / "retrains.jsonl"

    @property
    def eval(self) -> Path:
        return self.system / "eval"

    @property
    def eval_history(self) -> Path:
        """Every `eval freeze` / `eval compare` run's pass rates, one JSON line each (the status page's history)."""
        return self.eval / "history.jsonl"

    @property
    def logs(self) -> Path:
        return self.system / "logs"

    @property
    def log_file(self) -> Path:
        return self.logs / "ghost.jsonl"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def ensure(self) -> GhostHome:
        """Create every directory of the layout (0700 for the private store)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.system.mkdir(mode=0o700, exist_ok=True)
        for d in (
            self.trajectories,
            self.prm_checkpoint.parent,
            self.router_checkpoint.parent,
            self.skills,
            self.selfhood,
            self.selfplay,
            self.eval,
            self.logs,
            self.workspace,
        ):
            d.mkdir(parents=True, exist_ok=True)
        return self
