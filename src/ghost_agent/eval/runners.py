"""Runners: what produces the reply an eval task is scored on (DESIGN §7, seed 001 flag notes).

- `StubRunner` echoes the prompt. Regression tasks are written so an echo passes them; every other task fails.
  It needs nothing running, so CI exercises the whole pipeline (suite → runner → verifier → result → compare).
- `HttpRunner` POSTs each task to a running daemon's `/v1/chat/completions` (non-streaming) over ONE pooled
  httpx client. Only loopback base URLs are accepted (ValueError at construction, before any connection), the
  client ignores proxy environment variables (a proxy would carry the traffic off the machine), and every
  reply's `x-ghost-trajectory-id` is recorded so a failing task links to its trajectory. A task with `files`
  gets them written into its session's workspace (`workspace_root/<workspace_name(session)>`, the layout of
  `sandbox/workspace.py`) before its prompt is sent.

A runner never raises for a failed task: HTTP errors become `RunnerReply.error`, the client timeout becomes
`timed_out`. `RunnerError` is for a runner that cannot start at all (daemon unreachable, api key refused).
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

import httpx

from ghost_agent import __version__
from ghost_agent.eval.task import EvalTask
from ghost_agent.jsonsafe import JSON
from ghost_agent.sandbox.base import SandboxError
from ghost_agent.sandbox.workspace import Workspaces

TRAJECTORY_HEADER = "x-ghost-trajectory-id"
SESSION_HEADER = "x-ghost-session-id"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
RUNNER_KINDS = ("stub", "http")


class RunnerError(Exception):
    """The runner cannot run at all (the daemon is unreachable, refuses the api key, never finishes starting)."""


@dataclass(frozen=True)
class RunnerReply:
    """One task's reply: the text, the trajectory it left (http), an error, whether it timed out, its latency."""

    text: str
    trajectory_id: str | None = None
    error: str | None = None
    timed_out: bool = False
    duration_ms: float = 0.0


@runtime_checkable
class Runner(Protocol):
    """Produces replies. `reply` never raises for a failed task; `describe` may raise RunnerError."""

    kind: str

    async def reply(self, task: EvalTask) -> RunnerReply:
        """The reply to one task."""
        ...

    async def describe(self) -> JSON:
        """Run metadata: runner kind, model, daemon version, and what the settings hash covers."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class StubRunner:
    """Echoes each task's prompt back, instantly: regression tasks can pass, the others fail."""

    kind = "stub"

    async def reply(self, task: EvalTask) -> RunnerReply:
        """The prompt itself, as the reply."""
        t0 = time.perf_counter()
        await asyncio.sleep(0)  # a real await point, like any runner
        return RunnerReply(text=task.prompt, duration_ms=(time.perf_counter() - t0) * 1000.0)

    async def describe(self) -> JSON:
        """`runner: stub`, model `stub-echo`, the package version as the daemon version (there is no daemon)."""
        return {"runner": self.kind, "model": "stub-echo", "daemon_version": __version__}

    async def aclose(self) -> None:
        """Nothing to release."""


def loopback_base_url(base_url: str) -> str:
    """`base_url` without a trailing slash if it is an http(s) URL on a loopback host; ValueError otherwise.

    Loopback means `localhost` or an address in 127.0.0.0/8 or ::1 (also IPv4-mapped). Checked by parsing
    only: nothing is resolved or connected.
    """
    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"invalid base url {base_url!r}: {exc}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"invalid base url {base_url!r}: use http://127.0.0.1:PORT")
    host = url.host.lower()
    if host != "localhost":
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(
                f"base url {base_url!r} is not loopback: the eval only talks to a daemon on this machine "
                "(127.0.0.1, ::1 or localhost)"
            ) from None
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        if not (ip.is_loopback or (mapped is not None and mapped.is_loopback)):
            raise ValueError(
                f"base url {base_url!r} is not loopback: the eval only talks to a daemon on this machine "
                "(127.0.0.1, ::1 or localhost)"
            )
    return str(url).rstrip("/")


def http_error_text(response: httpx.Response) -> str:
    """`HTTP <status>: <message>` from an OpenAI-shaped error body, else the start of the body."""
    message = ""
    try:
        data = response.json()
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            message = str(data["error"].get("message") or "")
    except ValueError:
        pass
    message = message or response.text[:300]
    return f"HTTP {response.status_code}: {' '.join(message.split())}"


def place_task_files(workspace_root: Path, session_id: str, files: Mapping[str, str]) -> Path:
    """Write `files` (relative name -> text) into the session's workspace under `workspace_root`, the directory
    the daemon gives that session (`Workspaces.path_for`); returns it. Blocking.

    ValueError for a name that is absolute, empty or climbs out with `..`; SandboxError when something that is
    not a directory sits where the workspace belongs; OSError when writing fails.
    """
    workspace = Workspaces(workspace_root, quota_mb=0, max_age_days=0).path_for(session_id)
    for name, content in files.items():
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts or "\\" in name:
            raise ValueError(f"task file name {name!r} must be a relative path inside the workspace")
        target = workspace.joinpath(*rel.parts)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return workspace


class HttpRunner:
    """Asks a daemon on loopback: one non-streaming chat completion per task, each in its own session.

    `timeout_s` is the httpx timeout (connect, read, write, pool each); hitting it is `timed_out`. `temperature`
    (default 0, greedy, for reproducible runs) is sent unless None. `transport` lets tests serve an app
    in-process; the URL must still be loopback. `workspace_root` is the daemon's workspace root
    (`$GHOST_HOME/workspace`): tasks with `files` need it, and without it they come back as an error reply.
    """

    kind = "http"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        timeout_s: float = 300.0,
        temperature: float | None = 0.0,
        transport: httpx.AsyncBaseTransport | None = None,
        workspace_root: Path | None = None,
    ) -> None:
        self.base_url = loopback_base_url(base_url)
        self.workspace_root = Path(workspace_root) if workspace_root is not None else None
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        self.model = model
        self.timeout_s = float(timeout_s)
        self.temperature = temperature
        # Each task is its own conversation: the daemon's correction check and recent-turn state never link
        # one eval prompt to the previous one.
        self._session_prefix = f"eval-{secrets.token_hex(4)}"
        headers = {"user-agent": f"ghost-agent-eval/{__version__}"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(self.timeout_s),
            transport=transport,
            trust_env=False,  # never route through a proxy from the environment: it would leave the machine
            follow_redirects=False,
        )

    def session_id(self, task: EvalTask) -> str:
        """The session id this runner sends (`x-ghost-session-id`) for `task`: unique per runner and task."""
        return f"{self._session_prefix}-{task.id}"[:128]

    async def _place_files(self, task: EvalTask, session: str) -> str | None:
        """Write the task's files into its workspace; the error text when that cannot be done."""
        if not task.files:
            return None
        if self.workspace_root is None:
            return (f"task {task.id} needs files in the daemon's workspace, but the runner has no workspace_root "
                    "(pass the daemon's $GHOST_HOME/workspace)")
        try:
            await asyncio.to_thread(place_task_files, self.workspace_root, session, task.files)
        except (OSError, ValueError, SandboxError) as exc:
            return f"cannot place task {task.id}'s files in {self.workspace_root}: {exc}"
        return None

    def _body(self, task: EvalTask) -> JSON:
        messages: list[JSON] = []
        if task.system:
            messages.append({"role": "system", "content": task.system})
        messages.append({"role": "user", "content": task.prompt})
        body: JSON = {"messages": messages, "stream": False}
        if self.model:
            body["model"] = self.model
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def reply(self, task: EvalTask) -> RunnerReply:
        """POST the task; the reply text, or the HTTP error / timeout as `error` / `timed_out`."""
        t0 = time.perf_counter()

        def elapsed() -> float:
            return (time.perf_counter() - t0) * 1000.0

        session = self.session_id(task)
        placing_failed = await self._place_files(task, session)
        if placing_failed is not None:
            return RunnerReply("", error=placing_failed, duration_ms=elapsed())
        try:
            response = await self._client.post(
                "/v1/chat/completions", json=self._body(task), headers={SESSION_HEADER: session}
            )
        except httpx.TimeoutException:
            return RunnerReply("", error=f"timed out after {self.timeout_s:g}s", timed_out=True, duration_ms=elapsed())
        except httpx.HTTPError as exc:
            return RunnerReply("", error=f"{type(exc).__name__}: {exc}", duration_ms=elapsed())
        trajectory_id = response.headers.get(TRAJECTORY_HEADER)
        if response.status_code >= 400:
            return RunnerReply("", trajectory_id, error=http_error_text(response), duration_ms=elapsed())
        try:
            data = response.json()
            text = data["choices"][0]["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return RunnerReply(
                "", trajectory_id, error=f"unexpected response body: {response.text[:200]!r}", duration_ms=elapsed()
            )
        return RunnerReply(str(text), trajectory_id, duration_ms=elapsed())

    async def _health(self) -> JSON:
        """`GET /health`, waiting (up to `timeout_s`) while the daemon says `starting`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            try:
                response = await self._client.get("/health")
                response.raise_for_status()
                health = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise RunnerError(f"cannot reach the daemon at {self.base_url}: {type(exc).__name__}: {exc}") from exc
            if not isinstance(health, dict):
                raise RunnerError(f"{self.base_url}/health did not answer a JSON object")
            if health.get("status") != "starting":
                return health
            if loop.time() > deadline:
                raise RunnerError(f"the daemon at {self.base_url} is still starting after {self.timeout_s:g}s")
            await asyncio.sleep(0.5)

    async def describe(self) -> JSON:
        """The daemon's identity from `/v1/ghost/health` (version, served model, backend, learned models), once
        `/health` no longer says `starting`; the detail route also checks the api key. RunnerError when
        unreachable, still starting after `timeout_s`, or 401."""
        await self._health()
        try:
            detail = await self._client.get("/v1/ghost/health")
        except httpx.HTTPError as exc:
            raise RunnerError(f"cannot reach the daemon at {self.base_url}: {type(exc).__name__}: {exc}") from exc
        if detail.status_code == 401:
            raise RunnerError(f"the daemon at {self.base_url} refused the api key (401): pass --api-key")
        try:
            detail.raise_for_status()
            health = detail.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise RunnerError(f"{self.base_url}/v1/ghost/health failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(health, dict):
            raise RunnerError(f"{self.base_url}/v1/ghost/health did not answer a JSON object")
        backend = health.get("backend") if isinstance(health.get("backend"), dict) else {}
        learned = health.get("learned") if isinstance(health.get("learned"), dict) else {}
        return {
            "runner": self.kind,
            "base_url": self.base_url,
            "model": self.model or health.get("model"),
            "requested_model": self.model,
            "daemon_model": health.get("model"),
            "daemon_version": health.get("version"),
            "daemon_status": health.get("status"),
            "backend": (backend or {}).get("kind"),
            "learned": {
                name: (info or {}).get("model_id") for name, info in sorted((learned or {}).items())
                if isinstance(info, dict) or info is None
            },
            "temperature": self.temperature,
        }

    async def aclose(self) -> None:
        """Close the pooled client."""
        await self._client.aclose()


def make_runner(
    kind: str,
    *,
    base_url: str = DEFAULT_BASE_URL,
    api_key: str | None = None,
    model: str | None = None,
    timeout_s: float = 300.0,
    workspace_root: Path | None = None,
) -> StubRunner | HttpRunner:
    """The runner named `kind` ("stub" | "http"); ValueError for an unknown kind or a non-loopback URL.
    `workspace_root` (http only) is where tasks' files go: the daemon's `$GHOST_HOME/workspace`."""
    if kind == "stub":
        return StubRunner()
    if kind == "http":
        return HttpRunner(base_url, api_key=api_key, model=model, timeout_s=timeout_s, workspace_root=workspace_root)
    raise ValueError(f"unknown runner {kind!r}: use one of {', '.join(RUNNER_KINDS)}")


__all__ = [
    "DEFAULT_BASE_URL",
    "RUNNER_KINDS",
    "HttpRunner",
    "Runner",
    "RunnerError",
    "RunnerReply",
    "StubRunner",
    "TRAJECTORY_HEADER",
    "http_error_text",
    "loopback_base_url",
    "make_runner",
    "place_task_files",
]
