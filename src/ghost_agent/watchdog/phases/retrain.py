"""Phase 2.7, retrain (idle 900–3600 s, every `--prm-train-cooldown`, 3 h): refit the PRM and the router.

One pass (`ghost_agent.watchdog.retrain_pass`) reads the whole store — the corrections sidecar overlaid, every sample
weighted by who decided its outcome (seed 004) — and fits both models in a **child process** at a lower
CPU priority (`watchdog/process.py`): feature extraction is Python, and in a thread it would hold the
GIL the event loop needs. Then, per model:

* **bail** (too few trajectories or samples, one class, no new data since the live model, too little data to
  hold a slice out while a model is live): the live model stays; the reason is logged.
* **rejected by the swap gate** (`learned/holdout.py`): the candidate, fitted on the older data, scored a worse log
  loss than the live model on the newest held-out slice. Not loaded; kept for inspection at
  `<home>/system/<kind>/rejected/<model id>.json` (the newest `KEEP_REJECTED`), its verdict in the metadata.
* **accepted**: the model refitted on all the data is hot-swapped into the live slot (`ctx.prm_scorer` /
  `ctx.router`; the very next score or dispatch uses it) and saved at the home's default checkpoint path —
  unless the operator pinned one (`--prm-model` / `--router-model`), which is never overwritten: the new
  model then lives in memory until a restart. The PRM's first model also turns MCTS's fast path on: the
  turn builds its reasoner from the live scorer, so the next agent turn searches with it (`mcts_bridged`).

A pass is skipped without spawning anything when the store is empty or nothing in it (records, corrections)
changed since the last pass left the live models as they are. Log events: `retrain` per model (`result`
accepted | rejected | bail | error, the gate's figures for both models), `hot_swap` per swap; the trainers'
own `<kind>_train_*` events come from the child, into the same log file. A swap is also noted in the selfhood
diary (`model_swap`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from ghost_agent.jsonsafe import JSON
from ghost_agent.learned.linear import LogisticModel
from ghost_agent.logging import get_logger
from ghost_agent.watchdog.base import Phase, PhaseContext, PhaseResult, Timing
from ghost_agent.watchdog.phases.journal_drain import tree_signature
from ghost_agent.watchdog.process import run_in_process
from ghost_agent.watchdog.retrain_pass import (
    KINDS,
    RESULT_ACCEPTED,
    RESULT_REJECTED,
    KindResult,
    LogTarget,
    RetrainJob,
    child_main,
    model_from,
    run_job,
)
from ghost_agent.watchdog.run_log import History, iso

log = get_logger("watchdog")

Isolation = Literal["process", "thread"]
KEEP_REJECTED = 20  # rejected checkpoints kept per kind (newest first)
CHILD_NICE = 10  # chat (and the embedded model, on two cores) first: the retrain takes the idle cycles
SOURCE = "retrain"


def rejected_dir(default_checkpoint: Path) -> Path:
    """Where rejected candidates of a kind are kept: `rejected/` beside its default checkpoint."""
    return default_checkpoint.parent / "rejected"


def save_rejected(model: LogisticModel, directory: Path, keep: int = KEEP_REJECTED) -> Path:
    """Write `model` as `<id>.json` in `directory` and drop all but the newest `keep` there (blocking I/O)."""
    path = model.save(directory / f"{model.model_id}.json")
    kept = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in kept[keep:]:
        old.unlink(missing_ok=True)
    return path


class RetrainPhase(Phase):
    """Refit the PRM and the router off the loop; swap in a model only past the swap gate (module doc)."""

    name = "retrain"
    title = "PRM/router retrain"

    def __init__(
        self,
        timing: Timing,
        *,
        key: str = "",
        holdout_fraction: float = 0.2,
        isolation: Isolation = "process",
        kinds: tuple[str, ...] = KINDS,
    ) -> None:
        super().__init__(timing, key=key)
        if isolation not in ("process", "thread"):
            raise ValueError(f"isolation must be process or thread, got {isolation!r}")
        self.holdout_fraction = holdout_fraction
        self.isolation: Isolation = isolation
        self.kinds = kinds
        self._last: tuple[Any, ...] | None = None  # (store signature, live model ids) after the last pass

    async def run(self, ctx: PhaseContext) -> PhaseResult:
        """Skip when nothing changed; else fit (child process), then swap / keep / set aside each model."""
        app = ctx.app
        signature = await ctx.offload(tree_signature, app.collector.root)
        if signature[0] == 0:
            return PhaseResult.skipped("no trajectories yet")
        if self._last == (signature, self._live_ids(ctx)):
            return PhaseResult.skipped("no new trajectories or corrections since the last retrain")
        ctx.check_yield()  # the fit never touches the model, but a user who just arrived gets the CPU first
        job = self._job(ctx)
        if self.isolation == "process":
            results = await run_in_process(child_main, job, name="ghost-retrain", nice=CHILD_NICE)
        else:
            results = await ctx.offload(run_job, job)
        outcome: dict[str, Any] = {}
        for kind in self.kinds:
            outcome[kind] = await self._apply(ctx, kind, results[kind], job.live.get(kind))
            outcome[f"{kind}_model"] = self._slot(ctx, kind).model_id
            self._remember(ctx, kind, outcome[kind], results[kind].report)
        # An error (an unreadable store, a failed fit) is retried next time even if nothing changed.
        errored = any(outcome[kind] == "error" for kind in self.kinds)
        self._last = None if errored else (signature, self._live_ids(ctx))
        return PhaseResult.ok(**outcome)

    def _remember(self, ctx: PhaseContext, kind: str, result: str, report: JSON) -> None:
        """One line of the retrain history: the result and the gate's held-out figures for both sides."""
        record = {"ts": iso(time.time()), "kind": kind, "result": result,
                  "live_model_id": self._slot(ctx, kind).model_id, "samples": report.get("samples"),
                  "reason": report.get("error") or report.get("bail_reason"), "gate": report.get("gate") or {}}
        try:
            History(ctx.app.home.retrain_history).add(record)
        except OSError as exc:
            log.warning("retrain_history_failed", error=repr(exc))

    # ---- the job ---------------------------------------------------------------------------------------

    def _slot(self, ctx: PhaseContext, kind: str) -> Any:
        return ctx.app.prm_scorer if kind == "prm" else ctx.app.router

    def _live_ids(self, ctx: PhaseContext) -> tuple[str | None, ...]:
        return tuple(self._slot(ctx, kind).model_id for kind in self.kinds)

    def _job(self, ctx: PhaseContext) -> RetrainJob:
        settings, home = ctx.app.settings, ctx.app.home
        live: dict[str, JSON | None] = {}
        for kind in self.kinds:
            model = self._slot(ctx, kind).model
            live[kind] = None if model is None else model.to_dict()
        target = None
        if self.isolation == "process":
            logging_on = home.log_file.exists()  # the daemon configured file logging (tests may not)
            target = LogTarget(str(home.log_file) if logging_on else None, level=settings.logging.level,
                               max_bytes=settings.logging.max_bytes, backups=settings.logging.backups)
        return RetrainJob(
            trajectories=str(ctx.app.collector.root),
            kinds=self.kinds,
            live=live,
            holdout_fraction=self.holdout_fraction,
            log=target,
        )

    # ---- applying one kind's result --------------------------------------------------------------------

    def _checkpoint_path(self, ctx: PhaseContext, kind: str) -> tuple[Path, bool]:
        """(the home's default checkpoint of `kind`, whether a retrained model may be saved there)."""
        settings, home = ctx.app.settings, ctx.app.home
        if kind == "prm":
            return home.prm_checkpoint, settings.learning.prm_model is None
        return home.router_checkpoint, settings.learning.router_model is None

    async def _apply(self, ctx: PhaseContext, kind: str, result: KindResult, baseline: JSON | None) -> str:
        """Swap, set aside or keep; log `retrain` (and `hot_swap`). Returns the result word for the status."""
        slot = self._slot(ctx, kind)
        report = result.report
        outcome = result.result
        fields: JSON = {
            "kind": kind,
            "live_model_id": slot.model_id,
            "samples": report.get("samples"),
            "trajectories": report.get("trajectories_used"),
            "seconds": report.get("seconds"),
        }
        gate = report.get("gate") or {}
        if gate:
            fields["gate"] = gate
        if outcome == RESULT_REJECTED:
            assert result.rejected is not None
            rejected = model_from(kind, result.rejected)
            default, _ = self._checkpoint_path(ctx, kind)
            try:
                path: str | None = str(await ctx.offload(save_rejected, rejected, rejected_dir(default)))
            except OSError as exc:
                path = None
                fields["save_error"] = str(exc)
            log.info("retrain", result="rejected", reason=gate.get("reason"), rejected_model_id=rejected.model_id,
                     rejected_path=path, **fields)
            return "rejected"
        if outcome != RESULT_ACCEPTED:
            reason = report.get("error") or report.get("bail_reason") or "no model"
            (log.warning if report.get("error") else log.info)("retrain", result=outcome, reason=reason, **fields)
            return outcome
        assert result.model is not None
        model = model_from(kind, result.model)
        expected = None if baseline is None else baseline.get("model_id")
        if slot.model_id != expected:  # swapped by someone else while we trained: theirs stands
            log.warning("retrain", result="stale", reason="the live model changed during the retrain",
                        model_id=model.model_id, expected_live=expected, **fields)
            return "stale"
        if model.model_id == slot.model_id:
            log.info("retrain", result="unchanged", reason="the refit model is the live one", **fields)
            return "unchanged"
        return await self._swap(ctx, kind, slot, model, fields, gate)

    async def _swap(self, ctx: PhaseContext, kind: str, slot: Any, model: LogisticModel, fields: JSON,
                    gate: JSON) -> str:
        previous, had_model = slot.model_id, slot.has_model
        slot.set_model(model, source=SOURCE)  # one assignment: the very next score / dispatch uses it
        bridged = kind == "prm" and not had_model and ctx.app.settings.agent.mcts
        default, may_save = self._checkpoint_path(ctx, kind)
        checkpoint: str | None = None
        save_error: str | None = None
        if may_save:
            try:
                checkpoint = str(await ctx.offload(model.save, default))
            except (OSError, TypeError, ValueError) as exc:
                save_error = str(exc)  # the swap stands: a failing disk must not lose a good model
        log.info("hot_swap", kind=kind, previous=previous, model_id=model.model_id, source=SOURCE,
                 checkpoint=checkpoint, mcts_bridged=bridged)
        await self._diary(ctx, kind, model.model_id, previous, gate)
        note = None if may_save else f"--{kind}-model is set: kept in memory, that file is not overwritten"
        log.info(
            "retrain", result="swapped", reason=gate.get("reason"), model_id=model.model_id, checkpoint=checkpoint,
            checkpoint_note=note, save_error=save_error, metrics=model.metadata.get("metrics"), mcts_bridged=bridged,
            **{**fields, "live_model_id": previous},
        )
        return "swapped"

    @staticmethod
    async def _diary(ctx: PhaseContext, kind: str, model_id: str, previous: str | None, gate: JSON) -> None:
        """Tell selfhood (its diary of notable events) about the swap; a diary error never undoes the swap."""
        selfhood = ctx.app.selfhood
        if selfhood is None:
            return
        held_out = (gate.get("candidate") or {}).get("log_loss")
        try:
            await selfhood.anote("model_swap", model=kind, model_id=model_id, previous=previous, source=SOURCE,
                                 holdout_log_loss=held_out)
        except OSError as exc:
            log.warning("retrain_diary_failed", kind=kind, error=str(exc))


__all__ = ["KEEP_REJECTED", "RetrainPhase", "rejected_dir", "save_rejected"]
