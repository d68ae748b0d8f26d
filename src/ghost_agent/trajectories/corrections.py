"""The corrections sidecar: outcome changes learned after a trajectory was written (seed 001, DESIGN §3).

One file, `<trajectories>/corrections.jsonl`, never day-partitioned (the workload is one line per corrected
turn, and a single file lets readers build the overlay in O(corrections)). Each line is
`{trajectory_id, outcome, reason, source, ts}`; readers keep the LAST line per id in file order (= write
order, appends are serialized). Malformed lines are skipped and counted; ids with no trajectory (orphans)
simply never match. Writing goes through `TrajectoryCollector.update_outcome` (same locking, durability and
redaction as trajectory appends).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger
from ghost_agent.trajectories.record import Outcome, utc_now_iso

log = get_logger("distill.corrections")

CORRECTIONS_FILE = "corrections.jsonl"
CORRECTION_SOURCES = frozenset({"user_correction", "verifier", "heuristic", "self_play", "eval"})
_OUTCOMES = frozenset(o.value for o in Outcome)


def make_correction(trajectory_id: str, outcome: Outcome | str, reason: str | None, *, source: str) -> JSON:
    """A validated sidecar record. ValueError for an empty id, an unknown outcome or an unknown source."""
    if not isinstance(trajectory_id, str) or not trajectory_id:
        raise ValueError("a correction needs a trajectory id")
    value = outcome.value if isinstance(outcome, Outcome) else str(outcome).strip().lower()
    if value not in _OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r} (valid: {', '.join(sorted(_OUTCOMES))})")
    if source not in CORRECTION_SOURCES:
        raise ValueError(f"unknown correction source {source!r} (valid: {', '.join(sorted(CORRECTION_SOURCES))})")
    return {
        "trajectory_id": trajectory_id,
        "outcome": value,
        "reason": None if reason is None else str(reason),
        "source": source,
        "ts": utc_now_iso(),
    }


def parse_correction(line: bytes) -> JSON | None:
    """A sidecar line as a dict, or None when malformed (bad JSON, not an object, no id, bad outcome)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    tid, outcome = data.get("trajectory_id"), data.get("outcome")
    if not isinstance(tid, str) or not tid or not isinstance(outcome, str):
        return None
    outcome = outcome.strip().lower()
    if outcome not in _OUTCOMES:
        return None
    reason = data.get("reason")
    return {
        "trajectory_id": tid,
        "outcome": outcome,
        "reason": reason if reason is None or isinstance(reason, str) else str(reason),
        "source": data.get("source"),
        "ts": data.get("ts"),
    }


class CorrectionsSidecar:
    """Reads the sidecar into an id -> latest correction map, cached until the file changes (size/mtime/inode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._key: tuple[int, int, int] | None = None
        self._overlay: dict[str, JSON] = {}
        self._lines = 0
        self._malformed = 0
        self._logged_malformed = 0

    def overlay(self) -> dict[str, JSON]:
        """The latest correction per trajectory id. Never raises: an unreadable file is logged, overlay empty."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            with self._lock:
                self._key, self._overlay, self._lines, self._malformed = None, {}, 0, 0
            return {}
        except OSError as exc:
            log.warning("corrections_unreadable", file=str(self.path), error=str(exc))
            return {}
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            if key != self._key:
                self._reload(key)
            return self._overlay

    def _reload(self, key: tuple[int, int, int]) -> None:
        overlay: dict[str, JSON] = {}
        lines = malformed = 0
        try:
            with open(self.path, "rb") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    lines += 1
                    correction = parse_correction(line)
                    if correction is None:
                        malformed += 1
                        continue
                    overlay[correction["trajectory_id"]] = correction  # last write wins
        except OSError as exc:
            log.warning("corrections_unreadable", file=str(self.path), error=str(exc))
            return
        self._key, self._overlay, self._lines, self._malformed = key, overlay, lines, malformed
        if malformed and malformed != self._logged_malformed:
            self._logged_malformed = malformed
            log.warning("corrections_malformed_line", file=str(self.path), count=malformed)

    def stats(self) -> dict[str, Any]:
        """Lines read and malformed lines skipped in the current overlay."""
        self.overlay()
        with self._lock:
            return {"lines": self._lines, "malformed": self._malformed, "ids": len(self._overlay)}
