"""How the correction-transfer run sees a daemon: `TransferClient` (chat in a named session, the status
counts, the daemon's identity) over loopback HTTP, and `HomeStore`, read-only views of the daemon's home when it
is readable from here (the lesson a turn taught, whether a correction was taken, what a turn was shown).

Same rules as the eval's `HttpRunner`: loopback only, no proxies from the environment, no redirects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from ghost_agent import __version__
from ghost_agent.eval.runners import (
    SESSION_HEADER,
    TRAJECTORY_HEADER,
    HttpRunner,
    RunnerError,
    RunnerReply,
    http_error_text,
    loopback_base_url,
)
from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger

log = get_logger("eval.transfer")


# One reply: its text, the trajectory it left, an error, whether it timed out, how long it took (the eval's).
ChatReply = RunnerReply


@dataclass(frozen=True)
class Counts:
    """The learning counts of `/v1/ghost/status`: corrected turns, reflection records, lessons (all statuses)."""

    corrections: int
    reflections: int
    lessons: int

    @classmethod
    def from_status(cls, doc: JSON) -> Counts:
        """Read them from a status document (missing parts count 0)."""
        def part(parent: JSON, key: str) -> JSON:
            value = parent.get(key)
            return value if isinstance(value, dict) else {}

        counts = part(doc, "counts")
        traj, lessons = part(counts, "trajectories"), part(counts, "lessons")
        by_source = part(traj, "by_source")
        return cls(
            corrections=int(traj.get("corrections") or 0),
            reflections=int(by_source.get("reflection") or 0),
            lessons=int(lessons.get("total") or 0),
        )


class TransferClient:
    """Conversations with a daemon on loopback, each request in a named session (`x-ghost-session-id`).

    Same rules as the eval's `HttpRunner`: loopback base URL only (ValueError otherwise, before any
    connection), no proxies from the environment, no redirects; `temperature` 0 by default.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        timeout_s: float = 300.0,
        temperature: float | None = 0.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = loopback_base_url(base_url)
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        self.api_key, self.model, self.timeout_s, self.temperature = api_key, model, float(timeout_s), temperature
        headers = {"user-agent": f"ghost-agent-eval-transfer/{__version__}"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._transport = transport
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=httpx.Timeout(timeout_s),
                                         transport=transport, trust_env=False, follow_redirects=False)

    async def chat(self, session: str, messages: list[JSON]) -> ChatReply:
        """One non-streaming chat completion in `session`; errors and timeouts come back in the reply."""
        t0 = time.perf_counter()
        body: JSON = {"messages": messages, "stream": False}
        if self.model:
            body["model"] = self.model
        if self.temperature is not None:
            body["temperature"] = self.temperature

        def ms() -> float:
            return (time.perf_counter() - t0) * 1000.0

        try:
            response = await self._client.post("/v1/chat/completions", json=body, headers={SESSION_HEADER: session})
        except httpx.TimeoutException:
            return ChatReply("", error=f"timed out after {self.timeout_s:g}s", timed_out=True, duration_ms=ms())
        except httpx.HTTPError as exc:
            return ChatReply("", error=f"{type(exc).__name__}: {exc}", duration_ms=ms())
        trajectory_id = response.headers.get(TRAJECTORY_HEADER)
        if response.status_code >= 400:
            return ChatReply("", trajectory_id, error=http_error_text(response), duration_ms=ms())
        try:
            text = response.json()["choices"][0]["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return ChatReply("", trajectory_id, error=f"unexpected body: {response.text[:200]!r}", duration_ms=ms())
        return ChatReply(str(text), trajectory_id, duration_ms=ms())

    async def status(self, *, refresh: bool = False) -> JSON | None:
        """`GET /v1/ghost/status` (`refresh`: recount now); None when the daemon has no status route.
        RunnerError when it cannot be read (unreachable, 401, not JSON)."""
        try:
            response = await self._client.get("/v1/ghost/status", params={"refresh": "true"} if refresh else None)
        except httpx.HTTPError as exc:
            raise RunnerError(f"cannot read {self.base_url}/v1/ghost/status: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 404:
            return None
        if response.status_code == 401:
            raise RunnerError(f"the daemon at {self.base_url} refused the api key (401): pass --api-key")
        try:
            response.raise_for_status()
            doc = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise RunnerError(f"{self.base_url}/v1/ghost/status failed: {type(exc).__name__}: {exc}") from exc
        return doc if isinstance(doc, dict) else {}

    async def counts(self) -> Counts | None:
        """The learning counts, recomputed now; None when the daemon has no status route."""
        doc = await self.status(refresh=True)
        return None if doc is None else Counts.from_status(doc)

    async def describe(self) -> JSON:
        """The daemon's identity (waits while it says `starting`; checks the api key): `HttpRunner.describe`."""
        runner = HttpRunner(self.base_url, api_key=self.api_key, model=self.model, timeout_s=self.timeout_s,
                            temperature=self.temperature, transport=self._transport)
        try:
            return await runner.describe()
        finally:
            await runner.aclose()

    async def aclose(self) -> None:
        """Close the pooled client."""
        await self._client.aclose()


class HomeStore:
    """Read-only views of the daemon's home, when it is readable from here: the lesson a turn taught, whether
    the daemon took a correction, which lessons a turn was shown. Blocking (call through a thread)."""

    def __init__(self, root: Path) -> None:
        from ghost_agent.home import GhostHome

        self.home = GhostHome(Path(root))

    def has_trajectory(self, trajectory_id: str) -> bool:
        """True when the trajectory is recorded in this home (so this is the daemon's home)."""
        return self._trajectory(trajectory_id) is not None

    def corrected(self, trajectory_id: str) -> bool:
        """True when the corrections sidecar holds a user correction of the trajectory."""
        path = self.home.corrections
        if not path.exists():
            return False
        for line in path.read_bytes().splitlines():
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if (isinstance(record, dict) and record.get("trajectory_id") == trajectory_id
                    and record.get("source") == "user_correction"):
                return True
        return False

    def lesson_from(self, trajectory_id: str) -> tuple[str, str] | None:
        """(lesson id, "task -> solution") of the live lesson a reflection wrote from the trajectory (a critique's
        or the user's stated preference), or None."""
        from ghost_agent.memory.preference import LESSON_SOURCE as PREFERENCE_SOURCE
        from ghost_agent.memory.store import SkillMemory, SkillMemoryError

        if not self.home.lessons_db.exists():
            return None
        try:
            with SkillMemory(self.home.lessons_db) as memory:
                for lesson in memory.all():
                    sources = (lesson.source_trajectory_id, *lesson.merged_sources)
                    if lesson.source in ("reflection", PREFERENCE_SOURCE) and trajectory_id in sources:
                        return lesson.id, f"{lesson.task} -> {lesson.solution}"
        except SkillMemoryError as exc:
            log.warning("transfer_lesson_store_unreadable", error=str(exc))
        return None

    def no_lesson_reason(self, trajectory_id: str) -> str:
        """Why the reflection on the trajectory stored no lesson (its record's `no_lesson`), or ""."""
        from ghost_agent.trajectories.collector import TrajectoryCollector

        if not self.home.trajectories.is_dir():
            return ""
        with TrajectoryCollector(self.home.trajectories, enabled=False, process_lock=False) as collector:
            for traj in collector.iter_trajectories(source="reflection"):
                if traj.extra.get("reflected_from") == trajectory_id and traj.extra.get("no_lesson"):
                    return str(traj.extra["no_lesson"])
        return ""

    def shown_ids(self, trajectory_id: str) -> list[str] | None:
        """The ids of the lessons the turn was shown (its record's `lessons_shown`); None when not recorded."""
        traj = self._trajectory(trajectory_id)
        if traj is None:
            return None
        shown = traj.extra.get("lessons_shown")
        return [str(ref.get("id")) for ref in shown if isinstance(ref, dict)] if isinstance(shown, list) else []

    def lessons_shown(self, trajectory_id: str) -> int | None:
        """How many lessons the turn was shown; None when it is not recorded."""
        ids = self.shown_ids(trajectory_id)
        return None if ids is None else len(ids)

    def _trajectory(self, trajectory_id: str) -> Any:
        from ghost_agent.trajectories.collector import TrajectoryCollector

        if not self.home.trajectories.is_dir():
            return None
        with TrajectoryCollector(self.home.trajectories, enabled=False, process_lock=False) as collector:
            return collector.get(trajectory_id)


__all__ = ["ChatReply", "Counts", "HomeStore", "TransferClient"]
