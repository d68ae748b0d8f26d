"""One Settings dataclass, resolved as: defaults < config file < GHOST_* env < CLI flags.

Every field carries its own metadata (section, help, choices, range), and the CLI, the env reader, the
config reader and `config/ghost.toml`'s documentation all derive from it, so a setting cannot exist in one
place and be missing from another.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
            "Model name served at /v1/models and forwarded upstream; unset -> the local model's name "
            "(embedded) or the client's (upstream).",
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
            "agent", "Assertions the model writes from the spec to test a code answer (answer-first; 0 = only the "
            "request's own examples).", lo=0, hi=20,
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
    agent_max_tokens: int = field(
        default=1024, metadata=_meta("agent", "Token budget of each model call inside an agent turn.", lo=16)
    )
    # --- sandbox (model-written code)
    sandbox: str = field(
        default="auto",
        metadata=_meta(
            "sandbox",
            "Sandbox backend: auto = the strongest that passes the startup probe; bwrap = bubblewrap or no code "
            "runs at all (never the unisolated fallback); subprocess = the unisolated restricted-subprocess "
            "fallback.",
            choices=("auto", "bwrap", "subprocess"),
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
        default=10800.0, metadata=_meta("learning", "Seconds between PRM retrain phases.", lo=0)
    )
    frontier_selfplay: bool = field(
        default=True, metadata=_meta("learning", "Frontier-weighted self-play cluster selection.")
    )
    frontier_uniform_sample_prob: float = field(
        default=0.2,
        metadata=_meta("learning", "Chance a self-play tick ignores frontier weighting.", lo=0.0, hi=1.0),
    )
    config: Path | None = field(
        default=None, metadata=_meta("storage", "Config file to read (default: none).", cli=True)
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

    def validate(self) -> Settings:
        """Check cross-field rules; returns self so calls chain."""
        for f in dataclasses.fields(self):
            check_value(f.name, getattr(self, f.name))
        if not self.is_loopback and not self.api_key and not self.insecure_no_auth:
            raise SettingsError(
                f"refusing to bind non-loopback host {self.host!r} without an api key: "
                "set --api-key (or GHOST_API_KEY), or pass --insecure-no-auth"
            )
        if self.upstream_url is not None and not self.upstream_url.startswith(("http://", "https://")):
            raise SettingsError(f"upstream_url must start with http:// or https://, got {self.upstream_url!r}")
        return self

    def public_dict(self) -> dict[str, Any]:
        """Settings as plain JSON-able values with secrets masked (for logs and /health)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_FIELDS and value:
                value = "***"
            elif isinstance(value, Path):
                value = str(value)
            out[f.name] = value
        return out


SECRET_FIELDS = frozenset({"api_key", "upstream_api_key"})
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
    """Resolve defaults < config file < env < CLI into a validated Settings."""
    environ = os.environ if environ is None else environ
    cli = {k: v for k, v in (cli or {}).items() if v is not None}
    env_values = read_env(environ)
    path = cli.get("config") or config_path or env_values.get("config")
    merged: dict[str, Any] = {}
    if path is not None:
        merged.update(read_config_file(Path(path)))
    merged.update(env_values)
    merged.update({k: coerce(k, v) for k, v in cli.items()})
    if path is not None:
        merged["config"] = Path(path)
    return Settings(**merged).validate()


def render_config_toml() -> str:
    """The documented config file: every setting with its help, env var and default (commented out)."""
    defaults = Settings()
    lines = [
        "# Ghost Agent configuration. Every setting below shows its default, commented out.",
        "# Precedence: defaults < this file (or --config PATH) < GHOST_* environment < CLI flags.",
        "# Regenerate with: ghost-agent config --defaults > config/ghost.toml",
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
            lines.append(f"# {f.name} = {_toml_value(getattr(defaults, f.name), f.name)}")
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
