"""One Settings dataclass, resolved as: defaults < config file < GHOST_* env < CLI flags.

Every field carries its own metadata (section, help, choices, range), and the CLI, the env reader, the
config reader and `config/ghost.toml`'s documentation all derive from it, so a setting cannot exist in one
place and be missing from another.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghost_agent.privacy.redact import redact_url

LOCAL_MODELS = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")


class SettingsError(ValueError):
    """A setting has an invalid value; the message names the setting and the valid range."""


def _meta(
    section: str,
    help: str,
    *,
    choices: tuple[str, ...] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    cli: bool = True,
    flag: str | None = None,
) -> dict[str, Any]:
    return {
        "section": section,
        "help": help,
        "choices": choices,
        "lo": lo,
        "hi": hi,
        "cli": cli,
        "flag": flag,
    }


def _default_home() -> Path:
    return Path("~/.ghost").expanduser()


def _default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "ghost-agent" / "models"


@dataclass
class Settings:
    """Every runtime setting of the daemon. Field metadata drives CLI flags, env vars and the config file."""

    # --- server
    host: str = field(default="127.0.0.1", metadata=_meta("server", "Address to bind."))
    port: int = field(default=8000, metadata=_meta("server", "Port to bind.", lo=0, hi=65535))
    api_key: str | None = field(
        default=None,
        metadata=_meta("server", "Require `Authorization: Bearer <key>` on /v1/* and /metrics."),
    )
    insecure_no_auth: bool = field(
        default=False,
        metadata=_meta("server", "Allow binding a non-loopback host without an api key."),
    )
    max_request_bytes: int = field(
        default=4 * 1024 * 1024,
        metadata=_meta("server", "Largest accepted request body in bytes (larger -> 413).", lo=1024),
    )
    shutdown_grace_s: float = field(
        default=10.0,
        metadata=_meta("server", "Seconds in-flight requests get to finish on SIGTERM.", lo=0),
    )
    max_n: int = field(
        default=4,
        metadata=_meta(
            "server",
            "Largest `n` (choices per chat request) accepted; each choice is a full completion or agent turn, so "
            "a request costs n times one. Above it -> 400.",
            lo=1, hi=16,
        ),
    )
    cors_allow_origins: str | None = field(
        default=None,
        metadata=_meta(
            "server",
            "Browser origins allowed to call the API, comma-separated (e.g. http://localhost:3000); unset -> CORS "
            "off: no Access-Control-* headers, so web pages cannot read replies. `*` allows every page you visit, "
            "so use it only together with an api key.",
        ),
    )
    # --- backend
    upstream_url: str | None = field(
        default=None,
        metadata=_meta(
            "backend",
            "OpenAI-compatible upstream (server root like http://127.0.0.1:8080 or a .../v1 base URL); "
            "unset -> the embedded local model.",
        ),
    )
    model: str | None = field(
        default=None,
        metadata=_meta(
            "backend",
            "Model name sent to the upstream in place of the client's (also advertised at /v1/models and named "
            "in replies unless served_model_name is set); unset -> the client's (upstream) or the local model's "
            "name (embedded).",
        ),
    )
    served_model_name: str | None = field(
        default=None,
        metadata=_meta(
            "backend",
            "An alias: the one name /v1/models advertises and every reply's `model` says, whatever the client "
            "sent; the upstream still receives `model` (unset: the first model the upstream lists). Unset -> "
            "`model`, else the local model's name or what the upstream lists.",
        ),
    )
    upstream_api_key: str | None = field(
        default=None, metadata=_meta("backend", "Bearer token sent to the upstream, if it needs one.")
    )
    upstream_connect_timeout: float = field(
        default=5.0, metadata=_meta("backend", "Seconds to connect to the upstream.", lo=0.001)
    )
    upstream_timeout: float = field(
        default=300.0,
        metadata=_meta("backend", "Seconds to wait for upstream bytes (read timeout) -> 504.", lo=0.001),
    )
    upstream_retries: int = field(
        default=2,
        metadata=_meta(
            "backend", "Retries on connect errors / 502 / 503 / 504 before any byte was sent.", lo=0, hi=10
        ),
    )
    upstream_max_connections: int = field(
        default=256, metadata=_meta("backend", "Connection pool size towards the upstream.", lo=1)
    )
    local_model: str = field(
        default="qwen2.5-coder-1.5b",
        metadata=_meta("backend", "Embedded model used without an upstream.", choices=LOCAL_MODELS),
    )
    model_cache_dir: Path = field(
        default_factory=_default_cache,
        metadata=_meta("backend", "Where the embedded model file is assembled (shared across homes)."),
    )
    n_ctx: int = field(
        default=8192, metadata=_meta("backend", "Context length of the embedded model.", lo=512, hi=32768)
    )
    n_threads: int = field(
        default=0, metadata=_meta("backend", "Inference threads of the embedded model (0 = all cores).", lo=0)
    )
    queue_max: int = field(
        default=16,
        metadata=_meta("backend", "Embedded model: requests waiting beyond this get 503 + Retry-After.", lo=0),
    )
    embeddings: str = field(
        default="lazy",
        metadata=_meta(
            "backend",
            "POST /v1/embeddings. lazy = the embedded model loads a second, embedding-mode instance of its weights "
            "on the first request (about 1.2 GB more RAM for the 1.5B, 0.5 GB for the 0.5B, held until shutdown); "
            "with an upstream the request is forwarded to it. off = 501 on every backend.",
            choices=("lazy", "off"),
        ),
    )
    # --- storage / logs
    home: Path = field(
        default_factory=_default_home,
        metadata=_meta("storage", "GHOST_HOME: trajectories, checkpoints, logs, workspace."),
    )
    record_trajectories: bool = field(
        default=True,
        metadata=_meta("storage", "Record every turn as a trajectory (the learning loops read them)."),
    )
    trajectory_durability: str = field(
        default="batch",
        metadata=_meta(
            "storage",
            "When trajectory appends reach the disk: batch = written through at once and fsynced by the "
            "journal drain (a process crash loses nothing); fsync = fsync every append; none = never fsync.",
            choices=("batch", "fsync", "none"),
        ),
    )
    trajectory_max_session_files: int = field(
        default=1024,
        metadata=_meta(
            "storage",
            "Session files one day of trajectories may hold; records of further sessions that day go to one shared "
            "overflow file (session-+overflow.jsonl, session ids kept in the records), so no record is lost and "
            "clients inventing session ids cannot exhaust the directory.",
            lo=1,
        ),
    )
    trajectory_flush_s: float = field(
        default=5.0,
        metadata=_meta(
            "storage",
            "With durability=batch, fsync recorded trajectories at least this often (0 = only when idle/at "
            "shutdown); a busy daemon that never idles still gets its records onto the disk.",
            lo=0,
        ),
    )
    log_level: str = field(
        default="info",
        metadata=_meta("logging", "Minimum level logged.", choices=("debug", "info", "warning", "error")),
    )
    log_format: str = field(
        default="console",
        metadata=_meta("logging", "Console log format (the file is always JSON lines).", choices=("json", "console")),
    )
    log_max_bytes: int = field(
        default=20 * 1024 * 1024,
        metadata=_meta(
            "logging",
            "Rotate $GHOST_HOME/system/logs/ghost.jsonl when a write would take it past this size "
            "(bytes; 0 = never rotate). An external logrotate also works: the file is reopened when it is moved.",
            lo=0,
        ),
    )
    log_backups: int = field(
        default=5,
        metadata=_meta(
            "logging", "Rotated log files kept (ghost.jsonl.1 is the newest; 0 = rotation discards the old log).",
            lo=0, hi=1000,
        ),
    )
    # --- agent (the turn)
    router: str = field(
        default="auto",
        metadata=_meta(
            "agent",
            "Fast path or full agent per request: auto = the learned router, or until it is trained a fixed prior "
            "(conversation and facts -> fast; computation, code, files, run/test/check -> agent); unsure -> agent. "
            "always-agent / always-fast force one route (the router's p is still logged).",
            choices=("auto", "always-agent", "always-fast"),
        ),
    )
    max_steps: int = field(
        default=6, metadata=_meta("agent", "Tool calls one agent turn may make before it must answer.", lo=1, hi=50)
    )
    mcts: bool = field(
        default=True,
        metadata=_meta("agent", "Pick each action among several candidates (MCTS); --no-mcts = single-shot."),
    )
    mcts_simulate: bool = field(
        default=False,
        metadata=_meta(
            "agent",
            "Without a trained PRM, rank MCTS candidates by LLM simulation (one model call per candidate). Off by "
            "default: on the embedded 1.5B it cost ~8x the wall time and got fewer answers right "
            "(docs/agent-turn.md); with a PRM loaded the search costs microseconds and always runs.",
        ),
    )
    mcts_candidates: int = field(
        default=3, metadata=_meta("agent", "Candidate actions proposed per step when MCTS is on.", lo=1, hi=10)
    )
    mcts_expand: int = field(
        default=1, metadata=_meta("agent", "Best candidates looked at one step deeper (0 = no lookahead).", lo=0, hi=10)
    )
    native_tools: str = field(
        default="auto",
        metadata=_meta(
            "agent",
            "Send OpenAI `tools` to the backend: auto = try, and stop for this backend if it rejects them; "
            "on / off. The JSON action protocol in the system prompt works either way.",
            choices=("auto", "on", "off"),
        ),
    )
    agent_strategy: str = field(
        default="auto",
        metadata=_meta(
            "agent",
            "How an agent turn works: answer-first = draft the reply as the bare model would, then check and repair "
            "it with the sandbox (run its code against tests, compute its numbers, fix the requested form); "
            "action-loop = the JSON/native tool loop from the first call; auto = answer-first, and the tool loop "
            "for requests about files in the workspace (docs/agent-turn.md has the measurements).",
            choices=("auto", "answer-first", "action-loop"),
        ),
    )
    check_model_tests: int = field(
        default=5,
        metadata=_meta(
            "agent", "Assertions the model writes from the spec to test a code answer when the request gives no "
            "examples of its own (answer-first; 0 = never).", lo=0, hi=20,
        ),
    )
    check_revisions: int = field(
        default=1, metadata=_meta("agent", "Repair rounds after a code answer fails its checks (answer-first).",
                                  lo=0, hi=5),
    )
    check_samples: int = field(
        default=1,
        metadata=_meta("agent", "Fresh candidates sampled when the repaired code answer still fails (answer-first).",
                       lo=0, hi=10),
    )
    check_compute: bool = field(
        default=True,
        metadata=_meta(
            "agent", "Quantitative questions answered without code get a program that computes the answer; a "
            "disagreement is reconciled in one call (answer-first).",
        ),
    )
    verifier: bool = field(
        default=True, metadata=_meta("agent", "Check tool-using turns' replies against the request (one LLM call).")
    )
    verifier_refute_confidence: float = field(
        default=0.7,
        metadata=_meta(
            "agent", "A REFUTED verdict this confident adds a note to the reply and retracts the turn's lessons.",
            lo=0.0, hi=1.0,
        ),
    )
    memory_top_k: int = field(
        default=3, metadata=_meta("agent", "Lessons shown to the model per request (0 = none).", lo=0, hi=20)
    )
    stream_tool_progress: bool = field(
        default=False,
        metadata=_meta("agent", "Stream tool calls and results as content while a streamed agent turn runs."),
    )
    sse_keepalive_s: float = field(
        default=10.0,
        metadata=_meta(
            "server", "A streamed reply that has nothing to send for this long sends an SSE comment "
            "(`: keep-alive`), so proxies and client read timeouts do not cut a long agent turn (0 = never).",
            lo=0.0,
        ),
    )
    agent_max_tokens: int = field(
        default=1024, metadata=_meta("agent", "Token budget of each model call inside an agent turn.", lo=16)
    )
    # --- sandbox (model-written code)
    sandbox: str = field(
        default="auto",
        metadata=_meta(
            "sandbox",
            "Sandbox for model-written code: auto = bubblewrap (the variant that passes the startup probe), "
            "else the code tools refuse (the daemon still chats; fix: make sandbox); bwrap = the same; "
            "unisolated = bubblewrap, else run code WITHOUT network or filesystem isolation (explicit opt-in, "
            "logged and reported as degraded); subprocess = always the unisolated restricted subprocess.",
            choices=("auto", "bwrap", "unisolated", "subprocess"),
        ),
    )
    sandbox_timeout_s: float = field(
        default=30.0, metadata=_meta("sandbox", "Default wall-clock limit of one execution (seconds).", lo=0.1)
    )
    sandbox_memory_mb: int = field(
        default=512, metadata=_meta("sandbox", "Default memory limit of one execution (MB).", lo=16)
    )
    sandbox_max_procs: int = field(
        default=64, metadata=_meta("sandbox", "Processes/threads one execution may run.", lo=1)
    )
    sandbox_concurrency: int = field(
        default=0, metadata=_meta("sandbox", "Executions running at once (0 = one per CPU core).", lo=0)
    )
    sandbox_max_output_kb: int = field(
        default=64, metadata=_meta("sandbox", "Output kept per stream (KB); the rest is marked truncated.", lo=1)
    )
    workspace_quota_mb: int = field(
        default=256, metadata=_meta("sandbox", "Size limit of one session's workspace (MB).", lo=1)
    )
    workspace_max_age_days: float = field(
        default=7.0, metadata=_meta("sandbox", "Workspaces untouched this long are deleted (days; 0 = never).", lo=0)
    )
    workspace_max_count: int = field(
        default=256,
        metadata=_meta(
            "sandbox",
            "Session workspaces kept at most; creating one more deletes the least recently used idle one "
            "(0 = no limit).",
            lo=0,
        ),
    )
    # --- learning (stored now, used by later stages)
    prm_model: Path | None = field(
        default=None,
        metadata=_meta(
            "learning",
            "PRM checkpoint loaded at startup (default: the home's self-trained one if present; "
            "missing -> neutral scorer).",
        ),
    )
    router_model: Path | None = field(
        default=None,
        metadata=_meta(
            "learning",
            "Router checkpoint loaded at startup (default: the home's self-trained one if present; "
            "missing -> the untrained prior routes).",
        ),
    )
    prm_train_cooldown: float = field(
        default=10800.0,
        metadata=_meta("learning", "Seconds between PRM/router retrain phases (watchdog phase 2.7; scaled).", lo=0),
    )
    retrain_holdout_fraction: float = field(
        default=0.2,
        metadata=_meta(
            "learning",
            "Retrain swap gate: the newest share of the samples (whole trajectories, at least 10 samples) held "
            "out; a retrained PRM/router goes live only if its log loss there is no worse than the live model's.",
            lo=0.01,
            hi=0.5,
        ),
    )
    frontier_selfplay: bool = field(
        default=True, metadata=_meta("learning", "Frontier-weighted self-play cluster selection.")
    )
    frontier_uniform_sample_prob: float = field(
        default=0.2,
        metadata=_meta("learning", "Chance a self-play tick ignores frontier weighting.", lo=0.0, hi=1.0),
    )
    reflection: bool = field(
        default=True,
        metadata=_meta(
            "learning",
            "Reflect on failed turns: a user correction at once (after the reply), the rest in the watchdog's "
            "reflection backstop; the lessons go to the lesson store.",
        ),
    )
    reflection_timeout_s: float = field(
        default=120.0,
        metadata=_meta(
            "learning", "Per-call timeout of one reflection critique (s): a slow model gives no lesson, never a "
            "stuck task.", lo=0.1,
        ),
    )
    reflection_max_tokens: int = field(
        default=384, metadata=_meta("learning", "Token budget of one reflection critique.", lo=16)
    )
    reflection_batch: int = field(
        default=5, metadata=_meta("learning", "Failed trajectories one reflection backstop pass reflects on at most.",
                                  lo=0, hi=100)
    )
    reflection_lookback_h: float = field(
        default=48.0,
        metadata=_meta("learning", "The reflection backstop looks at failed trajectories this recent (hours).",
                       lo=0.01),
    )
    skills_min_support: int = field(
        default=3,
        metadata=_meta(
            "learning", "Skills phase (2.6): a tool sequence becomes a candidate once this many validator-passing "
            "turns contain it (candidates are never promoted automatically: `ghost-agent skills promote`).",
            lo=2, hi=1000,
        ),
    )
    skills_scan_batch: int = field(
        default=2000,
        metadata=_meta("learning", "Trajectory lines one skills pass reads at most (the rest waits for the next "
                                   "pass; progress is kept).", lo=1),
    )
    selfhood: bool = field(
        default=True,
        metadata=_meta(
            "learning", "Selfhood (phase 2.8): keep a diary of notable events and a self-state per task kind, and "
            "have the model write a short narrative from them.",
        ),
    )
    selfhood_narrative: bool = field(
        default=True,
        metadata=_meta(
            "learning", "Write the narrative and put it in front of every turn as the wake-up prefix (one capped "
            "line of system text after the fixed prefix); off = diary and self-state only.",
        ),
    )
    # --- watchdog (idle-time phases, DESIGN §5; every window and cooldown is scaled by idle_time_scale)
    watchdog: bool = field(
        default=True,
        metadata=_meta("watchdog", "Run the biological watchdog: idle-time phases (journal drain, REM dream, ...)."),
    )
    watchdog_tick_s: float = field(
        default=60.0, metadata=_meta("watchdog", "Seconds between watchdog ticks (scaled).", lo=0.001)
    )
    idle_time_scale: float = field(
        default=1.0,
        metadata=_meta(
            "watchdog", "Multiplies every idle window, cooldown and the tick: 0.01 runs the cycle 100x faster "
            "(demos, tests).", lo=1e-6, hi=1000.0,
        ),
    )
    journal_drain_idle_s: float = field(
        default=120.0, metadata=_meta("watchdog", "Phase 1 (journal drain) runs after this much idle time (s).", lo=0)
    )
    journal_drain_cooldown_s: float = field(
        default=0.0, metadata=_meta("watchdog", "Phase 1 cooldown (s; 0 = every tick).", lo=0)
    )
    rem_dream_idle_s: float = field(
        default=600.0, metadata=_meta("watchdog", "Phase 2 (REM dream) idle window start (s).", lo=0)
    )
    rem_dream_idle_max_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2 idle window end (s).", lo=0)
    )
    rem_dream_cooldown_s: float = field(
        default=1800.0, metadata=_meta("watchdog", "Phase 2 cooldown (s).", lo=0)
    )
    dream_archive_days: float = field(
        default=30.0,
        metadata=_meta(
            "watchdog", "REM dream archives (never deletes) unpinned lessons unused this many days (0 = never; "
            "not scaled).", lo=0,
        ),
    )
    dream_merge_jaccard: float = field(
        default=0.7,
        metadata=_meta(
            "watchdog", "REM dream merges a session's unpinned lessons whose token-set Jaccard is at least this "
            "(the duplicate is archived, its provenance moves to the survivor).", lo=0.3, hi=1.0,
        ),
    )
    reflection_idle_s: float = field(
        default=900.0, metadata=_meta("watchdog", "Phase 2.5 (reflection backstop) idle window start (s).", lo=0)
    )
    reflection_idle_max_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2.5 idle window end (s).", lo=0)
    )
    reflection_cooldown_s: float = field(
        default=2400.0, metadata=_meta("watchdog", "Phase 2.5 cooldown (s).", lo=0)
    )
    skills_auto_idle_s: float = field(
        default=900.0, metadata=_meta("watchdog", "Phase 2.6 (skills_auto) idle window start (s).", lo=0)
    )
    skills_auto_idle_max_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2.6 idle window end (s).", lo=0)
    )
    skills_auto_cooldown_s: float = field(
        default=7200.0, metadata=_meta("watchdog", "Phase 2.6 cooldown (s).", lo=0)
    )
    retrain_idle_s: float = field(
        default=900.0,
        metadata=_meta("watchdog", "Phase 2.7 (PRM/router retrain) idle window start (s); its cooldown is "
                                   "prm_train_cooldown.", lo=0),
    )
    retrain_idle_max_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2.7 idle window end (s).", lo=0)
    )
    selfhood_idle_s: float = field(
        default=900.0, metadata=_meta("watchdog", "Phase 2.8 (selfhood narrative) idle window start (s).", lo=0)
    )
    selfhood_idle_max_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2.8 idle window end (s).", lo=0)
    )
    selfhood_cooldown_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 2.8 cooldown (s).", lo=0)
    )
    self_play_idle_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 3 (self-play) runs after this much idle time (s).", lo=0)
    )
    self_play_cooldown_s: float = field(
        default=3600.0, metadata=_meta("watchdog", "Phase 3 cooldown (s).", lo=0)
    )
    config: Path | None = field(
        default=None,
        metadata=_meta(
            "storage",
            "Config file to read; it must exist (default: $GHOST_HOME/config.toml when that file exists, else "
            "none; /dev/null reads none).",
            cli=True,
        ),
    )

    def __post_init__(self) -> None:
        # Programmatic callers may pass plain strings for paths.
        for name in ("home", "model_cache_dir", "prm_model", "router_model", "config"):
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, Path(value).expanduser())

    # ------------------------------------------------------------------ derived
    @property
    def is_loopback(self) -> bool:
        """True when the bind host only accepts local connections (a literal loopback IP or `localhost`)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False  # a hostname could resolve anywhere: treat it as exposed

    @property
    def cors_origins(self) -> list[str]:
        """The CORS allow-list as a list (empty: CORS off)."""
        return [o.strip().rstrip("/") for o in (self.cors_allow_origins or "").split(",") if o.strip()]

    def validate(self) -> Settings:
        """Check cross-field rules; returns self so calls chain."""
        for f in dataclasses.fields(self):
            check_value(f.name, getattr(self, f.name))
        if self.api_key is not None and (not self.api_key.strip() or self.api_key != self.api_key.strip()):
            # Clients' tokens are compared stripped: a key that is blank or padded could never be sent.
            raise SettingsError(
                "api_key is blank or starts/ends with whitespace: no client could send it; "
                "set a real key (e.g. `openssl rand -hex 32`) or leave it unset"
            )
        for phase in WINDOWED_PHASES:
            lo, hi = getattr(self, f"{phase}_idle_s"), getattr(self, f"{phase}_idle_max_s")
            if hi <= lo:
                raise SettingsError(f"{phase}_idle_max_s ({hi}) must be greater than {phase}_idle_s ({lo})")
        if not self.is_loopback and not self.api_key and not self.insecure_no_auth:
            raise SettingsError(
                f"refusing to bind non-loopback host {self.host!r} without an api key: "
                "set --api-key (or GHOST_API_KEY), or pass --insecure-no-auth"
            )
        for origin in self.cors_origins:
            if origin != "*" and not _ORIGIN.fullmatch(origin):
                raise SettingsError(
                    f"cors_allow_origins: {origin!r} is not an origin; write scheme://host[:port] (no path), "
                    "comma-separated, or *"
                )
        if self.upstream_url is not None and not self.upstream_url.startswith(("http://", "https://")):
            shown = redact_url(self.upstream_url)
            raise SettingsError(f"upstream_url must start with http:// or https://, got {shown!r}")
        return self

    def public_dict(self) -> dict[str, Any]:
        """Settings as plain JSON-able values with secrets masked and URLs without their userinfo (for logs and
        /health)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_FIELDS and value:
                value = "***"
            elif f.name in URL_FIELDS and isinstance(value, str):
                value = redact_url(value)
            elif isinstance(value, Path):
                value = str(value)
            out[f.name] = value
        return out


# A browser origin: scheme://host[:port], nothing after it (an IPv6 host in brackets).
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://(\[[0-9a-f:.]+\]|[^/\s:?#\[\]@]+)(:\d{1,5})?", re.IGNORECASE)
SECRET_FIELDS = frozenset({"api_key", "upstream_api_key"})
URL_FIELDS = frozenset({"upstream_url"})  # shown through `redact_url`: a URL may carry user:password@
WINDOWED_PHASES = ("rem_dream", "reflection", "skills_auto", "retrain", "selfhood")  # idle windows with an end
FIELDS: dict[str, dataclasses.Field[Any]] = {f.name: f for f in dataclasses.fields(Settings)}


def env_name(name: str) -> str:
    """The GHOST_* environment variable of a setting."""
    return "GHOST_" + name.upper()


def field_type(name: str) -> type:
    """The scalar type (int, float, bool, str, Path) behind a field's annotation."""
    ann = str(FIELDS[name].type)
    for token, typ in (("bool", bool), ("int", int), ("float", float), ("Path", Path)):
        if ann.startswith(token):
            return typ
    return str


def coerce(name: str, raw: Any) -> Any:
    """Turn a raw value (str from env/CLI, or a TOML scalar) into the field's type, validating it."""
    if name not in FIELDS:
        raise SettingsError(f"unknown setting {name!r}")
    typ = field_type(name)
    value: Any
    try:
        if raw is None or (raw == "" and FIELDS[name].default is None):
            value = None
        elif typ is bool:
            if isinstance(raw, bool):
                value = raw
            elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                value = True
            elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                value = False
            else:
                raise ValueError("expected true/false")
        elif typ is int:
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError("expected an integer")
            value = int(raw)
        elif typ is float:
            if isinstance(raw, bool):
                raise ValueError("expected a number")
            value = float(raw)
        elif typ is Path:
            value = Path(str(raw)).expanduser()
        else:
            value = str(raw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"{name}: invalid value {raw!r} ({exc})") from None
    check_value(name, value)
    return value


def arg_type(name: str) -> Callable[[str], Any]:
    """An argparse `type=` for a setting: coerces and validates, failing as a usage error that names the range."""

    def convert(raw: str) -> Any:
        try:
            return coerce(name, raw)
        except SettingsError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    convert.__name__ = name  # argparse names the type in its messages
    return convert


def check_value(name: str, value: Any) -> None:
    """Raise SettingsError if `value` is outside the field's choices or range."""
    meta = FIELDS[name].metadata
    if value is None:
        return
    if meta["choices"] and value not in meta["choices"]:
        raise SettingsError(f"{name}: invalid choice {value!r}; valid choices are {', '.join(meta['choices'])}")
    lo, hi = meta["lo"], meta["hi"]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value != value:  # NaN
            raise SettingsError(f"{name}: NaN is not a valid value")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise SettingsError(f"{name}: {value} is out of range; valid range is {_range_text(lo, hi)}")


def _range_text(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"[{lo}, {hi}]"
    if lo is not None:
        return f">= {lo}"
    return f"<= {hi}"


def read_config_file(path: Path) -> dict[str, Any]:
    """Read a ghost.toml; keys may sit at top level or inside [section] tables. Unknown keys are errors."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"config file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    for key, value in data.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for name, raw in items:
            name = name.replace("-", "_")
            if name not in FIELDS or name == "config":
                raise SettingsError(f"config file {path}: unknown setting {name!r}")
            flat[name] = coerce(name, raw)
    return flat


HOME_CONFIG_NAME = "config.toml"


def home_config_path(home: Path) -> Path:
    """The config file read by default: `config.toml` in GHOST_HOME (used only when it exists)."""
    return home / HOME_CONFIG_NAME


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings given as GHOST_* environment variables (empty strings are ignored)."""
    out: dict[str, Any] = {}
    for name in FIELDS:
        raw = environ.get(env_name(name))
        if raw is not None and raw != "":
            out[name] = coerce(name, raw)
    return out


def load_settings(
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Resolve defaults < config file < env < CLI into a validated Settings (see `resolve_settings`)."""
    return resolve_settings(cli, environ, config_path)[0]


def resolve_settings(
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> tuple[Settings, dict[str, str]]:
    """Resolve defaults < config file < env < CLI; also return where each value came from.

    The config file is `--config` (CLI), else `config_path`, else `GHOST_CONFIG`, and then it must exist;
    without any of them it is `$GHOST_HOME/config.toml` (GHOST_HOME from --home / GHOST_HOME / the default)
    when that file exists, else none. That implicit file cannot set `home`: it is found through it.
    Sources are "default", "config <path>", "env GHOST_X" or "flag --x".
    """
    environ = os.environ if environ is None else environ
    cli_values = {k: coerce(k, v) for k, v in (cli or {}).items() if v is not None}
    env_values = read_env(environ)
    explicit = cli_values.get("config") or config_path or env_values.get("config")
    path: Path | None
    if explicit is not None:
        path = Path(explicit).expanduser()
    else:
        home = cli_values.get("home") or env_values.get("home") or _default_home()
        path = home_config_path(Path(home))
        try:
            if not path.is_file():
                path = None
        except OSError as exc:
            raise SettingsError(f"config file {path} cannot be read: {exc}") from None
    file_values: dict[str, Any] = {}
    if path is not None:
        file_values = read_config_file(path)
        if explicit is None and "home" in file_values:
            raise SettingsError(
                f"config file {path}: `home` cannot be set in the home's own config file; "
                "use --home or GHOST_HOME (or pass this file with --config)"
            )
    sources = {name: "default" for name in FIELDS}
    merged: dict[str, Any] = {}
    layers: list[tuple[dict[str, Any], Callable[[str], str]]] = [
        (file_values, lambda _name: f"config {path}"),
        (env_values, lambda name: f"env {env_name(name)}"),
        (cli_values, lambda name: f"flag {_flag_name(name)}"),
    ]
    for values, label in layers:
        for name, value in values.items():
            merged[name] = value
            sources[name] = label(name)
    merged["config"] = path
    if explicit is None and path is not None:
        sources["config"] = "found in the home"
    return Settings(**merged).validate(), sources


def _flag_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def render_config_toml(settings: Settings | None = None, sources: Mapping[str, str] | None = None) -> str:
    """A ghost.toml documenting every setting with its help, env var, flag and range.

    Without arguments: the defaults, every value commented out (what `config/ghost.toml` holds). With the
    resolved `settings` and their `sources` (`resolve_settings`): the same layout, where each value that
    does not come from the defaults is set (uncommented) and says where it came from; secrets are not shown.
    """
    defaults = Settings()
    if settings is None:
        lines = [
            "# Ghost Agent configuration. Every setting below shows its default, commented out.",
            "# Read from $GHOST_HOME/config.toml when it exists (or the file given by --config / GHOST_CONFIG).",
            "# Precedence: defaults < config file < GHOST_* environment < CLI flags.",
            "# Regenerate with: ghost-agent config --defaults > config/ghost.toml",
        ]
    else:
        read = f"config file read: {settings.config}" if settings.config else (
            f"no config file read (none given, no {home_config_path(settings.home)})"
        )
        lines = [
            "# Ghost Agent settings in force. A value set below comes from the config file, the environment or a",
            "# flag, and names its source; the commented-out values are the defaults, in force where not set.",
            f"# {read}",
            "# Precedence: defaults < config file < GHOST_* environment < CLI flags.",
        ]
    sections: dict[str, list[dataclasses.Field[Any]]] = {}
    for f in dataclasses.fields(Settings):
        if f.name != "config":
            sections.setdefault(f.metadata["section"], []).append(f)
    for section, fields in sections.items():
        lines += ["", f"[{section}]"]
        for n, f in enumerate(fields):
            meta = f.metadata
            if n:
                lines.append("")
            lines.append(f"# {meta['help']}")
            extra = [f"env {env_name(f.name)}", f"flag --{f.name.replace('_', '-')}"]
            if meta["choices"]:
                extra.append("one of: " + ", ".join(meta["choices"]))
            if meta["lo"] is not None or meta["hi"] is not None:
                extra.append("range " + _range_text(meta["lo"], meta["hi"]))
            lines.append("# (" + "; ".join(extra) + ")")
            source = (sources or {}).get(f.name, "default")
            if settings is None or source == "default":
                lines.append(f"# {f.name} = {_toml_value(getattr(defaults, f.name), f.name)}")
            elif f.name in SECRET_FIELDS:
                lines.append(f'# {f.name} = "***"  # set by {source}; the value is not shown')
            elif f.name in URL_FIELDS and redact_url(str(getattr(settings, f.name))) != getattr(settings, f.name):
                shown = _toml_literal(redact_url(str(getattr(settings, f.name))))
                lines.append(f"# {f.name} = {shown}  # set by {source}; its credentials are not shown")
            else:
                lines.append(f"{f.name} = {_toml_literal(getattr(settings, f.name))}  # from {source}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any, name: str) -> str:
    if value is None:
        return '""  # unset'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if name in ("home", "model_cache_dir"):
        return '"' + str(value).replace(str(Path.home()), "~") + '"'
    return '"' + str(value) + '"'


def _toml_literal(value: Any) -> str:
    """A value as TOML that reads back to the same setting (strings escaped; unset -> the empty string)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)
