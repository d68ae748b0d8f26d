"""Freeze a suite result as the baseline, load it back, compare a later run against it.

`freeze` writes the schema-tagged `SuiteResult` JSON atomically (a reader sees the old file or the new one).
`load` turns every way a baseline can be unusable (missing, unreadable, not JSON, another schema) into one
`BaselineError` that says which. `compare` lines the two runs up per suite and per cluster: pass rates, the
delta, and which task ids newly fail or newly pass. A comparison is `regressed` when the top-level pass rate
dropped at all — compared as exact fractions, so float rounding never invents or hides a drop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import orjson

from ghost_agent.atomic import atomic_write_bytes
from ghost_agent.eval.run import HASHED_KEYS
from ghost_agent.eval.task import SuiteResult, TaskOutcome
from ghost_agent.jsonsafe import JSON


class BaselineError(ValueError):
    """A baseline that cannot be used (missing, corrupt, wrong schema, another suite); the message says why."""


def freeze(result: SuiteResult, path: Path) -> Path:
    """Write `result` to `path` as indented JSON, atomically (parent directories created); returns the path."""
    path = Path(path)
    atomic_write_bytes(path, orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return path


def load(path: Path) -> SuiteResult:
    """Read a frozen result; BaselineError for a missing/unreadable file, bad JSON or a non-result document."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist (create it with `freeze`)") from None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from exc
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path} is not valid JSON (corrupt or truncated?): {exc}") from exc
    try:
        return SuiteResult.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise BaselineError(f"baseline {path} is not a usable suite result: {exc}") from exc


def _rate(passed: int, total: int) -> Fraction:
    return Fraction(passed, total) if total else Fraction(0)


@dataclass(frozen=True)
class DiffRow:
    """One line of the diff: the whole suite (`scope="suite"`) or one cluster.

    Counts are (passed, total) on each side; a cluster absent from one side has total 0 there. `newly_failing`
    are task ids that passed in the baseline and fail now; `newly_passing` the reverse (tasks on both sides).
    """

    scope: str
    name: str
    baseline_passed: int
    baseline_total: int
    current_passed: int
    current_total: int
    newly_failing: tuple[str, ...] = ()
    newly_passing: tuple[str, ...] = ()

    @property
    def baseline_rate(self) -> float:
        """Baseline pass rate (0.0 when the baseline has no task here)."""
        return float(_rate(self.baseline_passed, self.baseline_total))

    @property
    def current_rate(self) -> float:
        """Current pass rate (0.0 when the current run has no task here)."""
        return float(_rate(self.current_passed, self.current_total))

    @property
    def delta(self) -> float:
        """current_rate - baseline_rate."""
        return float(_rate(self.current_passed, self.current_total) - _rate(self.baseline_passed, self.baseline_total))

    @property
    def dropped(self) -> bool:
        """True when the pass rate went down at all (exact fractions)."""
        return _rate(self.current_passed, self.current_total) < _rate(self.baseline_passed, self.baseline_total)

    def to_dict(self) -> JSON:
        """A JSON-ready dict (rates rounded to 6 places)."""
        return {
            "scope": self.scope,
            "name": self.name,
            "baseline": {"passed": self.baseline_passed, "total": self.baseline_total,
                         "rate": round(self.baseline_rate, 6)},
            "current": {"passed": self.current_passed, "total": self.current_total,
                        "rate": round(self.current_rate, 6)},
            "delta": round(self.delta, 6),
            "newly_failing": list(self.newly_failing),
            "newly_passing": list(self.newly_passing),
        }


@dataclass(frozen=True)
class Comparison:
    """A current run against its baseline: the suite row first, then one row per cluster (sorted by name)."""

    suite: str
    rows: tuple[DiffRow, ...]
    only_in_baseline: tuple[str, ...] = ()
    only_in_current: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    current_trajectories: dict[str, str] = field(default_factory=dict)  # task id -> trajectory id (current run)

    @property
    def suite_row(self) -> DiffRow:
        """The top-level (whole-suite) row."""
        return self.rows[0]

    @property
    def regressed(self) -> bool:
        """True on ANY drop of the top-level pass rate; cluster-level drops alone do not count."""
        return self.suite_row.dropped

    @property
    def cluster_rows(self) -> tuple[DiffRow, ...]:
        """The per-cluster rows."""
        return self.rows[1:]

    def to_dict(self) -> JSON:
        """A JSON-ready dict."""
        return {
            "suite": self.suite,
            "regressed": self.regressed,
            "rows": [r.to_dict() for r in self.rows],
            "only_in_baseline": list(self.only_in_baseline),
            "only_in_current": list(self.only_in_current),
            "notes": list(self.notes),
        }

    def render_table(self, max_ids: int = 4) -> str:
        """The diff as a text table (suite row, then clusters), each newly failing task with its trajectory
        id, the tasks present on one side only, and any notes; ends with the verdict line."""
        return render_comparison(self, max_ids=max_ids)


def _by_id(outcomes: list[TaskOutcome]) -> dict[str, TaskOutcome]:
    return {o.task_id: o for o in outcomes}


def _row(scope: str, name: str, base: list[TaskOutcome], cur: list[TaskOutcome]) -> DiffRow:
    base_ids, cur_ids = _by_id(base), _by_id(cur)
    common = [tid for tid in cur_ids if tid in base_ids]
    return DiffRow(
        scope=scope,
        name=name,
        baseline_passed=sum(o.passed for o in base),
        baseline_total=len(base),
        current_passed=sum(o.passed for o in cur),
        current_total=len(cur),
        newly_failing=tuple(t for t in common if base_ids[t].passed and not cur_ids[t].passed),
        newly_passing=tuple(t for t in common if cur_ids[t].passed and not base_ids[t].passed),
    )


def compare(baseline: SuiteResult, current: SuiteResult) -> Comparison:
    """Line `current` up against `baseline`; BaselineError when they are results of different suites.

    Differing task sets (another --limit/--ids/seed, or a changed suite) are reported in `only_in_*` and a
    note; rates still compare the whole of each run, as the seed's "top-level pass rate" does. A different
    settings hash (another model, daemon version, timeout, ...) is noted too.
    """
    if baseline.suite != current.suite:
        raise BaselineError(f"the baseline is a {baseline.suite!r} result; this run is the {current.suite!r} suite")
    rows = [_row("suite", current.suite, baseline.outcomes, current.outcomes)]
    clusters = sorted({o.cluster for o in baseline.outcomes} | {o.cluster for o in current.outcomes})
    for cluster in clusters:
        rows.append(_row(
            "cluster",
            cluster,
            [o for o in baseline.outcomes if o.cluster == cluster],
            [o for o in current.outcomes if o.cluster == cluster],
        ))
    base_ids, cur_ids = _by_id(baseline.outcomes), _by_id(current.outcomes)
    only_base = tuple(t for t in base_ids if t not in cur_ids)
    only_cur = tuple(t for t in cur_ids if t not in base_ids)
    notes: list[str] = []
    if only_base or only_cur:
        notes.append(
            f"the task sets differ ({len(only_base)} only in the baseline, {len(only_cur)} only in this run): "
            "rates are not over the same tasks"
        )
    b_hash, c_hash = baseline.metadata.get("settings_hash"), current.metadata.get("settings_hash")
    if b_hash and c_hash and b_hash != c_hash:
        changed = [k for k in HASHED_KEYS if baseline.metadata.get(k) != current.metadata.get(k)]
        notes.append("the settings hash differs" + (f" ({', '.join(changed)} changed)" if changed else ""))
    return Comparison(
        suite=current.suite,
        rows=tuple(rows),
        only_in_baseline=only_base,
        only_in_current=only_cur,
        notes=tuple(notes),
        current_trajectories={o.task_id: o.trajectory_id for o in current.outcomes if o.trajectory_id},
    )


def _pct(passed: int, total: int) -> str:
    return f"{100.0 * passed / total:5.1f}% ({passed}/{total})" if total else "-"


def _ids(ids: tuple[str, ...], limit: int) -> str:
    if not ids:
        return "-"
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit} more" if len(ids) > limit else "")


def render_comparison(comparison: Comparison, *, max_ids: int = 4) -> str:
    """See `Comparison.render_table`."""
    header = ("scope", "baseline", "current", "delta", "newly failing", "newly passing")
    lines: list[tuple[str, ...]] = [header]
    for row in comparison.rows:
        label = f"suite {row.name}" if row.scope == "suite" else f"  {row.name or '(none)'}"
        both = row.baseline_total and row.current_total
        delta = f"{100.0 * row.delta:+.1f} pts" if both else "-"
        if both and row.dropped:
            delta += " !"
        lines.append((
            label,
            _pct(row.baseline_passed, row.baseline_total),
            _pct(row.current_passed, row.current_total),
            delta,
            _ids(row.newly_failing, max_ids),
            _ids(row.newly_passing, max_ids),
        ))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    text = [
        "  ".join(cell.ljust(widths[i]) if i < len(widths) else cell for i, cell in enumerate(line)).rstrip()
        for line in lines
    ]
    text.insert(1, "-" * min(120, max(len(t) for t in text)))
    suite = comparison.suite_row
    if suite.newly_failing:
        text.append("")
        text.append(f"newly failing ({len(suite.newly_failing)}):")
        for tid in suite.newly_failing:
            trajectory = comparison.current_trajectories.get(tid)
            text.append(f"  {tid}" + (f"  trajectory {trajectory}" if trajectory else ""))
    if suite.newly_passing:
        text.append("")
        text.append(f"newly passing ({len(suite.newly_passing)}): {', '.join(suite.newly_passing)}")
    for label, ids in (("only in the baseline", comparison.only_in_baseline),
                       ("only in this run", comparison.only_in_current)):
        if ids:
            text.append(f"{label} ({len(ids)}): {_ids(ids, 10)}")
    for note in comparison.notes:
        text.append(f"note: {note}")
    text.append("")
    if comparison.regressed:
        text.append(f"REGRESSED: pass rate {_pct(suite.baseline_passed, suite.baseline_total).strip()} -> "
                    f"{_pct(suite.current_passed, suite.current_total).strip()}")
    else:
        text.append(f"ok: no drop in the pass rate ({_pct(suite.baseline_passed, suite.baseline_total).strip()} -> "
                    f"{_pct(suite.current_passed, suite.current_total).strip()})")
    return "\n".join(text) + "\n"


__all__ = ["BaselineError", "Comparison", "DiffRow", "compare", "freeze", "load", "render_comparison"]
