"""The turns the status page lists: one summary per recorded trajectory, newest first, and one turn as a tree.

`TurnIndex` follows the trajectory store the way `tail -f` follows a log: each session file is read from where
the last read stopped, and only the summary of each record is kept in memory (a few hundred bytes), so listing
the last 50 turns of a home with 10,000 costs one read of what was appended since the last request, not a
rescan. Days are indexed newest first and only as far back as a request needs. A user's correction of a turn
(the corrections sidecar) shows on its summary.

`turn_tree` lays one trajectory out as the steps a person wants to see, each with its time: the turn's stages
(context, correction, memory, router, respond, …), inside "respond" the strategy's steps (the programs run, their
results, the checks), and what the turn was shown (lessons, demonstrations, worked examples).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import wire
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.trajectories.record import Outcome, Trajectory

PREVIEW_CHARS = 160
SEARCH_CHARS = 400  # of the request and the reply, lower-cased, per turn in memory: what search matches
MAX_LIMIT = 200


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def latency_ms(traj: Trajectory) -> float | None:
    """The turn's own time: the sum of its stages (what the record's `timing_ms` holds)."""
    stages = [v for k, v in _dict(traj.timing_ms).items() if k.startswith("stage_") and _number(v) is not None]
    return round(sum(stages), 1) if stages else None


def summarize(traj: Trajectory) -> JSON:
    """One row of the turns list."""
    agent, router = _dict(traj.extra.get("agent")), _dict(traj.router)
    route = router.get("decision")
    calls = agent.get("llm_calls")
    return {
        "id": traj.id,
        "ts": traj.ts,
        "source": traj.source,
        "session_id": traj.session_id,
        "outcome": Outcome.parse(traj.outcome).value,
        "route": route if isinstance(route, str) else None,
        "route_reason": router.get("reason") if isinstance(router.get("reason"), str) else None,
        "strategy": agent.get("strategy") if isinstance(agent.get("strategy"), str) else None,
        "latency_ms": latency_ms(traj),
        "llm_calls": calls if isinstance(calls, int) else (1 if route == "fast" else None),
        "prompt_tokens": wire.token_count(traj.usage, "prompt_tokens"),
        "completion_tokens": wire.token_count(traj.usage, "completion_tokens"),
        "tools": sorted({s.tool_name for s in traj.steps if s.tool_name}),
        "lessons_shown": len(traj.extra.get("lessons_shown") or ()),
        "cluster": traj.cluster,
        "request": traj.user_request[:PREVIEW_CHARS],
        "_search": f"{traj.user_request[:SEARCH_CHARS]}\n{traj.final_response[:SEARCH_CHARS]}".casefold(),
    }


@dataclass
class _FileState:
    offset: int = 0
    rows: list[JSON] = field(default_factory=list)


class TurnIndex:
    """Summaries of the recorded turns, read incrementally (thread-safe: endpoints call it off the loop)."""

    def __init__(self, collector: TrajectoryCollector) -> None:
        self.collector = collector
        self._files: dict[Path, _FileState] = {}
        self._where: dict[str, Path] = {}  # trajectory id -> its file, for every indexed turn
        self._lock = threading.Lock()

    def _day_rows(self, day: str) -> list[JSON]:
        rows: list[JSON] = []
        for path in self.collector.day_files(day):
            state = self._files.setdefault(path, _FileState())
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > state.offset:
                records, state.offset = self.collector.read_from(path, state.offset)
                state.rows.extend(summarize(t) for t in records)
                self._where.update((t.id, path) for t in records)
            rows.extend(state.rows)
        return rows

    def page(self, *, limit: int = 50, before: str | None = None, query: str = "", source: str | None = None,
             outcome: str | None = None) -> tuple[list[JSON], str | None]:
        """The newest `limit` turns older than `before` (a ts) that match; and the cursor for the next page
        (None: no more). `query` matches the request or the reply, case-insensitively."""
        limit = max(1, min(limit, MAX_LIMIT))
        needle = query.casefold().strip()
        overlay = self.collector.corrections_overlay()
        out: list[JSON] = []
        with self._lock:
            for day in reversed(self.collector.iter_days()):
                if before is not None and day > before[:10]:
                    continue
                rows = sorted(self._day_rows(day), key=lambda r: r["ts"], reverse=True)
                for row in rows:
                    if before is not None and row["ts"] >= before:
                        continue
                    row = _overlaid(row, overlay)
                    if (source and row["source"] != source) or (outcome and row["outcome"] != outcome):
                        continue
                    if needle and needle not in row["_search"]:
                        continue
                    out.append(row)
                    if len(out) > limit:
                        break
                if len(out) > limit:
                    break
        more = len(out) > limit
        page = [public(r) for r in out[:limit]]
        return page, (page[-1]["ts"] if more and page else None)

    def all_rows(self, *, source: str | None = None) -> list[JSON]:
        """Every turn's summary (corrections overlaid), oldest first: for the per-day figures."""
        overlay = self.collector.corrections_overlay()
        with self._lock:
            rows = [_overlaid(r, overlay) for day in self.collector.iter_days() for r in self._day_rows(day)
                    if source is None or r["source"] == source]
        return sorted(rows, key=lambda r: r["ts"])

    def path_of(self, trajectory_id: str) -> Path | None:
        """The file a turn is in (every day indexed first, incrementally); None when no turn has that id."""
        with self._lock:
            if trajectory_id not in self._where:
                for day in self.collector.iter_days():
                    self._day_rows(day)
            return self._where.get(trajectory_id)

    def find(self, trajectory_id: str) -> Trajectory | None:
        """One turn by id, with its latest correction overlaid."""
        path = self.path_of(trajectory_id)
        if path is not None:
            records, _ = self.collector.read_from(path, 0)
            for traj in records:
                if traj.id == trajectory_id:
                    correction = self.collector.corrections_overlay().get(trajectory_id)
                    if correction is not None:
                        traj.outcome = Outcome.parse(correction.get("outcome"))
                        traj.extra["correction"] = correction
                    return traj
        return None


def _overlaid(row: JSON, overlay: dict[str, JSON]) -> JSON:
    correction = overlay.get(row["id"])
    if correction is None:
        return row
    return {**row, "outcome": Outcome.parse(correction.get("outcome")).value,
            "corrected_by": correction.get("source")}


def per_day(rows: list[JSON], group: str, value: str) -> dict[str, dict[str, dict[str, int]]]:
    """{group value: {day: {value: count}}} over summaries: e.g. per cluster, per day, passed / failed."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        key = row.get(group)
        if key is None:
            continue
        day = str(row["ts"])[:10]
        counts = out.setdefault(str(key), {}).setdefault(day, {})
        name = str(row.get(value))
        counts[name] = counts.get(name, 0) + 1
    return out


def public(row: JSON) -> JSON:
    """A summary without the index's private fields."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


# ------------------------------------------------------------------------------------------------ one turn

def _node(name: str, ms: float | None = None, *, detail: str = "", ok: bool | None = None,
          children: list[JSON] | None = None) -> JSON:
    return {"name": name, "ms": ms, "detail": detail, "ok": ok, "children": children or []}


def _agent_facts(agent: dict[str, Any]) -> list[JSON]:
    """What the strategy reported beyond its steps, as leaves (checks, computed answers, rewrites)."""
    facts: list[JSON] = []
    for key, label in (("kind", "request kind"), ("checks_skipped", "checks skipped"), ("form_fixed", "form fixed"),
                       ("revised", "revised after the draft"), ("aborted", "aborted")):
        value = agent.get(key)
        if value not in (None, "", [], False):
            facts.append(_node(label, detail=str(value)))
    for key, label in (("computed", "computed answer"), ("preferences", "user's preferences"),
                       ("code", "code checks"), ("structured", "structured output")):
        value = agent.get(key)
        if isinstance(value, dict) and value:
            facts.append(_node(label, detail=", ".join(f"{k}: {v}" for k, v in value.items()
                                                      if not isinstance(v, (dict, list)))[:400]))
    return facts


def _model_calls(agent: dict[str, Any]) -> list[JSON]:
    """The strategy's model calls in order (draft, checks, revisions, rewrites), each with its time and tokens."""
    out = []
    for call in agent.get("calls") or ():
        if not isinstance(call, dict):
            continue
        tokens = [f"{call[k]} {label}" for k, label in (("prompt_tokens", "in"), ("completion_tokens", "out"))
                  if isinstance(call.get(k), int)]
        out.append(_node(f"model: {call.get('purpose', 'call')}", _number(call.get("ms")), detail=", ".join(tokens)))
    return out


def turn_tree(traj: Trajectory) -> JSON:
    """The turn as a tree of timed steps."""
    timing = _dict(traj.timing_ms)
    agent = _dict(traj.extra.get("agent"))
    steps = [_node(f"{s.i}. {s.tool_name or 'step'}", s.duration_ms, detail=s.description[:300], ok=s.ok,
                   children=[_node("result", detail=(s.error or s.result_preview)[:600])]
                   + ([_node("process reward", detail=f"{s.prm_score:.2f}")] if s.prm_score is not None else []))
             for s in traj.steps]
    stages: list[JSON] = []
    for key, value in timing.items():
        if not key.startswith("stage_") or _number(value) is None:
            continue
        name = key.removeprefix("stage_")
        children: list[JSON] = []
        if name == "respond":
            strategy = agent.get("strategy") or (_dict(traj.router).get("decision") or "fast") + " path"
            calls = agent.get("llm_calls")
            children = [_node(str(strategy), _number(agent.get("ms")),
                              detail=f"{calls} model calls" if isinstance(calls, int) else "",
                              children=_model_calls(agent) + steps + _agent_facts(agent))]
        stages.append(_node(name, round(float(value), 1), children=children))
    if traj.verifier:
        stages.append(_node("verifier", detail=", ".join(f"{k}: {v}" for k, v in traj.verifier.items()
                                                         if not isinstance(v, (dict, list)))[:400]))
    return _node("turn", latency_ms(traj), detail=traj.user_request[:PREVIEW_CHARS], children=stages)


def turn_detail(traj: Trajectory) -> JSON:
    """`GET /v1/ghost/turns/{id}`: the record's readable parts, its tree and what it was shown."""
    router, usage = _dict(traj.router), _dict(traj.usage)
    return {
        "id": traj.id, "ts": traj.ts, "source": traj.source, "session_id": traj.session_id,
        "outcome": Outcome.parse(traj.outcome).value, "failure_reason": traj.failure_reason,
        "request": traj.user_request, "reply": traj.final_response, "router": router, "usage": usage,
        "latency_ms": latency_ms(traj), "tree": turn_tree(traj),
        "lessons_shown": list(traj.extra.get("lessons_shown") or ()),
        "demonstrations_shown": list(traj.extra.get("demonstrations_shown") or ()),
        "examples_shown": list(traj.extra.get("examples_shown") or ()),
        "corrected_prior": traj.extra.get("corrected_prior"),
        "correction": traj.extra.get("correction"),
    }


__all__ = ["TurnIndex", "latency_ms", "per_day", "public", "summarize", "turn_detail", "turn_tree"]
