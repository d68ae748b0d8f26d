"""The status page's JSON endpoints (`/v1/ghost/...`): what the page at `/ui` reads, and what a script can read.

Every path is under `/v1`, so behind the daemon's bearer auth like the OpenAI API. Reads page (`limit`, and a
cursor or an offset) and never rescan the home per request: "Now" comes from memory, the counts from the counts
cache (refreshed in the background when stale), the turns from an index that reads only what was appended since.
Actions (pin, archive, retract a lesson; promote, reject a skill candidate) are POSTs and are refused from any
page but the daemon's own: a request carrying an `Origin` must come from the origin it is addressed to, and one
a browser marks cross-site (`Sec-Fetch-Site`) is refused outright — a page the user visits elsewhere cannot pin
or retract anything, even one the CORS list lets read. Everything returned is data: the page renders it as text.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal
from urllib.parse import urlsplit

from fastapi import APIRouter, Query, Request

from ghost_agent.jsonsafe import JSON
from ghost_agent.memory.store import SkillMemory
from ghost_agent.server.errors import ApiError
from ghost_agent.server.openapi import error_responses
from ghost_agent.server.state import AppContext, app_context
from ghost_agent.server.status import live_model_status
from ghost_agent.server.turn_index import turn_detail
from ghost_agent.skills_auto.promote import promote, reject
from ghost_agent.skills_auto.store import SkillStore, SkillStoreError

router = APIRouter()

LessonAction = Literal["pin", "unpin", "archive", "unarchive", "retract"]
SkillAction = Literal["promote", "reject"]
LESSON_STATUSES = ("active", "pinned", "archived", "retracted")



def _memory(ctx: AppContext) -> SkillMemory:
    memory = ctx.agent.memory if ctx.agent is not None else None
    if memory is None:
        raise ApiError(503, "the lesson store is not available on this daemon", code="lessons_unavailable")
    return memory


def same_origin_only(request: Request) -> None:
    """Refuse an action a page other than the daemon's own sent (see the module docstring)."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    foreign = site is not None and site not in ("same-origin", "none")
    if origin is not None and not foreign:
        parts = urlsplit(origin.strip().lower())
        foreign = parts.netloc != (request.headers.get("host") or "").strip().lower()
    if foreign:
        raise ApiError(403, "actions are accepted only from the daemon's own page (/ui) or from a client that is "
                       "not a web page", code="origin_not_allowed")


# ---------------------------------------------------------------------------------------------------- now

@router.get("/v1/ghost/now", summary="The daemon right now: backend, sandbox, rates, learned models, counts",
            responses=error_responses(401))
async def now(request: Request) -> JSON:
    """Backend and model, sandbox isolation, uptime, requests and tokens per minute over the last five minutes,
    tokens/s and latency of the last replies, requests in flight, the learned models with their held-out
    figures, and the cached counts (`counts` null until the first computation, which starts in the background)."""
    ctx = app_context(request)
    watchdog = ctx.watchdog
    counts = None
    if watchdog is not None:
        counts = watchdog.counts.snapshot
        if counts is None or watchdog.counts.stale:
            ctx.spawn(watchdog.counts.get(), "console-counts")
    sandbox = ctx.sandbox
    return {
        "backend": {"kind": ctx.backend.kind, "ready": ctx.backend_ready.is_set(), "error": ctx.backend_error},
        "model": ctx.served_model,
        "sandbox": {"backend": sandbox.candidate if sandbox is not None else None,
                    "isolated": bool(sandbox is not None and sandbox.isolation.isolated),
                    "isolates": sandbox.isolates() if sandbox is not None else [],
                    "warnings": sandbox.warnings() if sandbox is not None else [],
                    "error": ctx.sandbox_error},
        "uptime_s": round(time.time() - ctx.started_at, 1),
        "in_flight": ctx.model_gate.users,
        "watchdog": {"enabled": bool(watchdog and watchdog.enabled), "current_phase": watchdog.current if watchdog
                     else None, "idle_s": round(ctx.activity.idle_s(), 1)},
        "activity": ctx.replies.figures(),
        "models": {"prm": live_model_status(ctx.prm_scorer), "router": live_model_status(ctx.router)},
        "counts": counts,
    }


# -------------------------------------------------------------------------------------------------- turns

@router.get("/v1/ghost/turns", summary="The recorded turns, newest first (paged, searchable)",
            responses=error_responses(401))
async def turns(
    request: Request,
    limit: int = Query(50, ge=1, le=200),
    before: str | None = Query(None, description="The `next` cursor of the previous page (a turn's ts)."),
    q: str = Query("", max_length=200, description="Words the request or the reply contains."),
    source: str | None = Query(None, description="chat, self_play, eval, reflection, self_consistency."),
    outcome: str | None = Query(None, description="passed, failed, unknown."),
) -> JSON:
    """Each turn: outcome, route and strategy, latency, model calls, tokens, tools used, the request's start."""
    index = app_context(request).turn_index()
    items, cursor = await asyncio.to_thread(index.page, limit=limit, before=before, query=q, source=source,
                                            outcome=outcome)
    return {"items": items, "next": cursor}


@router.get("/v1/ghost/turns/{trajectory_id}", summary="One turn as a tree of timed steps",
            responses=error_responses(401, 404))
async def turn(request: Request, trajectory_id: str) -> JSON:
    """The request and reply, the stages and the strategy's steps with their times, what it was shown (lessons,
    demonstrations, worked examples) and the correction it got, if any."""
    found = await asyncio.to_thread(app_context(request).turn_index().find, trajectory_id[:64])
    if found is None:
        raise ApiError(404, f"no turn {trajectory_id[:64]!r} in this home", code="not_found")
    return turn_detail(found)


# ------------------------------------------------------------------------------------------------ lessons

def _lessons_page(memory: SkillMemory, status: str | None, query: str, offset: int, limit: int) -> JSON:
    lessons = memory.all(include_archived=True, include_retracted=True)
    lessons.reverse()  # newest first
    if status:
        lessons = [lesson for lesson in lessons if lesson.status == status]
    needle = query.casefold().strip()
    if needle:
        lessons = [lesson for lesson in lessons
                   if needle in f"{lesson.task}\n{lesson.mistake}\n{lesson.solution}".casefold()]
    return {"total": len(lessons), "offset": offset,
            "items": [lesson.to_dict() for lesson in lessons[offset: offset + limit]],
            "counts": memory.status_counts()}


@router.get("/v1/ghost/lessons", summary="Lessons with their provenance, newest first (paged)",
            responses=error_responses(401, 503))
async def lessons(
    request: Request,
    status: Literal["active", "pinned", "archived", "retracted"] | None = None,
    q: str = Query("", max_length=200),
    offset: int = Query(0, ge=0),
    limit: int = Query(50, ge=1, le=200),
) -> JSON:
    """Each lesson: its text, where it came from (source, the turn that wrote it, the session), when, how often
    it was shown, and its status (active, pinned, archived, retracted, with the reason)."""
    memory = _memory(app_context(request))
    return await asyncio.to_thread(_lessons_page, memory, status, q, offset, limit)


@router.post("/v1/ghost/lessons/{lesson_id}/{action}", summary="Pin, unpin, archive, unarchive or retract a lesson",
             responses=error_responses(401, 403, 404, 503))
async def lesson_action(request: Request, lesson_id: str, action: LessonAction) -> JSON:
    """The lesson after the action."""
    same_origin_only(request)
    memory = _memory(app_context(request))

    def act() -> Any:
        done = {"pin": lambda: memory.pin(lesson_id, True), "unpin": lambda: memory.pin(lesson_id, False),
                "archive": lambda: memory.archive(lesson_id, True),
                "unarchive": lambda: memory.archive(lesson_id, False),
                "retract": lambda: memory.retract(lesson_id, reason="operator")}[action]()
        return memory.get(lesson_id) if done or memory.get(lesson_id) is not None else None

    lesson = await asyncio.to_thread(act)
    if lesson is None:
        raise ApiError(404, f"no lesson {lesson_id[:64]!r}", code="not_found")
    return dict(lesson.to_dict())


# ------------------------------------------------------------------------------------------------- skills

def _skill_store(ctx: AppContext) -> SkillStore:
    try:
        return SkillStore(ctx.home.skills_db)
    except SkillStoreError as exc:
        raise ApiError(503, str(exc), code="skills_unavailable") from exc


@router.get("/v1/ghost/skills", summary="Skill candidates mined from passing turns", responses=error_responses(401))
async def skills(request: Request, status: Literal["candidate", "promoted", "rejected"] | None = None,
                 limit: int = Query(100, ge=1, le=500)) -> JSON:
    """Each candidate: its tool sequence, support, sample requests, status."""
    ctx = app_context(request)

    def read() -> JSON:
        store = _skill_store(ctx)
        try:
            found = store.candidates([status] if status else None)
            return {"items": [c.to_dict() for c in found[:limit]], "counts": store.status_counts()}
        finally:
            store.close()

    return await asyncio.to_thread(read)


@router.post("/v1/ghost/skills/{candidate_id}/{action}", summary="Promote or reject a skill candidate",
             responses=error_responses(401, 403, 404, 503))
async def skill_action(request: Request, candidate_id: str, action: SkillAction) -> JSON:
    """The candidate after the decision (promoting writes its pinned lesson)."""
    same_origin_only(request)
    ctx = app_context(request)
    memory = _memory(ctx)

    def act() -> JSON | None:
        store = _skill_store(ctx)
        try:
            candidate = store.get(candidate_id)
            if candidate is None:
                return None
            done = promote(store, memory, candidate) if action == "promote" else reject(store, memory, candidate)
            return done.to_dict()
        finally:
            store.close()

    result = await asyncio.to_thread(act)
    if result is None:
        raise ApiError(404, f"no skill candidate {candidate_id[:64]!r}", code="not_found")
    return result


# ----------------------------------------------------------------------------------------------- watchdog

@router.get("/v1/ghost/watchdog/runs", summary="The watchdog's phase runs, oldest first",
            responses=error_responses(401))
async def watchdog_runs(request: Request, limit: int = Query(200, ge=1, le=2000),
                        phase: str | None = Query(None, max_length=64)) -> JSON:
    """Each run: phase, start and end (UTC), status (ok, skipped, yielded, failed, cancelled), reason, figures;
    with the phase table as it stands now (next eligible time, why it did not run at the last tick)."""
    ctx = app_context(request)
    watchdog = ctx.watchdog
    if watchdog is None or watchdog.run_log is None:
        return {"items": [], "phases": [], "corrupt": 0, "enabled": False}
    run_log = watchdog.run_log
    items = await asyncio.to_thread(run_log.runs, limit, phase=phase)
    return {"items": items, "phases": watchdog.status()["phases"], "corrupt": run_log.corrupt,
            "enabled": watchdog.enabled}


__all__ = ["router", "same_origin_only"]
