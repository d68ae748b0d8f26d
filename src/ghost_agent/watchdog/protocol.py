"""`GET /v1/ghost/status`: the response models (pydantic, so the OpenAPI document describes them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class PhaseWindow(BaseModel):
    min_idle_s: float
    max_idle_s: float | None = Field(None, description="None: no upper bound.")


class PhaseRunResult(BaseModel):
    status: Literal["ok", "skipped", "yielded", "failed", "cancelled"]
    detail: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class PhaseStatus(BaseModel):
    """One row of the phase table and what the watchdog last did with it (times are UTC ISO-8601)."""

    key: str
    name: str
    title: str
    built: bool
    window: PhaseWindow
    cooldown_s: float
    running: bool
    runs: int
    failures: int
    last_start: str | None = None
    last_end: str | None = None
    last_result: PhaseRunResult | None = None
    next_eligible: str | None = Field(None, description="None: not before the next user request (or disabled).")
    next_eligible_in_s: float | None = None
    skip_reason: str | None = Field(None, description="Why it did not run at the last tick.")


class WatchdogStatus(BaseModel):
    enabled: bool
    running: bool
    tick_s: float
    idle_time_scale: float
    ticks: int
    current_phase: str | None = None
    idle_s: float
    last_activity: str | None = None
    user_requests_in_flight: int
    preemptions: int


class LiveModelStatus(BaseModel):
    """A learned model in use: id, where it came from, hot swaps so far, and its training figures."""

    loaded: bool
    model_id: str | None = None
    source: str | None = None
    swaps: int = 0
    trained_at: str | None = None
    n_samples: int | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    gate: dict[str, Any] = Field(
        default_factory=dict,
        description="A retrained model's swap-gate verdict: held-out log loss (primary), Brier, accuracy, AUC of "
        "it and of the model it replaced, the slice's size and cutoff time. Empty for a model not retrained here.",
    )


class GhostStatus(BaseModel):
    """`GET /v1/ghost/status`."""

    watchdog: WatchdogStatus
    phases: list[PhaseStatus]
    models: dict[str, LiveModelStatus]
    counts: dict[str, Any] = Field(
        default_factory=dict,
        description="lessons / candidates / trajectories (by_outcome, by_source), cached; computed_at in epoch s.",
    )


__all__ = ["GhostStatus", "LiveModelStatus", "PhaseStatus", "PhaseRunResult", "PhaseWindow", "WatchdogStatus"]
