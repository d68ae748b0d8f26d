"""Every setting by its config key, in flag order: its [table] in ghost.toml, where it lives, its help and range.

A key is also the env var `GHOST_<KEY>` and the flag `--<key-with-dashes>`; its type, default and choices come
from the section dataclass that holds it (`sections.py`). The CLI flags, the env and config readers,
`public_dict` and `config/ghost.toml` all iterate this table, so a setting cannot exist in one place and be
missing from another; building it fails at import when a key and the section fields disagree.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from ghost_agent.settings.sections import SECTIONS, default_home


@dataclass(frozen=True)
class Key:
    """One setting as written in the table below; `Spec` adds what its section says about it."""

    table: str  # its [table] in ghost.toml, and the section holding it (unless `top`)
    name: str  # the config key
    help: str
    lo: float | None = None
    hi: float | None = None
    attr: str | None = None  # its attribute in the section, where it differs from the key
    top: bool = False  # held by Settings itself, not by a section (home, config)


@dataclass(frozen=True)
class Spec:
    """One setting: its config key, where it lives, its type, help and range."""

    name: str
    table: str
    section: str | None  # the Settings attribute holding it; None: Settings itself
    attr: str
    annotation: Any  # the resolved type, e.g. int, Path | None, Literal["lazy", "off"]
    help: str
    lo: float | None
    hi: float | None
    default_factory: Callable[[], Any] = field(repr=False, compare=False)

    @property
    def env(self) -> str:
        return env_name(self.name)

    @property
    def flag(self) -> str:
        return flag_name(self.name)

    @property
    def optional(self) -> bool:
        """Unset (None) is a valid value: the empty string reads as unset."""
        return type(None) in get_args(self.annotation)

    @property
    def choices(self) -> tuple[str, ...] | None:
        return get_args(self.annotation) if get_origin(self.annotation) is Literal else None

    @property
    def base(self) -> type:
        """The scalar type (bool, int, float, str, Path) of the value; a choice is a str."""
        if self.choices is not None:
            return str
        args = [a for a in get_args(self.annotation) if a is not type(None)]
        base = args[0] if args else self.annotation
        assert isinstance(base, type) and base in (bool, int, float, str, Path), (self.name, base)
        return base

    @property
    def default(self) -> Any:
        return self.default_factory()


def env_name(name: str) -> str:
    """The GHOST_* environment variable of a setting."""
    return "GHOST_" + name.upper()


def flag_name(name: str) -> str:
    """The command-line flag of a setting."""
    return "--" + name.replace("_", "-")


TABLE: tuple[Key, ...] = (
    Key("server", "host", "Address to bind."),
    Key("server", "port", "Port to bind.", lo=0, hi=65535),
    Key("server", "api_key", "Require `Authorization: Bearer <key>` on /v1/* and /metrics."),
    Key("server", "insecure_no_auth", "Allow binding a non-loopback host without an api key."),
    Key("server", "max_request_bytes", "Largest accepted request body in bytes (larger -> 413).", lo=1024),
    Key("server", "max_request_line_bytes",
        "Longest request target (path and query) in bytes; longer -> 414, before auth.", lo=256,
    ),
    Key("server", "max_header_bytes",
        "Largest request line plus headers in bytes; larger -> 431, before auth (memory per connection is "
        "bounded by it).", lo=1024,
    ),
    Key("server", "max_headers", "Most header fields in one request; more -> 431, before auth.", lo=8),
    Key("server", "header_timeout_s",
        "Seconds a request's line and headers may take to arrive from its first byte -> 408 (a connection "
        "that sends nothing is closed after it).", lo=0.05,
    ),
    Key("server", "body_timeout_s",
        "Seconds a request body may take to arrive once its headers have -> 408 (stops slow-trickle clients).",
        lo=0.05,
    ),
    Key("server", "shutdown_grace_s", "Seconds in-flight requests get to finish on SIGTERM.", lo=0),
    Key("server", "max_n",
        "Largest `n` (choices per chat request) accepted; each choice is a full completion or agent turn, so "
        "a request costs n times one. Above it -> 400.", lo=1, hi=16,
    ),
    Key("server", "cors_allow_origins",
        "Browser origins allowed to call the API, comma-separated (e.g. http://localhost:3000); unset -> CORS"
        " off: no Access-Control-* headers, so web pages cannot read replies. `*` allows every page you "
        "visit, so use it only together with an api key.",
    ),
    Key("server", "allowed_hosts",
        "Host names the daemon answers to besides loopback addresses, `localhost` and the bound host, "
        "comma-separated (e.g. ghost.lan); a request naming any other Host -> 403, which stops DNS rebinding. "
        "`*` turns the check off.",
    ),
    Key("backend", "upstream_url",
        "OpenAI-compatible upstream (server root like http://127.0.0.1:8080 or a .../v1 base URL); unset -> "
        "the embedded local model.",
    ),
    Key("backend", "model",
        "Model name sent to the upstream in place of the client's (also advertised at /v1/models and named in"
        " replies unless served_model_name is set); unset -> the client's (upstream) or the local model's "
        "name (embedded).",
    ),
    Key("backend", "served_model_name",
        "An alias: the one name /v1/models advertises and every reply's `model` says, whatever the client "
        "sent; the upstream still receives `model` (unset: the first model the upstream lists). Unset -> "
        "`model`, else the local model's name or what the upstream lists.",
    ),
    Key("backend", "upstream_api_key", "Bearer token sent to the upstream, if it needs one."),
    Key("backend", "upstream_connect_timeout", "Seconds to connect to the upstream.", lo=0.001),
    Key("backend", "upstream_timeout", "Seconds to wait for upstream bytes (read timeout) -> 504.", lo=0.001),
    Key("backend", "upstream_retries",
        "Retries on connect errors / 502 / 503 / 504 before any byte was sent.", lo=0, hi=10,
    ),
    Key("backend", "upstream_max_connections", "Connection pool size towards the upstream.", lo=1),
    Key("backend", "local_model", "Embedded model used without an upstream."),
    Key("backend", "model_cache_dir", "Where the embedded model file is assembled (shared across homes)."),
    Key("backend", "n_ctx", "Context length of the embedded model.", lo=512, hi=32768),
    Key("backend", "n_threads", "Inference threads of the embedded model (0 = all cores).", lo=0),
    Key("backend", "queue_max", "Embedded model: requests waiting beyond this get 503 + Retry-After.", lo=0),
    Key("backend", "embeddings",
        "POST /v1/embeddings. lazy = the embedded model loads a second, embedding-mode instance of its "
        "weights on the first request (about 1.2 GB more RAM for the 1.5B, 0.5 GB for the 0.5B, held until "
        "shutdown); with an upstream the request is forwarded to it. off = 501 on every backend.",
    ),
    Key("storage", "home", "GHOST_HOME: trajectories, checkpoints, logs, workspace.", top=True),
    Key("storage", "record_trajectories", "Record every turn as a trajectory (the learning loops read them)."),
    Key("storage", "trajectory_durability",
        "When trajectory appends reach the disk: batch = written through at once and fsynced by the journal "
        "drain (a process crash loses nothing); fsync = fsync every append; none = never fsync.",
    ),
    Key("storage", "trajectory_max_session_files",
        "Session files one day of trajectories may hold; records of further sessions that day go to one "
        "shared overflow file (session-+overflow.jsonl, session ids kept in the records), so no record is "
        "lost and clients inventing session ids cannot exhaust the directory.", lo=1,
    ),
    Key("storage", "trajectory_flush_s",
        "With durability=batch, fsync recorded trajectories at least this often (0 = only when idle/at "
        "shutdown); a busy daemon that never idles still gets its records onto the disk.", lo=0,
    ),
    Key("logging", "log_level", "Minimum level logged.", attr="level"),
    Key("logging", "log_format", "Console log format (the file is always JSON lines).", attr="format"),
    Key("logging", "log_max_bytes",
        "Rotate $GHOST_HOME/system/logs/ghost.jsonl when a write would take it past this size (bytes; 0 = "
        "never rotate). An external logrotate also works: the file is reopened when it is moved.",
        lo=0, attr="max_bytes",
    ),
    Key("logging", "log_backups",
        "Rotated log files kept (ghost.jsonl.1 is the newest; 0 = rotation discards the old log).",
        lo=0, hi=1000, attr="backups",
    ),
    Key("agent", "router",
        "Fast path or full agent per request: auto = the learned router, or until it is trained a fixed prior"
        " (conversation and facts -> fast; computation, code, files, run/test/check -> agent); unsure -> "
        "agent. always-agent / always-fast force one route (the router's p is still logged).",
    ),
    Key("agent", "max_steps", "Tool calls one agent turn may make before it must answer.", lo=1, hi=50),
    Key("agent", "mcts", "Pick each action among several candidates (MCTS); --no-mcts = single-shot."),
    Key("agent", "mcts_simulate",
        "Without a trained PRM, rank MCTS candidates by LLM simulation (one model call per candidate). Off by"
        " default: on the embedded 1.5B it cost ~8x the wall time and got fewer answers right "
        "(docs/agent-turn.md); with a PRM loaded the search costs microseconds and always runs.",
    ),
    Key("agent", "mcts_candidates", "Candidate actions proposed per step when MCTS is on.", lo=1, hi=10),
    Key("agent", "mcts_expand", "Best candidates looked at one step deeper (0 = no lookahead).", lo=0, hi=10),
    Key("agent", "native_tools",
        "Send OpenAI `tools` to the backend: auto = try, and stop for this backend if it rejects them; on / "
        "off. The JSON action protocol in the system prompt works either way.",
    ),
    Key("agent", "agent_strategy",
        "How an agent turn works: answer-first = draft the reply as the bare model would, then check and "
        "repair it with the sandbox (run its code against tests, compute its numbers, fix the requested "
        "form); action-loop = the JSON/native tool loop from the first call; auto = answer-first, and the "
        "tool loop for questions about files in the workspace (code asked for over data files stays answer-first; "
        "docs/agent-turn.md has the measurements).",
        attr="strategy",
    ),
    Key("agent", "check_model_tests",
        "Assertions the model writes from the spec to test a code answer when the request gives no examples "
        "of its own (answer-first; 0 = never).", lo=0, hi=20,
    ),
    Key("agent", "check_revisions", "Repair rounds after a code answer fails its checks (answer-first).", lo=0, hi=5),
    Key("agent", "check_samples",
        "Fresh candidates sampled when the repaired code answer still fails (answer-first).", lo=0, hi=10,
    ),
    Key("agent", "check_compute",
        "Quantitative questions answered without code get a program that computes the answer; a disagreement "
        "is reconciled in one call (answer-first).",
    ),
    Key("agent", "preference_rewrite",
        "A turn shown the user's stated preference rewrites its finished reply to follow it (one call, kept only "
        "when it broke nothing), then checks it was followed and repairs once (answer-first).",
    ),
    Key("agent", "preference_rules",
        "A stated preference of a known kind (the clock, a date pattern, a temperature unit, a money format) is "
        "applied to the reply by rule, converting the values, and kept out of the draft's notes.",
    ),
    Key("agent", "verifier", "Check tool-using turns' replies against the request (one LLM call)."),
    Key("agent", "verifier_refute_confidence",
        "A REFUTED verdict this confident adds a note to the reply and retracts the turn's lessons.", lo=0.0, hi=1.0,
    ),
    Key("agent", "memory_top_k", "Lessons shown to the model per request (0 = none).", lo=0, hi=20),
    Key("agent", "stream_tool_progress", "Stream tool calls and results as content while a streamed agent turn runs."),
    Key("server", "sse_keepalive_s",
        "A streamed reply that has nothing to send for this long sends an SSE comment (`: keep-alive`), so "
        "proxies and client read timeouts do not cut a long agent turn (0 = never).", lo=0.0,
    ),
    Key("agent", "agent_max_tokens", "Token budget of each model call inside an agent turn.", lo=16, attr="max_tokens"),
    Key("sandbox", "sandbox",
        "Sandbox for model-written code: auto = bubblewrap (the variant that passes the startup probe), else "
        "the code tools refuse (the daemon still chats; fix: make sandbox); bwrap = the same; unisolated = "
        "bubblewrap, else run code WITHOUT network or filesystem isolation (explicit opt-in, logged and "
        "reported as degraded); subprocess = always the unisolated restricted subprocess.", attr="mode",
    ),
    Key("sandbox", "sandbox_timeout_s",
        "Default wall-clock limit of one execution (seconds).", lo=0.1, attr="timeout_s",
    ),
    Key("sandbox", "sandbox_memory_mb", "Default memory limit of one execution (MB).", lo=16, attr="memory_mb"),
    Key("sandbox", "sandbox_max_procs", "Processes/threads one execution may run.", lo=1, attr="max_procs"),
    Key("sandbox", "sandbox_concurrency",
        "Executions running at once (0 = one per CPU core).", lo=0, attr="concurrency",
    ),
    Key("sandbox", "sandbox_max_output_kb",
        "Output kept per stream (KB); the rest is marked truncated.", lo=1, attr="max_output_kb",
    ),
    Key("sandbox", "workspace_quota_mb", "Size limit of one session's workspace (MB).", lo=1),
    Key("sandbox", "workspace_max_age_days", "Workspaces untouched this long are deleted (days; 0 = never).", lo=0),
    Key("sandbox", "workspace_max_count",
        "Session workspaces kept at most; creating one more deletes the least recently used idle one (0 = no "
        "limit).", lo=0,
    ),
    Key("learning", "prm_model",
        "PRM checkpoint loaded at startup (default: the home's self-trained one if present; missing -> "
        "neutral scorer).",
    ),
    Key("learning", "router_model",
        "Router checkpoint loaded at startup (default: the home's self-trained one if present; missing -> the"
        " untrained prior routes).",
    ),
    Key("learning", "prm_train_cooldown",
        "Seconds between PRM/router retrain phases (watchdog phase 2.7; scaled).", lo=0,
    ),
    Key("learning", "retrain_holdout_fraction",
        "Retrain swap gate: the newest share of the samples (whole trajectories, at least 10 samples) held "
        "out; a retrained PRM/router goes live only if its log loss there is no worse than the live model's.",
        lo=0.01, hi=0.5,
    ),
    Key("learning", "frontier_selfplay", "Frontier-weighted self-play cluster selection."),
    Key("learning", "frontier_uniform_sample_prob",
        "Chance a self-play tick ignores frontier weighting.", lo=0.0, hi=1.0,
    ),
    Key("learning", "selfplay_tasks_per_pass", "Tasks one self-play pass (phase 3) sets itself.", lo=0, hi=100),
    Key("learning", "selfplay_attempts",
        "Attempts per self-play task (several give a pass rate and pass/fail pairs of one task).", lo=1, hi=10,
    ),
    Key("learning", "experience_top_k",
        "Worked examples from the experience bank (validated self-play solutions) shown per request, as a "
        "delimited data block before the last user message (0 = none).", lo=0, hi=10,
    ),
    Key("learning", "demonstrations",
        "Keep the reply a user accepted after stating a preference as that lesson's demonstration, and show it "
        "with the lesson on similar requests.",
    ),
    Key("learning", "experience_max_examples",
        "Examples the experience bank keeps; past it the lowest-valued (failed after being shown) go first.",
        lo=1, hi=100000,
    ),
    Key("learning", "reflection",
        "Reflect on failed turns: a user correction at once (after the reply), the rest in the watchdog's "
        "reflection backstop; the lessons go to the lesson store.",
    ),
    Key("learning", "reflection_timeout_s",
        "Per-call timeout of one reflection critique (s): a slow model gives no lesson, never a stuck task.", lo=0.1,
    ),
    Key("learning", "reflection_max_tokens", "Token budget of one reflection critique.", lo=16),
    Key("learning", "reflection_batch",
        "Failed trajectories one reflection backstop pass reflects on at most.", lo=0, hi=100,
    ),
    Key("learning", "reflection_lookback_h",
        "The reflection backstop looks at failed trajectories this recent (hours).", lo=0.01,
    ),
    Key("learning", "skills_min_support",
        "Skills phase (2.6): a tool sequence becomes a candidate once this many validator-passing turns "
        "contain it (candidates are never promoted automatically: `ghost-agent skills promote`).", lo=2, hi=1000,
    ),
    Key("learning", "skills_scan_batch",
        "Trajectory lines one skills pass reads at most (the rest waits for the next pass; progress is kept).", lo=1,
    ),
    Key("learning", "selfhood",
        "Selfhood (phase 2.8): keep a diary of notable events and a self-state per task kind, and have the "
        "model write a short narrative from them.",
    ),
    Key("learning", "selfhood_narrative",
        "Write the narrative and put it in front of every turn as the wake-up prefix (one capped line of "
        "system text after the fixed prefix); off = diary and self-state only.",
    ),
    Key("watchdog", "watchdog",
        "Run the biological watchdog: idle-time phases (journal drain, REM dream, ...).", attr="enabled",
    ),
    Key("watchdog", "watchdog_tick_s", "Seconds between watchdog ticks (scaled).", lo=0.001, attr="tick_s"),
    Key("watchdog", "idle_time_scale",
        "Multiplies every idle window, cooldown and the tick: 0.01 runs the cycle 100x faster (demos, tests).",
        lo=1e-06, hi=1000.0,
    ),
    Key("watchdog", "journal_drain_idle_s", "Phase 1 (journal drain) runs after this much idle time (s).", lo=0),
    Key("watchdog", "journal_drain_cooldown_s", "Phase 1 cooldown (s; 0 = every tick).", lo=0),
    Key("watchdog", "rem_dream_idle_s", "Phase 2 (REM dream) idle window start (s).", lo=0),
    Key("watchdog", "rem_dream_idle_max_s", "Phase 2 idle window end (s).", lo=0),
    Key("watchdog", "rem_dream_cooldown_s", "Phase 2 cooldown (s).", lo=0),
    Key("watchdog", "dream_archive_days",
        "REM dream archives (never deletes) unpinned lessons unused this many days (0 = never; not scaled).", lo=0,
    ),
    Key("watchdog", "dream_merge_jaccard",
        "REM dream merges a session's unpinned lessons whose token-set Jaccard is at least this (the "
        "duplicate is archived, its provenance moves to the survivor).", lo=0.3, hi=1.0,
    ),
    Key("watchdog", "reflection_idle_s", "Phase 2.5 (reflection backstop) idle window start (s).", lo=0),
    Key("watchdog", "reflection_idle_max_s", "Phase 2.5 idle window end (s).", lo=0),
    Key("watchdog", "reflection_cooldown_s", "Phase 2.5 cooldown (s).", lo=0),
    Key("watchdog", "skills_auto_idle_s", "Phase 2.6 (skills_auto) idle window start (s).", lo=0),
    Key("watchdog", "skills_auto_idle_max_s", "Phase 2.6 idle window end (s).", lo=0),
    Key("watchdog", "skills_auto_cooldown_s", "Phase 2.6 cooldown (s).", lo=0),
    Key("watchdog", "retrain_idle_s",
        "Phase 2.7 (PRM/router retrain) idle window start (s); its cooldown is prm_train_cooldown.", lo=0,
    ),
    Key("watchdog", "retrain_idle_max_s", "Phase 2.7 idle window end (s).", lo=0),
    Key("watchdog", "selfhood_idle_s", "Phase 2.8 (selfhood narrative) idle window start (s).", lo=0),
    Key("watchdog", "selfhood_idle_max_s", "Phase 2.8 idle window end (s).", lo=0),
    Key("watchdog", "selfhood_cooldown_s", "Phase 2.8 cooldown (s).", lo=0),
    Key("watchdog", "self_play_idle_s", "Phase 3 (self-play) runs after this much idle time (s).", lo=0),
    Key("watchdog", "self_play_cooldown_s", "Phase 3 cooldown (s).", lo=0),
    Key("storage", "config",
        "Config file to read; it must exist (default: $GHOST_HOME/config.toml when that file exists, else "
        "none; /dev/null reads none).", top=True,
    ),
)

# Settings' own fields (not in a section): their types and defaults.
_TOP: dict[str, tuple[Any, Callable[[], Any]]] = {"home": (Path, default_home), "config": (Path | None, lambda: None)}


def _spec(key: Key) -> Spec:
    attr = key.attr or key.name
    if key.top:
        annotation, factory = _TOP[key.name]
        return Spec(key.name, key.table, None, attr, annotation, key.help, key.lo, key.hi, factory)
    cls = SECTIONS[key.table]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    f = fields[attr]
    default = f.default_factory if f.default_factory is not dataclasses.MISSING else _constant(f.default)
    annotation = _hints(cls)[attr]
    return Spec(key.name, key.table, key.table, attr, annotation, key.help, key.lo, key.hi, default)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _check_complete(specs: dict[str, Spec]) -> None:
    held = {(s.section, s.attr) for s in specs.values() if s.section is not None}
    fields = {(name, f.name) for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)}
    if held != fields or len(held) + len(_TOP) != len(specs):
        raise AssertionError(f"settings table and sections disagree: {sorted(held ^ fields)}")


FIELDS: dict[str, Spec] = {key.name: _spec(key) for key in TABLE}
_check_complete(FIELDS)

SECRET_FIELDS = frozenset({"api_key", "upstream_api_key"})
URL_FIELDS = frozenset({"upstream_url"})  # shown through `redact_url`: a URL may carry user:password@
