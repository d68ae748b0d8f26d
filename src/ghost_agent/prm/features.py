"""Per-step features for the Process Reward Model: `(PlanState, ActionCandidate) → FeatureVector` (seed 000).

25 hand-crafted features in five groups: request shape (8, shared with the router), plan progress (5),
action shape (5), tool bucket (5, a coarse one-hot so a new tool does not invalidate checkpoints) and cross
features (2, catching a re-fire of a tool that already failed this turn).

`PRM_FEATURE_NAMES` is the frozen contract: append, never insert. `extract_step_features` checks its output
against the names on every call and raises `FeatureContractError` if they disagree, so forgetting to compute
a newly named feature fails loud instead of silently shifting every weight.

Extraction never raises on odd input: states and actions may be our dataclasses or plain mappings, tool
args may be anything JSON can hold and worse (null bytes, 50-deep nesting, circular references, hostile
`__str__`); walks are bounded in depth, nodes and characters scanned.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ghost_agent.router.features import (
    FILEPATH_RE,
    REQUEST_FEATURE_NAMES,
    URL_RE,
    request_features,
    text_of,
)

PLAN_FEATURE_NAMES: tuple[str, ...] = (
    "plan_steps_so_far",
    "plan_failures_so_far",
    "plan_pending_count",
    "plan_depth",
    "plan_has_any_failure",
)
ACTION_FEATURE_NAMES: tuple[str, ...] = (
    "act_description_length_log",
    "act_args_count",
    "act_args_total_length_log",
    "act_args_has_url",
    "act_args_has_filepath",
)
TOOL_BUCKET_NAMES: tuple[str, ...] = (
    "tool_is_heavyweight",
    "tool_is_lightweight",
    "tool_is_external",
    "tool_is_memory",
    "tool_is_unknown",
)
CROSS_FEATURE_NAMES: tuple[str, ...] = (
    "cross_tool_already_used_this_turn",
    "cross_tool_failed_this_turn",
)
PRM_FEATURE_NAMES: tuple[str, ...] = (
    REQUEST_FEATURE_NAMES + PLAN_FEATURE_NAMES + ACTION_FEATURE_NAMES + TOOL_BUCKET_NAMES + CROSS_FEATURE_NAMES
)
N_FEATURES = len(PRM_FEATURE_NAMES)

FeatureVector = tuple[float, ...]

# Tool buckets: exact names first, then prefixes. A tool with no name (a direct answer) is in no bucket.
HEAVYWEIGHT = frozenset(
    {"python", "bash", "shell", "sh", "exec", "execute", "execute_code", "run_code", "code", "sandbox",
     "terminal", "jupyter", "notebook", "run_python", "run_bash"}
)
LIGHTWEIGHT = frozenset(
    {"file_system", "filesystem", "fs", "file", "read_file", "write_file", "list_files", "list_dir", "find",
     "glob", "grep", "calculator", "calc", "math", "time", "datetime", "echo", "clock"}
)
EXTERNAL = frozenset(
    {"web_search", "search_web", "search", "fetch", "http", "http_get", "browser", "browse", "web", "url",
     "download", "curl", "wget", "api", "scrape"}
)
MEMORY = frozenset(
    {"memory_search", "memory", "recall", "remember", "learn", "learn_lesson", "lessons", "knowledge",
     "skill_memory", "memory_write"}
)
_PREFIXES: tuple[tuple[str, int], ...] = (
    ("memory_", 3), ("browser_", 2), ("web_", 2), ("http_", 2), ("file_", 1), ("fs_", 1), ("python_", 0),
    ("bash_", 0), ("shell_", 0),
)

ARGS_MAX_DEPTH = 64
ARGS_MAX_NODES = 10_000
ARGS_SCAN_CHARS = 8_000  # how much argument text the URL / path regexes look at
COUNT_MAX = 10**9  # a plan count beyond this is garbage; the cap keeps float() finite and the JSON an int64


class FeatureContractError(RuntimeError):
    """Extraction produced a vector that does not match `PRM_FEATURE_NAMES` (a programming error)."""


def _count(value: Any) -> int:
    """An int in [0, COUNT_MAX] from anything (bad values → 0), so a malformed state cannot break scoring."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return min(value, COUNT_MAX) if value > 0 else 0
    try:
        f = float(value)
    except Exception:  # a hostile __float__ is bad data too
        return 0
    return int(min(f, COUNT_MAX)) if math.isfinite(f) and f > 0 else 0


def _names(value: Any) -> frozenset[str]:
    if value is None or isinstance(value, (str, bytes)):
        return frozenset({value}) if isinstance(value, str) and value else frozenset()
    try:
        return frozenset(n for n in value if isinstance(n, str))
    except Exception:  # not iterable, or an iterator that fails part-way
        return frozenset()


@dataclass(frozen=True)
class PlanState:
    """What the agent knew right before a candidate action: the request and the turn's progress so far.

    Built live by the tool loop and rebuilt from a trajectory's prefix at training time (`labels.py`), so
    the PRM never sees anything that happened after the decision.
    """

    user_request: str = ""
    steps_so_far: int = 0
    failures_so_far: int = 0
    pending_count: int = 0
    plan_depth: int = 0
    tools_used: frozenset[str] = field(default_factory=frozenset)
    tools_failed: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        object.__setattr__(self, "user_request", text_of(self.user_request))
        for name in ("steps_so_far", "failures_so_far", "pending_count", "plan_depth"):
            object.__setattr__(self, name, _count(getattr(self, name)))
        object.__setattr__(self, "tools_used", _names(self.tools_used))
        object.__setattr__(self, "tools_failed", _names(self.tools_failed))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanState:
        """Build from a mapping; missing keys take defaults and malformed values are coerced, never raised."""
        if not isinstance(data, Mapping):
            return cls()
        return cls(
            user_request=data.get("user_request", ""),
            steps_so_far=data.get("steps_so_far", 0),
            failures_so_far=data.get("failures_so_far", 0),
            pending_count=data.get("pending_count", 0),
            plan_depth=data.get("plan_depth", 0),
            tools_used=data.get("tools_used", ()),  # type: ignore[arg-type]
            tools_failed=data.get("tools_failed", ()),  # type: ignore[arg-type]
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tool sets sorted)."""
        return {
            "user_request": self.user_request,
            "steps_so_far": self.steps_so_far,
            "failures_so_far": self.failures_so_far,
            "pending_count": self.pending_count,
            "plan_depth": self.plan_depth,
            "tools_used": sorted(self.tools_used),
            "tools_failed": sorted(self.tools_failed),
        }

    def after(self, action: ActionCandidate, *, ok: bool = True) -> PlanState:
        """The imagined state once `action` has run (used by MCTS to look one step ahead)."""
        tool = action.tool_name
        return PlanState(
            user_request=self.user_request,
            steps_so_far=self.steps_so_far + 1,
            failures_so_far=self.failures_so_far + (0 if ok else 1),
            pending_count=max(0, self.pending_count - 1),
            plan_depth=self.plan_depth + 1,
            tools_used=self.tools_used | {tool} if tool else self.tools_used,
            tools_failed=self.tools_failed | {tool} if tool and not ok else self.tools_failed,
        )


@dataclass(frozen=True)
class ActionCandidate:
    """One proposed action: what it is for, which tool, with which arguments (`tool_name` None = answer)."""

    description: str = ""
    tool_name: str | None = None
    tool_args: Any = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ActionCandidate:
        """Build from a mapping (`tool` is accepted for `tool_name`, `args` for `tool_args`)."""
        if not isinstance(data, Mapping):
            return cls()
        tool = data.get("tool_name", data.get("tool"))
        return cls(
            description=text_of(data.get("description", "")),
            tool_name=tool if isinstance(tool, str) and tool else None,
            tool_args=data.get("tool_args", data.get("args", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"description": self.description, "tool_name": self.tool_name, "tool_args": self.tool_args}


def tool_bucket(tool_name: Any) -> int | None:
    """Index into `TOOL_BUCKET_NAMES` for a tool name; None for no tool (a direct answer)."""
    if not isinstance(tool_name, str) or not tool_name.strip():
        return None
    name = tool_name.strip().lower()
    if name in HEAVYWEIGHT:
        return 0
    if name in LIGHTWEIGHT:
        return 1
    if name in EXTERNAL:
        return 2
    if name in MEMORY:
        return 3
    for prefix, bucket in _PREFIXES:
        if name.startswith(prefix):
            return bucket
    return 4


def args_shape(args: Any) -> tuple[int, int, bool, bool]:
    """`(count, total_length, has_url, has_filepath)` of tool arguments, bounded and cycle-safe.

    count = top-level entries (1 for a bare scalar, 0 for None); total_length = characters of every string
    key/value plus the printed length of numbers, over at most `ARGS_MAX_NODES` nodes and `ARGS_MAX_DEPTH`
    levels; the URL / path checks look at the first `ARGS_SCAN_CHARS` characters of string content.
    """
    if args is None:
        return 0, 0, False, False
    if type(args) is dict:
        flat = _flat_args_shape(args)
        if flat is not None:
            return flat
    count = 1
    if isinstance(args, (Mapping, list, tuple)):
        try:
            count = len(args)
        except Exception:  # a subclass with a hostile __len__
            count = 0
    total = 0
    scan: list[str] = []
    scanned = 0
    nodes = 0
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(args, 0)]
    while stack and nodes < ARGS_MAX_NODES:
        obj, depth = stack.pop()
        nodes += 1
        try:
            if isinstance(obj, str):
                total += len(obj)
                if scanned < ARGS_SCAN_CHARS:
                    piece = obj[: ARGS_SCAN_CHARS - scanned]
                    scan.append(piece)
                    scanned += len(piece)
            elif isinstance(obj, bool) or obj is None:
                total += 4
            elif isinstance(obj, (int, float)):
                total += len(repr(obj)) if not isinstance(obj, int) or abs(obj) < 10**18 else 20
            elif isinstance(obj, (Mapping, list, tuple, set, frozenset)):
                if depth >= ARGS_MAX_DEPTH or id(obj) in seen:
                    continue
                seen.add(id(obj))
                if isinstance(obj, Mapping):
                    for key, value in list(obj.items()):
                        stack.append((key if isinstance(key, str) else str(key)[:64], depth + 1))
                        stack.append((value, depth + 1))
                else:
                    stack.extend((item, depth + 1) for item in list(obj))
            elif isinstance(obj, bytes):
                total += len(obj)
            else:
                total += len(text_of(obj)[:256])
        except Exception:  # a hostile node (raising __iter__, __repr__, items(), ...) counts as nothing
            continue
    blob = "\n".join(scan)
    return count, total, _has_url(blob), _has_path(blob)


def _has_url(text: str) -> bool:
    # the substring pre-checks skip the regex for the common argument with no URL or path in it
    return ("://" in text or "www." in text.lower()) and URL_RE.search(text) is not None


def _has_path(text: str) -> bool:
    return ("/" in text or "." in text) and FILEPATH_RE.search(text) is not None


def _flat_args_shape(args: dict[Any, Any]) -> tuple[int, int, bool, bool] | None:
    """`args_shape` for the common case (a small dict of string keys and scalar values) without the walk.

    Returns None when the dict is not flat, too long to scan whole or past the walk's node budget, so the
    general walk decides (and both paths always agree).
    """
    if 2 * len(args) + 1 > ARGS_MAX_NODES:  # the walk counts the dict, each key and each value as a node
        return None
    total = 0
    texts: list[str] = []
    for key, value in args.items():
        if type(key) is not str:
            return None
        total += len(key)
        texts.append(key)
        kind = type(value)
        if kind is str:
            total += len(value)
            texts.append(value)
        elif kind is int or kind is float:
            if kind is int and abs(value) >= 10**18:
                return None
            total += len(repr(value))
        elif value is None or kind is bool:
            total += 4
        else:
            return None
    if total > ARGS_SCAN_CHARS:
        return None
    blob = "\n".join(texts)
    return len(args), total, _has_url(blob), _has_path(blob)


def _get(obj: Any, name: str, default: Any) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _as_state(state: Any) -> PlanState:
    if isinstance(state, PlanState):
        return state
    if isinstance(state, Mapping):
        return PlanState.from_dict(state)
    return PlanState(
        user_request=_get(state, "user_request", ""),
        steps_so_far=_get(state, "steps_so_far", 0),
        failures_so_far=_get(state, "failures_so_far", 0),
        pending_count=_get(state, "pending_count", 0),
        plan_depth=_get(state, "plan_depth", 0),
        tools_used=_get(state, "tools_used", ()),
        tools_failed=_get(state, "tools_failed", ()),
    )


def _action_parts(action: Any) -> tuple[str, str | None, Any]:
    if isinstance(action, ActionCandidate):
        return action.description, action.tool_name, action.tool_args
    if isinstance(action, Mapping):
        tool = action.get("tool_name", action.get("tool"))
        return text_of(action.get("description", "")), tool, action.get("tool_args", action.get("args", {}))
    return text_of(_get(action, "description", "")), _get(action, "tool_name", None), _get(action, "tool_args", {})


def extract_step_features(state: Any, action: Any) -> FeatureVector:
    """The 25-feature vector for one `(state, action)`, in `PRM_FEATURE_NAMES` order. Never raises on data.

    Raises FeatureContractError only if the code and the frozen names disagree (a bug, not bad input).
    """
    st = _as_state(state)
    return check_vector(state_features(st) + action_features(st, action))


def extract_batch_features(state: Any, actions: Iterable[Any]) -> list[FeatureVector]:
    """`extract_step_features` for many candidates in one state; the state's part is computed once."""
    st = _as_state(state)
    head = state_features(st)
    return [check_vector(head + action_features(st, a)) for a in actions]


def state_features(st: PlanState) -> tuple[float, ...]:
    """The request and plan-progress groups (the first 13 features) of a state."""
    return request_features(st.user_request) + (
        float(st.steps_so_far),
        float(st.failures_so_far),
        float(st.pending_count),
        float(st.plan_depth),
        1.0 if st.failures_so_far > 0 or st.tools_failed else 0.0,
    )


def action_features(st: PlanState, action: Any) -> tuple[float, ...]:
    """The action-shape, tool-bucket and cross groups (the last 12 features) of an action in a state."""
    description, tool_name, tool_args = _action_parts(action)
    tool = tool_name.strip() if isinstance(tool_name, str) and tool_name.strip() else None
    count, total, has_url, has_path = args_shape(tool_args)
    bucket = tool_bucket(tool)
    return (
        math.log1p(len(description)),
        float(count),
        math.log1p(total),
        1.0 if has_url else 0.0,
        1.0 if has_path else 0.0,
        1.0 if bucket == 0 else 0.0,
        1.0 if bucket == 1 else 0.0,
        1.0 if bucket == 2 else 0.0,
        1.0 if bucket == 3 else 0.0,
        1.0 if bucket == 4 else 0.0,
        1.0 if tool is not None and tool in st.tools_used else 0.0,
        1.0 if tool is not None and tool in st.tools_failed else 0.0,
    )


def check_vector(vector: FeatureVector) -> FeatureVector:
    """`vector` unchanged if it has one value per `PRM_FEATURE_NAMES` entry, else FeatureContractError.

    `extract_step_features` passes every vector through here, so code and names cannot drift apart silently.
    """
    if len(vector) != N_FEATURES:
        raise FeatureContractError(
            f"extract_step_features produced {len(vector)} values for {N_FEATURES} PRM_FEATURE_NAMES; "
            "compute every named feature (and append names, never insert)"
        )
    return vector


def feature_dict(vector: Iterable[float]) -> dict[str, float]:
    """A vector as `{name: value}` (for inspection and logs)."""
    return dict(zip(PRM_FEATURE_NAMES, vector, strict=True))


__all__ = [
    "ACTION_FEATURE_NAMES",
    "ActionCandidate",
    "CROSS_FEATURE_NAMES",
    "FeatureContractError",
    "FeatureVector",
    "N_FEATURES",
    "PLAN_FEATURE_NAMES",
    "PRM_FEATURE_NAMES",
    "PlanState",
    "REQUEST_FEATURE_NAMES",
    "TOOL_BUCKET_NAMES",
    "args_shape",
    "check_vector",
    "action_features",
    "extract_batch_features",
    "extract_step_features",
    "state_features",
    "feature_dict",
    "tool_bucket",
]
