"""The settings' sections: one dataclass per table of ghost.toml, each field with its type and default.

A field's attribute name is its config key without the section's prefix where the key repeats the section
(`[sandbox] sandbox_timeout_s` -> `settings.sandbox.timeout_s`); `table.py` maps every key to its attribute.
Choices are `Literal` types: the flags, the env reader, the config reader and the docs list them from here.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

LocalModel = Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]
Embeddings = Literal["lazy", "off"]
Durability = Literal["batch", "fsync", "none"]
LogLevel = Literal["debug", "info", "warning", "error"]
LogFormat = Literal["json", "console"]
RouterMode = Literal["auto", "always-agent", "always-fast"]
NativeTools = Literal["auto", "on", "off"]
AgentStrategy = Literal["auto", "answer-first", "action-loop"]
SandboxMode = Literal["auto", "bwrap", "unisolated", "subprocess"]

LOCAL_MODELS: tuple[str, ...] = get_args(LocalModel)


def default_home() -> Path:
    return Path("~/.ghost").expanduser()


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "ghost-agent" / "models"


def _path(value: Path | str | None) -> Path | None:
    """Programmatic callers may pass plain strings for paths."""
    return Path(value).expanduser() if isinstance(value, str) else value


@dataclass
class ServerSettings:
    """The HTTP server: bind address, auth, request limits, CORS, streaming keep-alives."""

    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    insecure_no_auth: bool = False
    max_request_bytes: int = 4 * 1024 * 1024
    max_request_line_bytes: int = 8 * 1024
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    shutdown_grace_s: float = 10.0
    max_n: int = 4
    cors_allow_origins: str | None = None
    allowed_hosts: str | None = None
    sse_keepalive_s: float = 10.0

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
    def extra_hosts(self) -> list[str]:
        """The host names the operator added to the Host allow-list (lowercased; `*` turns the check off)."""
        return [h.strip().lower().rstrip(".") for h in (self.allowed_hosts or "").split(",") if h.strip()]

    @property
    def cors_origins(self) -> list[str]:
        """The CORS allow-list as a list (empty: CORS off)."""
        return [o.strip().rstrip("/") for o in (self.cors_allow_origins or "").split(",") if o.strip()]


@dataclass
class BackendSettings:
    """The model backend: an OpenAI-compatible upstream, or the embedded local model."""

    upstream_url: str | None = None
    model: str | None = None
    served_model_name: str | None = None
    upstream_api_key: str | None = None
    upstream_connect_timeout: float = 5.0
    upstream_timeout: float = 300.0
    upstream_retries: int = 2
    upstream_max_connections: int = 256
    local_model: LocalModel = "qwen2.5-coder-1.5b"
    model_cache_dir: Path = field(default_factory=default_cache)
    n_ctx: int = 8192
    n_threads: int = 0
    queue_max: int = 16
    embeddings: Embeddings = "lazy"

    def __post_init__(self) -> None:
        if isinstance(self.model_cache_dir, str):
            self.model_cache_dir = Path(self.model_cache_dir).expanduser()


@dataclass
class StorageSettings:
    """Recorded trajectories (GHOST_HOME itself is `Settings.home`)."""

    record_trajectories: bool = True
    trajectory_durability: Durability = "batch"
    trajectory_max_session_files: int = 1024
    trajectory_flush_s: float = 5.0


@dataclass
class LoggingSettings:
    """The console and file log."""

    level: LogLevel = "info"
    format: LogFormat = "console"
    max_bytes: int = 20 * 1024 * 1024
    backups: int = 5


@dataclass
class AgentSettings:
    """One agent turn: routing, the tool loop and its search, answer checking, lessons shown."""

    router: RouterMode = "auto"
    max_steps: int = 6
    mcts: bool = True
    mcts_simulate: bool = False
    mcts_candidates: int = 3
    mcts_expand: int = 1
    native_tools: NativeTools = "auto"
    strategy: AgentStrategy = "auto"
    check_model_tests: int = 5
    check_revisions: int = 1
    check_samples: int = 1
    check_compute: bool = True
    preference_rewrite: bool = True
    preference_rules: bool = True
    verifier: bool = True
    verifier_refute_confidence: float = 0.7
    memory_top_k: int = 3
    stream_tool_progress: bool = False
    max_tokens: int = 1024


@dataclass
class SandboxSettings:
    """Model-written code: which sandbox, the limits of one execution, session workspaces."""

    mode: SandboxMode = "auto"
    timeout_s: float = 30.0
    memory_mb: int = 512
    max_procs: int = 64
    concurrency: int = 0
    max_output_kb: int = 64
    workspace_quota_mb: int = 256
    workspace_max_age_days: float = 7.0
    workspace_max_count: int = 256


@dataclass
class LearningSettings:
    """The learned models (PRM, router), self-play, reflection, skills and selfhood."""

    prm_model: Path | None = None
    router_model: Path | None = None
    prm_train_cooldown: float = 10800.0
    retrain_holdout_fraction: float = 0.2
    frontier_selfplay: bool = True
    frontier_uniform_sample_prob: float = 0.2
    selfplay_tasks_per_pass: int = 3
    selfplay_attempts: int = 2
    experience_top_k: int = 2
    demonstrations: bool = True
    experience_max_examples: int = 500
    reflection: bool = True
    reflection_timeout_s: float = 120.0
    reflection_max_tokens: int = 384
    reflection_batch: int = 5
    reflection_lookback_h: float = 48.0
    skills_min_support: int = 3
    skills_scan_batch: int = 2000
    selfhood: bool = True
    selfhood_narrative: bool = True

    def __post_init__(self) -> None:
        self.prm_model, self.router_model = _path(self.prm_model), _path(self.router_model)


@dataclass
class WatchdogSettings:
    """The idle-time phases (DESIGN §5): every window and cooldown is scaled by `idle_time_scale`."""

    enabled: bool = True
    tick_s: float = 60.0
    idle_time_scale: float = 1.0
    journal_drain_idle_s: float = 120.0
    journal_drain_cooldown_s: float = 0.0
    rem_dream_idle_s: float = 600.0
    rem_dream_idle_max_s: float = 3600.0
    rem_dream_cooldown_s: float = 1800.0
    dream_archive_days: float = 30.0
    dream_merge_jaccard: float = 0.7
    reflection_idle_s: float = 900.0
    reflection_idle_max_s: float = 3600.0
    reflection_cooldown_s: float = 2400.0
    skills_auto_idle_s: float = 900.0
    skills_auto_idle_max_s: float = 3600.0
    skills_auto_cooldown_s: float = 7200.0
    retrain_idle_s: float = 900.0
    retrain_idle_max_s: float = 3600.0
    selfhood_idle_s: float = 900.0
    selfhood_idle_max_s: float = 3600.0
    selfhood_cooldown_s: float = 3600.0
    self_play_idle_s: float = 3600.0
    self_play_cooldown_s: float = 3600.0


SECTIONS: dict[str, type] = {
    "server": ServerSettings,
    "backend": BackendSettings,
    "storage": StorageSettings,
    "logging": LoggingSettings,
    "agent": AgentSettings,
    "sandbox": SandboxSettings,
    "learning": LearningSettings,
    "watchdog": WatchdogSettings,
}
