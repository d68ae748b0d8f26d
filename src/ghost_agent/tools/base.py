"""The tool contract: a named, schema-described action the agent can take, returning a `ToolResult`.

A tool never raises to its caller for anything the model did wrong; it returns `ToolResult.failure(...)`,
whose `error` is one line "<tool>: <what went wrong>[; hint]" and whose message for the model starts with
"ERROR: ". The registry (`registry.py`) validates arguments against `parameters` before `run` and turns any
exception that still escapes into an error result, so the tool loop only ever sees results.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ghost_agent.jsonsafe import JSON
from ghost_agent.privacy.redact import redact_text
from ghost_agent.sandbox.base import (
    ExecLimits,
    ExecResult,
    SandboxBackend,
    SandboxError,
    Trimmed,
    WorkspaceReport,
)
from ghost_agent.sandbox.usage import MAX_DEPTH
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.tools.confine import show

MemorySearcher = Callable[[str, int], Awaitable[list[dict[str, Any]]]]
"""`await searcher(query, k)` → up to k memories, each a dict with at least `task` and `solution`."""

TRUNCATION_TEMPLATE = "\n[... truncated {dropped} chars ...]\n"
REFUSED_HINT = "fix: `make sandbox` or `ghost-agent sandbox setup`, then restart the daemon"
PREVIEW_CHARS = 500  # what a trajectory step keeps of a result


def one_line(text: str, limit: int = 400) -> str:
    """`text` collapsed to a single line of at most `limit` chars (errors are read by models and grep)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def cap_text(text: str, cap: int) -> tuple[str, int]:
    """`text` cut to about `cap` chars with a visible marker in the middle; returns (text, chars dropped).

    Head and tail are both kept (2/3 head, 1/3 tail) because the end of an output is often what matters: a
    traceback's last line, a test summary, the final print.
    """
    if cap <= 0 or len(text) <= cap:
        return text, 0
    head = (cap * 2) // 3
    tail = cap - head
    dropped = len(text) - head - tail
    return text[:head] + TRUNCATION_TEMPLATE.format(dropped=dropped) + text[len(text) - tail:], dropped


def preview_text(text: str, cap: int = PREVIEW_CHARS) -> str:
    """What a trajectory step keeps of a result: redacted, THEN cut. Cutting first can split a secret
    (`password=` in the head, its value in the tail; half a key) into pieces no redaction rule recognises."""
    return cap_text(redact_text(text), cap)[0]


def human_size(size: int) -> str:
    """Bytes as a short human figure: 512 B, 1.2 KB, 3.4 MB."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # unreachable; keeps mypy sure of the return


@dataclass
class ToolResult:
    """What a tool call produced.

    `output` is the result text (for exec tools also on failure: the traceback is what the model needs);
    `error` is None on success, else one line "<tool>: <what went wrong>[; hint]". `data` holds structured
    details for trajectories (exit code, paths, counts); `truncated` is set when any output was dropped, by
    the tool, the sandbox, or the registry's result cap.
    """

    ok: bool
    output: str = ""
    error: str | None = None
    truncated: bool = False
    data: JSON = field(default_factory=dict)
    duration_ms: float = 0.0
    tool: str = ""

    @classmethod
    def success(cls, output: str, *, truncated: bool = False, data: JSON | None = None) -> ToolResult:
        """An ok result."""
        return cls(ok=True, output=output, truncated=truncated, data=dict(data or {}))

    @classmethod
    def failure(
        cls,
        tool: str,
        what: str,
        *,
        hint: str | None = None,
        output: str = "",
        truncated: bool = False,
        data: JSON | None = None,
    ) -> ToolResult:
        """A failed result with the normalized one-line error "<tool>: <what>[; <hint>]"."""
        error = f"{tool}: {one_line(what)}" + (f"; {one_line(hint)}" if hint else "")
        return cls(ok=False, output=output, error=one_line(error, 600), truncated=truncated,
                   data=dict(data or {}), tool=tool)

    def capped(self, cap: int) -> ToolResult:
        """This result with `output` cut to `cap` chars behind a visible marker (in place; returns self)."""
        text, dropped = cap_text(self.output, cap)
        if dropped:
            self.output = text
            self.truncated = True
            self.data["truncated_chars"] = self.data.get("truncated_chars", 0) + dropped
        return self

    def to_message(self) -> str:
        """The text the model sees: the output, or "ERROR: <error>" followed by any output."""
        if self.ok:
            return self.output if self.output else "(no output)"
        head = f"ERROR: {self.error or 'failed'}"
        return f"{head}\n{self.output}" if self.output else head

    def to_dict(self) -> JSON:
        """A JSON-ready summary for a trajectory step (the message is kept as a bounded `result_preview`)."""
        preview = preview_text(self.to_message())
        return {
            "tool": self.tool,
            "ok": self.ok,
            "error": self.error,
            "truncated": self.truncated,
            "duration_ms": round(self.duration_ms, 1),
            "result_preview": preview,
            "data": self.data,
        }


@dataclass
class ToolContext:
    """What a call may touch: the session's workspace, the sandbox and its default limits, the quota and
    the memory store. Built per turn by the agent; tools must not reach anything not given here."""

    workspace: Path
    session_id: str = "default"
    sandbox: SandboxBackend | None = None
    # Why there is no sandbox (e.g. bubblewrap missing and unisolated code not opted into): code tools say so.
    sandbox_error: str | None = None
    limits: ExecLimits = field(default_factory=ExecLimits)
    memory_searcher: MemorySearcher | None = None
    quota_bytes: int | None = None  # the workspace's size limit; None = unlimited
    quota_entries: int | None = None  # files, folders and links it may hold; None = unlimited

    @classmethod
    def for_session(
        cls,
        workspaces: Workspaces,
        session_id: str,
        *,
        sandbox: SandboxBackend | None = None,
        sandbox_error: str | None = None,
        limits: ExecLimits | None = None,
        memory_searcher: MemorySearcher | None = None,
    ) -> ToolContext:
        """The context for one session: its workspace (created if needed) and the workspaces' quota."""
        return cls(
            workspace=workspaces.path_for(session_id),
            session_id=session_id,
            sandbox=sandbox,
            sandbox_error=sandbox_error,
            limits=limits or ExecLimits(),
            memory_searcher=memory_searcher,
            quota_bytes=workspaces.quota_bytes,
            quota_entries=workspaces.max_entries,
        )


class Tool(abc.ABC):
    """One action the agent can take. Subclasses set `name`, `description`, `parameters` (a JSON schema
    object within the subset `schema.py` enforces) and `result_cap`, and implement `run`.

    `run` receives arguments already validated against `parameters` (defaults not filled in) and returns a
    ToolResult; raising is a bug the registry reports as "internal error".
    """

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[JSON]
    result_cap: ClassVar[int] = 8000  # chars of output the model sees; the rest behind a marker

    @abc.abstractmethod
    async def run(self, args: JSON, ctx: ToolContext) -> ToolResult:
        """Do the action for the validated `args` within `ctx`."""

    def fail(self, what: str, *, hint: str | None = None, **kwargs: Any) -> ToolResult:
        """`ToolResult.failure` under this tool's name."""
        return ToolResult.failure(self.name, what, hint=hint, **kwargs)


class SandboxTool(Tool):
    """A tool that runs one program in the sandbox, in the session's workspace (the python and bash tools).

    Subclasses set `language` and implement `source(args)`. Arguments `timeout_s` (capped by the context's
    limit, never raised) and `stdin` are handled here. The result is ok exactly when the program exited 0
    in time; its output is stdout, then stderr under "--- stderr ---", then a status line when it failed.

    Quota: the sandbox holds the workspace to the context's quota during the run (sandbox/quota.py): the
    largest file is capped at what is left (1 MB at least), and a program that writes past the quota, or
    creates more entries than allowed, is stopped and what it wrote beyond the limit is taken back; the
    result is then an error whose status line says what was removed (`data["quota_stopped"]`,
    `data["workspace_quota"]`). An over-quota workspace still runs programs, since deleting files is how the
    model gets back under (it may not grow), and the output ends with a line saying so.
    """

    language: ClassVar[str]
    result_cap = 12000

    @abc.abstractmethod
    def source(self, args: JSON) -> str:
        """The program text to run for `args`."""

    async def run(self, args: JSON, ctx: ToolContext) -> ToolResult:
        """Run the program; sandbox failures become error results, never exceptions."""
        if ctx.sandbox is None:
            return self.refused(ctx)
        limits = ctx.limits
        if args.get("timeout_s") is not None:
            limits = dataclasses.replace(limits, timeout_s=min(float(args["timeout_s"]), limits.timeout_s))
        limits = dataclasses.replace(limits, workspace_bytes=ctx.quota_bytes, workspace_entries=ctx.quota_entries)
        try:
            ctx.workspace.mkdir(parents=True, exist_ok=True)
            result = await ctx.sandbox.run(
                self.language, self.source(args), limits=limits, workspace=ctx.workspace, stdin=args.get("stdin")
            )
        except (SandboxError, OSError) as exc:
            return self.fail(f"the sandbox could not run the {self.language} program: {exc}")
        tool_result = self.to_result(result, limits)
        quota_note = _quota_note(result.workspace)
        if quota_note:
            tool_result.output = f"{tool_result.output}\n{quota_note}" if tool_result.output else quota_note
            tool_result.data["over_quota"] = True
        return tool_result

    def refused(self, ctx: ToolContext) -> ToolResult:
        """The answer when no sandbox may run code: why (`ctx.sandbox_error`), how the operator fixes it, and
        what the model should do meanwhile. Nothing runs, isolated or not."""
        if ctx.sandbox_error is None:
            return self.fail("no sandbox is attached", hint="code execution is unavailable in this session")
        return self.fail(
            f"code execution is disabled: {ctx.sandbox_error}",
            hint=REFUSED_HINT,
            output="Code cannot run on this daemon: it has no isolating sandbox and does not run model-written "
                   "code unisolated. Answer without running code; the operator can enable it with `make sandbox` "
                   "or `ghost-agent sandbox setup` (installs bubblewrap), then a daemon restart.",
            data={"sandbox": "refused"},
        )

    def to_result(self, result: ExecResult, limits: ExecLimits) -> ToolResult:
        """The ExecResult as the model should read it (see the class docstring)."""
        parts = []
        if result.stdout:
            parts.append(result.stdout.rstrip("\n"))
        if result.stderr:
            parts.append("--- stderr ---\n" + result.stderr.rstrip("\n"))
        status, what, hint = _status(result, limits)
        if status:
            parts.append(status)
        data: JSON = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "oom_killed": result.oom_killed,
            "backend": result.backend,
            "exec_ms": round(result.duration_ms, 1),
        }
        if result.notes:
            data["notes"] = list(result.notes)
        ws = result.workspace
        if ws is not None and ws.exceeded:
            data["quota_stopped"] = ws.stopped
            data["workspace_quota"] = {
                "exceeded": ws.exceeded, "stopped": ws.stopped, "limit_bytes": ws.limit_bytes,
                "limit_entries": ws.limit_entries, "peak_bytes": ws.peak_bytes, "bytes_after": ws.bytes_after,
                "entries_after": ws.entries_after, "trimmed_count": ws.trimmed_count,
                "trimmed_bytes": ws.trimmed_bytes,
                "trimmed": [{**dataclasses.asdict(t), "path": _printable(t.path)} for t in ws.trimmed],
            }
        output = "\n".join(parts)
        if result.ok and not (ws is not None and ws.exceeded):
            return ToolResult.success(output, truncated=result.truncated, data=data)
        return self.fail(what, hint=hint, output=output, truncated=result.truncated, data=data)


def _status(result: ExecResult, limits: ExecLimits) -> tuple[str, str, str | None]:
    """(status line for the output, error text, hint) for how the program ended; all empty when it was ok."""
    ws = result.workspace
    if ws is not None and ws.exceeded:
        return _quota_status(ws)
    if result.timed_out:
        what = f"timed out after {limits.timeout_s:.1f} s"
        return f"[killed: {what}]", what, "make it faster, print progress, or work on less data"
    if result.oom_killed:
        what = f"out of memory (limit {limits.memory_mb} MB)"
        return f"[killed: {what}]", what, "process the data in smaller pieces"
    code = result.exit_code
    if code is None:
        return "[no exit status]", "ended without an exit status", None
    if code < 0:
        return f"[killed by signal {-code}]", f"killed by signal {-code}", None
    if code > 0:
        return f"[exit code {code}]", f"exited with code {code}", None
    return "", "", None


def _quota_status(ws: WorkspaceReport) -> tuple[str, str, str | None]:
    """The status for a run that outgrew its workspace: what it did and what was taken back."""
    if ws.exceeded == "bytes":
        what = f"wrote past the workspace quota ({human_size(ws.limit_bytes or 0)})"
    elif ws.exceeded == "entries":
        what = f"created more files and folders than the workspace may hold ({ws.limit_entries:,})"
    else:
        what = f"nested folders more than {MAX_DEPTH} levels deep"
    shown = [_trimmed_text(t) for t in ws.trimmed[:5]]
    more = ws.trimmed_count - len(shown)
    if more > 0:
        shown.append(f"{more:,} more" if shown else f"{more:,} entries")
    took = "removed what it wrote beyond it: " + _enumerate(shown) if shown else "nothing needed removing"
    if ws.limit_bytes is not None and ws.bytes_after > max(ws.limit_bytes, ws.bytes_before):
        took += f"; the workspace still holds {human_size(ws.bytes_after)}"
    head = "stopped" if ws.stopped else "over the limit when it ended"
    if ws.exceeded == "entries":
        hint = f"delete files or create fewer; the workspace holds {ws.entries_after:,} files and folders"
    else:
        hint = f"delete files or write less; the workspace holds {human_size(ws.bytes_after)}"
        if ws.limit_bytes is not None:
            hint += f" of {human_size(ws.limit_bytes)}"
    return f"[{head}: the program {what}; {took}]", f"{head}: the program {what}", hint


def _printable(name: str) -> str:
    """A file name the program chose, fit for a message and a JSON record: undecodable bytes as U+FFFD, control
    characters (a newline could forge a status line) as '?'."""
    return "".join(c if c.isprintable() else "?" for c in show(name))


def _trimmed_text(t: Trimmed) -> str:
    name = _printable(t.path)
    path = name if len(name) <= 60 else f"{name[:28]}…{name[-28:]}"
    if t.action == "truncated":
        return f"{path} (cut back by {human_size(t.bytes)} to its size before the call)"
    if t.entries > 1:
        return f"{path} ({t.entries:,} entries)"
    return f"{path} ({human_size(t.bytes)})"


def _enumerate(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _quota_note(ws: WorkspaceReport | None) -> str | None:
    """The line added when the workspace was already over its quota before the run (None otherwise)."""
    if ws is None or not ws.over_before or ws.limit_bytes is None:
        return None
    return (f"[workspace over quota: {human_size(ws.bytes_before)} used of {human_size(ws.limit_bytes)}; delete "
            "files — until then a program may not add to it]")


__all__ = [
    "JSON",
    "MemorySearcher",
    "PREVIEW_CHARS",
    "SandboxTool",
    "TRUNCATION_TEMPLATE",
    "Tool",
    "ToolContext",
    "ToolResult",
    "cap_text",
    "one_line",
]
