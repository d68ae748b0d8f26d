"""The trajectory record (`ghost.trajectory.v1`): the central contract every learning loop reads.

One turn of the agent (a chat request, a self-play task, an eval task, ...) is one `Trajectory` with its
ordered `Step`s. Records round-trip through `to_dict`/`from_dict` losslessly: fields this version does not
know (written by a newer version) are kept in `extra["_unknown"]` and written back where they came from.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

import orjson

from ghost_agent.jsonsafe import JSON

SCHEMA = "ghost.trajectory.v1"
UNKNOWN_KEY = "_unknown"  # where fields from newer writers are preserved


class Outcome(str, enum.Enum):
    """How a trajectory ended, as far as anyone could tell."""

    PASSED = "passed"
    FAILED = "failed"
    UNKNOWN = "unknown"

    @classmethod
    def parse(cls, value: Any) -> Outcome:
        """Lenient: accepts enum members and any-case strings; anything else is UNKNOWN."""
        if isinstance(value, Outcome):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            return cls.UNKNOWN


class Source(str, enum.Enum):
    """What produced the trajectory."""

    CHAT = "chat"
    SELF_PLAY = "self_play"
    EVAL = "eval"
    REFLECTION = "reflection"
    SELF_CONSISTENCY = "self_consistency"


def new_trajectory_id() -> str:
    """A uuid4 hex id, allocated at the START of a turn."""
    return uuid.uuid4().hex


def utc_now_iso() -> str:
    """The current UTC time as ISO-8601 with offset."""
    return datetime.now(timezone.utc).isoformat()


def parse_ts(value: str) -> datetime:
    """An ISO timestamp as an aware UTC datetime (naive input is taken as UTC)."""
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def _split_known(data: JSON, known: set[str]) -> tuple[JSON, JSON]:
    if data.keys() <= known:  # the common case; callers only read `ours`, so no copy is needed
        return data, {}
    ours = {k: v for k, v in data.items() if k in known}
    theirs = {k: v for k, v in data.items() if k not in known}
    return ours, theirs


@dataclass
class Step:
    """One action of a turn: enough to rebuild the state known *before* step `i` (PRM labels need it)."""

    i: int
    description: str = ""
    tool_name: str | None = None
    tool_args: JSON = field(default_factory=dict)
    ok: bool = True
    error: str | None = None
    result_preview: str = ""
    duration_ms: float = 0.0
    prm_score: float | None = None
    extra: JSON = field(default_factory=dict)

    def to_dict(self) -> JSON:
        """A JSON-ready dict; `prm_score` is omitted when unset, unknown fields are written back."""
        out: JSON = {
            "i": self.i,
            "description": self.description,
            "tool_name": self.tool_name,
            "tool_args": self.tool_args,
            "ok": self.ok,
            "error": self.error,
            "result_preview": self.result_preview,
            "duration_ms": self.duration_ms,
        }
        if self.prm_score is not None:
            out["prm_score"] = self.prm_score
        extra = dict(self.extra)
        unknown = extra.pop(UNKNOWN_KEY, None)
        if extra:
            out["extra"] = extra
        if isinstance(unknown, dict):
            for key, value in unknown.items():
                out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> Step:
        """Parse a step; tolerant of missing optional fields, strict about `i` being an int."""
        ours, unknown = _split_known(data, _STEP_FIELDS)
        extra = dict(ours.get("extra") or {})
        if unknown:
            extra[UNKNOWN_KEY] = unknown
        args = ours.get("tool_args")
        return cls(
            i=int(ours.get("i", 0)),
            description=str(ours.get("description") or ""),
            tool_name=ours.get("tool_name"),
            tool_args=args if isinstance(args, dict) else ({} if args is None else {"value": args}),
            ok=bool(ours.get("ok", True)),
            error=ours.get("error"),
            result_preview=str(ours.get("result_preview") or ""),
            duration_ms=float(ours.get("duration_ms") or 0.0),
            prm_score=None if ours.get("prm_score") is None else float(ours["prm_score"]),
            extra=extra,
        )


@dataclass
class Trajectory:
    """One recorded turn. `id` is allocated when the turn starts, so a correction can refer to it early."""

    id: str = field(default_factory=new_trajectory_id)
    session_id: str = "default"
    ts: str = field(default_factory=utc_now_iso)
    source: str = Source.CHAT.value
    user_request: str = ""
    steps: list[Step] = field(default_factory=list)
    final_response: str = ""
    outcome: Outcome = Outcome.UNKNOWN
    failure_reason: str | None = None
    router: JSON | None = None
    planning_output: str | None = None
    verifier: JSON | None = None
    cluster: str | None = None
    usage: JSON | None = None
    timing_ms: JSON | None = None
    extra: JSON = field(default_factory=dict)

    @property
    def day(self) -> str:
        """The UTC day (YYYY-MM-DD) the record is filed under."""
        return parse_ts(self.ts).strftime("%Y-%m-%d")

    def to_dict(self) -> JSON:
        """A JSON-ready dict with the schema tag; optional fields are omitted when unset."""
        out: JSON = {
            "schema": SCHEMA,
            "id": self.id,
            "session_id": self.session_id,
            "ts": self.ts,
            "source": self.source.value if isinstance(self.source, Source) else self.source,
            "user_request": self.user_request,
            "steps": [s.to_dict() for s in self.steps],
            "final_response": self.final_response,
            "outcome": Outcome.parse(self.outcome).value,
            "failure_reason": self.failure_reason,
        }
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        extra = dict(self.extra)
        unknown = extra.pop(UNKNOWN_KEY, None)
        out["extra"] = extra
        if isinstance(unknown, dict):
            for key, value in unknown.items():
                out.setdefault(key, value)
        return out

    def to_json(self) -> bytes:
        """One JSON line's payload (no newline)."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: JSON) -> Trajectory:
        """Parse a record. Raises ValueError for a record without an id or with the wrong schema."""
        schema = data.get("schema", SCHEMA)
        if not isinstance(schema, str) or not schema.startswith("ghost.trajectory."):
            raise ValueError(f"not a trajectory record (schema {schema!r})")
        ours, unknown = _split_known(data, _TRAJ_FIELDS)
        if not ours.get("id"):
            raise ValueError("trajectory record without an id")
        if not isinstance(ours["id"], str):  # readers skip and count it as corrupt rather than invent an id
            raise ValueError(f"trajectory id must be a string, not {type(ours['id']).__name__}")
        extra = dict(ours.get("extra") or {})
        if unknown:
            extra[UNKNOWN_KEY] = unknown
        steps = ours.get("steps") or []
        return cls(
            id=str(ours["id"]),
            session_id=str(ours.get("session_id") or "default"),
            ts=str(ours.get("ts") or utc_now_iso()),
            source=str(ours.get("source") or Source.CHAT.value),
            user_request=str(ours.get("user_request") or ""),
            steps=[Step.from_dict(s) for s in steps if isinstance(s, dict)],
            final_response=str(ours.get("final_response") or ""),
            outcome=Outcome.parse(ours.get("outcome")),
            failure_reason=ours.get("failure_reason"),
            router=ours.get("router"),
            planning_output=ours.get("planning_output"),
            verifier=ours.get("verifier"),
            cluster=ours.get("cluster"),
            usage=ours.get("usage"),
            timing_ms=ours.get("timing_ms"),
            extra=extra,
        )

    @classmethod
    def from_json(cls, line: bytes | str) -> Trajectory:
        """Parse one JSON line (raises orjson.JSONDecodeError / ValueError on garbage)."""
        data = orjson.loads(line)
        if not isinstance(data, dict):
            raise ValueError("trajectory line is not a JSON object")
        return cls.from_dict(data)


_STEP_FIELDS = {f.name for f in fields(Step)}
_TRAJ_FIELDS = {f.name for f in fields(Trajectory)} | {"schema"}
_OPTIONAL = ("router", "planning_output", "verifier", "cluster", "usage", "timing_ms")
