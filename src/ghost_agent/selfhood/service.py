"""`Selfhood`: the diary, the self-state, the narrative and the wake-up prefix of one home, as the daemon holds
them (`AgentServices.selfhood`).

Files in `$GHOST_HOME/system/selfhood/`:

    diary.jsonl      notable events (`selfhood/diary.py`)
    self_state.json  strengths and weaknesses per task kind (`selfhood/self_state.py`)
    narrative.json   the model-written note and the facts it was written from (`selfhood/narrative.py`)
    observer.json    what the phase has already turned into diary entries (cursors)

Every JSON file is replaced atomically. The narrative is loaded once at startup (`load`, in a thread) and
kept in memory; `wake_up_prefix()` is a plain attribute read, so the turn path never touches the disk.

Other subsystems record events with `note(kind, **facts)` (e.g. the retrain phase after a hot swap:
`note("model_swap", model="prm", model_id=...)`). When selfhood is disabled every call is a no-op.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import orjson

from ghost_agent.atomic import atomic_write_bytes
from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger
from ghost_agent.selfhood.diary import Diary, DiaryEntry
from ghost_agent.selfhood.narrative import Narrative, wake_up_prefix

log = get_logger("selfhood")


class Selfhood:
    """The selfhood files of `root` and the narrative in force. Thread-safe for `note` and the prefix read."""

    def __init__(self, root: Path, *, enabled: bool = True) -> None:
        self.root = Path(root)
        self.enabled = enabled
        self.diary = Diary(self.root / "diary.jsonl")
        self.narrative: Narrative | None = None
        self._prefix = ""
        # Model ids an event was already recorded for (the phase's swap detector and `note` share it).
        self.models_seen: dict[str, str] = {}

    @property
    def state_path(self) -> Path:
        return self.root / "self_state.json"

    @property
    def narrative_path(self) -> Path:
        return self.root / "narrative.json"

    @property
    def observer_path(self) -> Path:
        return self.root / "observer.json"

    # ---- the prefix ----------------------------------------------------------------------------------------

    def wake_up_prefix(self) -> str:
        """The per-turn system text ("" when disabled or before the first narrative). No I/O."""
        return self._prefix if self.enabled else ""

    def load(self) -> None:
        """Read the stored narrative (and the observer's model ids); a missing or unusable file is no narrative."""
        if not self.enabled:
            return
        data = read_json(self.narrative_path)
        if data is not None:
            try:
                self._install(Narrative.from_dict(data))
            except ValueError as exc:
                log.warning("narrative_unusable", path=str(self.narrative_path), error=str(exc))
        observer = read_json(self.observer_path) or {}
        models = observer.get("models")
        if isinstance(models, dict):
            self.models_seen.update({str(k): str(v) for k, v in models.items() if isinstance(v, str)})

    def set_narrative(self, narrative: Narrative) -> None:
        """Persist a new narrative (atomic replace), then make it the wake-up prefix of the next turn."""
        atomic_write_bytes(self.narrative_path, orjson.dumps(narrative.to_dict(), option=orjson.OPT_INDENT_2))
        self._install(narrative)

    def _install(self, narrative: Narrative) -> None:
        self.narrative = narrative
        self._prefix = wake_up_prefix(narrative)

    # ---- the diary -----------------------------------------------------------------------------------------

    def note(self, kind: str, **facts: Any) -> DiaryEntry | None:
        """Record a notable event in the diary (blocking: one small append). None when disabled.

        `note("model_swap", model=..., model_id=...)` also tells the phase's swap detector that this swap is
        recorded, so it is not recorded twice.
        """
        if not self.enabled:
            return None
        if kind == "model_swap" and isinstance(facts.get("model"), str) and isinstance(facts.get("model_id"), str):
            self.models_seen[facts["model"]] = facts["model_id"]
        entry = self.diary.append(kind, **facts)
        log.info("diary_entry", kind=entry.kind, facts=entry.facts)
        return entry

    async def anote(self, kind: str, **facts: Any) -> DiaryEntry | None:
        """`note` in a worker thread."""
        return await asyncio.to_thread(functools.partial(self.note, kind, **facts))

    # ---- the self-state and the observer's cursors ---------------------------------------------------------

    def save_state(self, state: JSON) -> None:
        """Persist the self-state (atomic replace)."""
        atomic_write_bytes(self.state_path, orjson.dumps(state, option=orjson.OPT_INDENT_2))

    def read_state(self) -> JSON | None:
        """The stored self-state, or None."""
        return read_json(self.state_path)

    def read_observer(self) -> JSON:
        """The phase's cursors ({} before its first run)."""
        return read_json(self.observer_path) or {}

    def save_observer(self, observer: JSON) -> None:
        """Persist the phase's cursors (atomic replace), with the model ids already recorded."""
        doc = {**observer, "models": dict(self.models_seen)}
        atomic_write_bytes(self.observer_path, orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def read_json(path: Path) -> JSON | None:
    """A JSON object from `path`, or None when missing, unreadable or not an object (logged)."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        log.warning("selfhood_file_unreadable", path=str(path), error=str(exc))
        return None
    return data if isinstance(data, dict) else None


__all__ = ["Selfhood", "read_json"]
