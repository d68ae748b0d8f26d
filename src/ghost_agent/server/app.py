"""`build_app(settings)`: the app factory. No module-level app or service globals.

The lifespan owns every service's lifetime: it lays out GHOST_HOME, starts logging, starts the backend
(the embedded model loads in the background while `/health` says `starting`), and on shutdown gives
background tasks a grace period, cancels the rest, closes the backend and flushes the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from ghost_agent import __version__
from ghost_agent.agent.correction import CorrectionStage
from ghost_agent.agent.learn import LearnOnRecovery
from ghost_agent.agent.memory_bus import MemoryStage
from ghost_agent.agent.pipeline import TurnPipeline
from ghost_agent.agent.record import RecordTrajectory
from ghost_agent.agent.respond import RespondStage
from ghost_agent.agent.routing import RouterStage
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages import ContextStage, PrepareStage
from ghost_agent.distill.collector import TrajectoryCollector
from ghost_agent.home import GhostHome
from ghost_agent.llm.base import LLMBackend
from ghost_agent.logging import configure_logging, get_logger
from ghost_agent.memory.store import SkillMemory, SkillMemoryError
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.router.dispatch import Router
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.server.chat.route import router as chat_router
from ghost_agent.server.errors import install_error_handlers
from ghost_agent.server.metrics import Metrics
from ghost_agent.server.middleware import GhostMiddleware
from ghost_agent.server.openapi import install_openapi
from ghost_agent.server.routes import router as misc_router
from ghost_agent.server.state import AppContext
from ghost_agent.settings import Settings
from ghost_agent.tools.registry import default_registry

log = get_logger("server")

BACKGROUND_GRACE_S = 2.0


def served_model_name(settings: Settings, backend: LLMBackend) -> str:
    """The name `/v1/models` advertises: configured, else the local model, else the backend's own."""
    if settings.model:
        return settings.model
    if backend.kind == "embedded":
        return settings.local_model
    return str(getattr(backend, "model", None) or "ghost-agent")


def build_pipeline(services: AgentServices) -> TurnPipeline:
    """The turn (DESIGN §4): context → correction check → memory bus → router → reply (fast path, or tool loop
    → verifier); after delivery: record the trajectory, learn from a recovery."""
    settings = services.settings
    return TurnPipeline(
        [
            ContextStage(recording=services.collector.enabled),
            CorrectionStage(services),
            MemoryStage(services),
            RouterStage(services),
            PrepareStage(settings.model),
            RespondStage(services),
        ],
        finishers=[
            RecordTrajectory(
                services.collector, services.recent, refute_confidence=settings.verifier_refute_confidence
            ),
            LearnOnRecovery(services),
        ],
    )


async def _flush_trajectories_periodically(ctx: AppContext, every_s: float) -> None:
    """A safety net until (and besides) the idle-time journal drain: fsync batched records regularly."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await asyncio.to_thread(ctx.collector.flush)
        except OSError as exc:
            log.error("trajectory_flush_failed", error=repr(exc))


def load_learned_models(ctx: AppContext) -> None:
    """Attach the PRM and router checkpoints: the configured path, else the home's self-trained one if present.

    A missing or unusable checkpoint is a logged warning and a neutral model (PRM 0.5 for everything, router
    always `agent`), never a startup failure.
    """
    settings, home = ctx.settings, ctx.home
    prm_path = settings.prm_model or (home.prm_checkpoint if home.prm_checkpoint.exists() else None)
    router_path = settings.router_model or (home.router_checkpoint if home.router_checkpoint.exists() else None)
    services = ctx.agent_services
    services.prm_scorer = PRMScorer.from_setting(prm_path)
    services.router = Router.from_setting(router_path, mode=settings.router)
    log.info(
        "learned_models",
        prm=ctx.prm_scorer.model_id,
        prm_source=ctx.prm_scorer.source,
        router=ctx.router.model_id,
        router_source=ctx.router.source,
    )


def open_lesson_store(ctx: AppContext) -> None:
    """Open SkillMemory in the home; an unusable store is logged and the daemon runs without lessons."""
    try:
        ctx.agent_services.memory = SkillMemory(ctx.home.lessons_db)
    except SkillMemoryError as exc:
        log.error("lesson_store_unavailable", path=str(ctx.home.lessons_db), error=str(exc))


async def detect_sandbox(ctx: AppContext) -> None:
    """Probe the sandbox layers off the event loop and publish the result (cached per process and settings).

    Never fatal: without a usable sandbox the daemon still chats, and code-running tools report why they
    cannot run. An unisolated fallback is logged loudly by the detection itself.
    """
    from ghost_agent.sandbox.base import SandboxError
    from ghost_agent.sandbox.detect import get_detection

    try:
        ctx.sandbox = await asyncio.to_thread(get_detection, ctx.settings)
        ctx.agent_services.sandbox = ctx.sandbox.backend
    except SandboxError as exc:
        ctx.sandbox_error = ctx.agent_services.sandbox_error = str(exc)
        log.error("sandbox_unavailable", mode=ctx.settings.sandbox, error=ctx.sandbox_error)


async def clean_workspaces(ctx: AppContext) -> None:
    """Delete workspaces idle longer than `--workspace-max-age-days` (off the event loop; errors are logged)."""
    if ctx.workspaces is None:
        return
    try:
        await asyncio.to_thread(ctx.workspaces.cleanup)
    except OSError as exc:
        log.warning("workspace_cleanup_failed", error=repr(exc))


async def _start_backend(ctx: AppContext) -> None:
    try:
        await ctx.backend.start()
    except Exception as exc:  # noqa: BLE001 - reported on /health and every request, never fatal
        ctx.backend_error = str(exc) or repr(exc)
        log.error("backend_failed", kind=ctx.backend.kind, error=ctx.backend_error)
        return
    if ctx.backend.kind == "http" and not ctx.settings.model:
        # Advertise what the upstream serves rather than a made-up name.
        names = await ctx.backend.list_models()
        if names:
            ctx.served_model = names[0]
    ctx.backend_ready.set()
    log.info("backend_ready", kind=ctx.backend.kind, model=ctx.served_model)


def build_app(
    settings: Settings,
    backend: LLMBackend | None = None,
    *,
    configure_logs: bool = True,
) -> FastAPI:
    """Create the daemon's ASGI app. `backend` overrides the one the settings select (tests, demos)."""
    if backend is None:
        from ghost_agent.llm.factory import make_backend

        backend = make_backend(settings)
    home = GhostHome(settings.home)
    collector = TrajectoryCollector(
        home.trajectories, enabled=settings.record_trajectories, durability=settings.trajectory_durability
    )
    services = AgentServices(settings=settings, backend=backend, collector=collector, registry=default_registry())
    ctx = AppContext(
        settings=settings,
        home=home,
        backend=backend,
        agent=services,
        pipeline=build_pipeline(services),
        collector=collector,
        metrics=Metrics(),
        served_model=served_model_name(settings, backend),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        home.ensure()
        sink = None
        if configure_logs:
            sink = configure_logging(home.log_file, level=settings.log_level, console_format=settings.log_format)
        log.info("startup", version=__version__, backend=backend.kind, settings=settings.public_dict())
        load_learned_models(ctx)
        open_lesson_store(ctx)
        ctx.agent_services.workspaces = Workspaces(
            home.workspace, quota_mb=settings.workspace_quota_mb, max_age_days=settings.workspace_max_age_days
        )
        ctx.spawn(detect_sandbox(ctx), "sandbox-detect")
        ctx.spawn(clean_workspaces(ctx), "workspace-cleanup")
        # The asyncio.Event must belong to the serving loop, not the one (if any) that built the app.
        ctx.backend_ready = asyncio.Event()
        start = ctx.spawn(_start_backend(ctx), "backend-start")
        if collector.enabled and settings.trajectory_durability == "batch" and settings.trajectory_flush_s > 0:
            ctx.spawn(
                _flush_trajectories_periodically(ctx, settings.trajectory_flush_s), "trajectory-flush", service=True
            )
        if not getattr(backend, "slow_start", False):
            await start
        try:
            yield
        finally:
            log.info("shutdown_begin", background_tasks=len(ctx.tasks))
            # In-flight requests already had the grace period (uvicorn drains them before the lifespan
            # ends); background work is only given a moment to reach a checkpoint, then cancelled.
            await ctx.stop_tasks(min(BACKGROUND_GRACE_S, settings.shutdown_grace_s))
            await backend.aclose()
            if services.memory is not None:
                services.memory.close()
            collector.close()  # fsyncs what the batch policy has not synced yet
            log.info("shutdown_complete")
            if sink is not None:
                sink.close()

    app = FastAPI(
        title="Ghost Agent",
        version=__version__,
        description="A local, privacy-first, self-improving LLM agent daemon speaking the OpenAI chat API.",
        lifespan=lifespan,
        # FastAPI's native OpenTelemetry: off. Nothing leaves the machine, and it costs per-request CPU.
        telemetry={"tracing": False, "metrics": False, "logs": False, "auto_configure": False},
    )
    app.state.ctx = ctx
    install_error_handlers(app)
    app.include_router(chat_router)
    app.include_router(misc_router)
    app.add_middleware(GhostMiddleware, ctx=ctx)
    install_openapi(app, auth=bool(settings.api_key))
    return app
