"""The sandbox contract: run model-written code with limits, get an `ExecResult` back (DESIGN §1c).

Backends are siblings behind `SandboxBackend` (bubblewrap, restricted subprocess), picked by detection
(`sandbox/detect.py`). Every backend enforces the same `ExecLimits` as far as it can and reports honestly what
it isolates (`Isolation`), so the daemon, `/health` and `ghost-agent doctor` can say it out loud.
"""

from __future__ import annotations

import abc
import asyncio
import os
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ghost_agent.settings import SandboxSettings

Language = Literal["python", "bash"]
LANGUAGES: tuple[str, ...] = ("python", "bash")

TRUNCATION_MARKER = "\n[... output truncated: {dropped} bytes dropped ...]\n"


class SandboxError(Exception):
    """The sandbox itself failed (could not start the process, bad request), not the code it ran."""


class SandboxRefused(SandboxError):
    """No isolating backend works here and running model-written code unisolated was not opted into: code
    tools are disabled (the daemon still chats). `reason` says why bubblewrap could not run, `fix` how to
    get it (`make sandbox` / `ghost-agent sandbox setup`) and how to opt in instead."""

    def __init__(self, message: str, *, reason: str, fix: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.fix = fix


@dataclass(frozen=True)
class ExecLimits:
    """What one execution may use. Backends enforce what they can and never silently raise a limit."""

    timeout_s: float = 30.0
    memory_mb: int = 512
    max_procs: int = 64  # processes/threads inside the sandbox (fork bombs hit this)
    max_output_bytes: int = 64 * 1024  # per stream; the rest is dropped behind TRUNCATION_MARKER
    max_file_mb: int = 64  # largest file the code may write (RLIMIT_FSIZE)
    max_open_files: int = 256
    # The workspace's budget during the run (the session quota; None = unwatched): bytes in its files and
    # entries (files, folders, links). Watched and taken back by sandbox/quota.py.
    workspace_bytes: int | None = None
    workspace_entries: int | None = None

    def __post_init__(self) -> None:
        if not (self.timeout_s > 0):
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        for name in ("memory_mb", "max_procs", "max_output_bytes", "max_file_mb", "max_open_files"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("workspace_bytes", "workspace_entries"):
            if getattr(self, name) is not None and int(getattr(self, name)) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def from_settings(cls, sandbox: SandboxSettings, **overrides: Any) -> ExecLimits:
        """The limits the operator configured (`[sandbox]`), with `overrides` (a command's own flags) on top."""
        values: dict[str, Any] = {
            "timeout_s": sandbox.timeout_s,
            "memory_mb": sandbox.memory_mb,
            "max_procs": sandbox.max_procs,
            "max_output_bytes": sandbox.max_output_kb * 1024,
        }
        values.update({k: v for k, v in overrides.items() if v})
        return cls(**values)


@dataclass(frozen=True)
class Trimmed:
    """One thing taken back from a workspace after a run outgrew it: `action` "removed" (a file or folder the
    run created) or "truncated" (a file it grew, cut back to its size before the run); `bytes` freed (as far as
    counted: a too-deep folder's content never was), `entries` removed with it (a folder's content included)."""

    path: str
    bytes: int
    action: str
    entries: int = 1


@dataclass
class WorkspaceReport:
    """How an execution's workspace stood against its budget (`ExecLimits.workspace_*`, see sandbox/quota.py).

    `exceeded`: "" or why the run outgrew it ("bytes", "entries", "depth": a folder nested too deep);
    `stopped`: the program was killed for it during the run (else it ended before a check caught it). `trimmed`
    lists (the first 20 of) what was taken back afterwards, `trimmed_count` all of it (files cut back, files
    and folders removed, and the entries of a flood, which are not listed); `*_after` are the figures once it
    was (the count before, when nothing at all was written on the filesystem meanwhile).
    `peak_*`: the most a count saw (before the trim); `counted_before`: the count before the run saw every
    entry.
    """

    limit_bytes: int | None
    limit_entries: int | None
    bytes_before: int
    entries_before: int
    bytes_after: int
    entries_after: int
    peak_bytes: int = 0
    peak_entries: int = 0
    counted_before: bool = True
    exceeded: str = ""
    stopped: bool = False
    trimmed: list[Trimmed] = field(default_factory=list)
    trimmed_count: int = 0
    trimmed_bytes: int = 0
    scans: int = 0
    polls: int = 0

    @property
    def over_before(self) -> bool:
        """The workspace was already over its byte quota when the run started."""
        return self.limit_bytes is not None and self.bytes_before > self.limit_bytes

    def summary(self) -> str:
        """One line for the execution's notes ("" when the run stayed within the budget)."""
        if not self.exceeded:
            return ""
        mib = 1024 * 1024
        when = "stopped during the run" if self.stopped else "found after the run"
        return (
            f"workspace budget exceeded ({self.exceeded}), {when}: peak {self.peak_bytes / mib:.1f} MB / "
            f"{self.peak_entries} entries; took back {self.trimmed_count} ({self.trimmed_bytes / mib:.1f} MB); "
            f"now {self.bytes_after / mib:.1f} MB / {self.entries_after} entries"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass
class ExecResult:
    """What happened: output (capped), exit status and why it ended.

    `exit_code` is the process's exit status, or -N when killed by signal N. `timed_out` means we killed it
    at the deadline; `oom_killed` means it ran out of its memory limit (a cgroup OOM kill, or an allocation
    refused under the address-space limit); `truncated` means some output was dropped. `workspace` is set when
    the limits gave the workspace a budget (`workspace.stopped`: killed for outgrowing it).
    """

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    truncated: bool = False
    duration_ms: float = 0.0
    backend: str = ""
    notes: list[str] = field(default_factory=list)
    workspace: WorkspaceReport | None = None

    @property
    def ok(self) -> bool:
        """Exited 0 without being killed."""
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what `ghost-agent sandbox run` prints)."""
        return asdict(self)


@dataclass(frozen=True)
class Isolation:
    """What a backend isolates; `reason` says why a stronger layer was not used (empty for the best one)."""

    backend: str
    isolated: bool  # network + filesystem isolation (False for the restricted-subprocess fallback)
    network: bool
    filesystem: bool
    pid_namespace: bool
    memory_limit: str  # "cgroup" | "rlimit" | "none"
    process_limit: str  # "cgroup" | "rlimit" | "none"
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # What works worse than it should, in words the operator can act on (e.g. the fallback's Python packages
    # unreachable by uid 65534); shown by /health detail, `sandbox info` and `doctor`.
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (`/v1/ghost/health`, `sandbox info`)."""
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


class SandboxBackend(abc.ABC):
    """Runs one program in isolation. Implementations are safe to call concurrently from the event loop:
    `run` bounds concurrency with a semaphore and does blocking work in a thread."""

    name: str = "abstract"

    def __init__(self, *, concurrency: int | None = None) -> None:
        self.concurrency = max(1, concurrency or os.cpu_count() or 1)
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    @property
    @abc.abstractmethod
    def isolation(self) -> Isolation:
        """What this backend isolates (and why nothing stronger was used)."""

    @abc.abstractmethod
    def run_sync(
        self,
        language: str,
        source: str,
        *,
        limits: ExecLimits,
        workspace: Path | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run `source` (Python code, or a bash script) to completion or the limits; blocking.

        Raises SandboxError for a request it cannot run (unknown language, missing workspace) or when the
        sandbox machinery itself fails; the program's own failures are reported in the ExecResult.
        """

    async def run(
        self,
        language: str,
        source: str,
        *,
        limits: ExecLimits | None = None,
        workspace: Path | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """`run_sync` off the event loop, at most `concurrency` at a time (per event loop)."""
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.concurrency)
        async with sem:
            return await asyncio.to_thread(
                self.run_sync, language, source, limits=limits or ExecLimits(), workspace=workspace, stdin=stdin
            )


def check_language(language: str) -> str:
    """The language, or SandboxError naming the supported ones."""
    if language not in LANGUAGES:
        raise SandboxError(f"unsupported language {language!r} (supported: {', '.join(LANGUAGES)})")
    return language


__all__ = [
    "ExecLimits",
    "ExecResult",
    "Isolation",
    "LANGUAGES",
    "Language",
    "SandboxBackend",
    "SandboxError",
    "SandboxRefused",
    "TRUNCATION_MARKER",
    "Trimmed",
    "WorkspaceReport",
    "check_language",
]
