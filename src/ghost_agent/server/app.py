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
from ghost_agent.agent.pipeline import TurnPipeline
from ghost_agent.agent.services import AgentServices
from ghost_agent.agent.stages.correction import CorrectionStage
from ghost_agent.agent.stages.experience import ExperienceOutcome, ExperienceStage
from ghost_agent.agent.stages.learn import LearnOnRecovery
from ghost_agent.agent.stages.memory_bus import MemoryStage
from ghost_agent.agent.stages.prepare import ContextStage, PrepareStage, ReplyModelStage
from ghost_agent.agent.stages.record import RecordTrajectory
from ghost_agent.agent.stages.reflection_scheduler import ReflectionScheduler, build_reflection
from ghost_agent.agent.stages.respond import RespondStage
from ghost_agent.agent.stages.routing import RouterStage
from ghost_agent.home import GhostHome
from ghost_agent.llm.base import LLMBackend
from ghost_agent.llm.gate import ModelGate
from ghost_agent.llm.model_names import ModelNames
from ghost_agent.logging import configure_logging, get_logger
from ghost_agent.memory.store import SkillMemory, SkillMemoryError
from ghost_agent.prm.scorer import PRMScorer
from ghost_agent.router.dispatch import Router
from ghost_agent.sandbox.workspace import Workspaces
from ghost_agent.selfhood.service import Selfhood
from ghost_agent.selfplay.experience import ExperienceBank, ExperienceBankError
from ghost_agent.server.chat.route import router as chat_router
from ghost_agent.server.completions.route import router as completions_router
from ghost_agent.server.console.api import router as console_api_router
from ghost_agent.server.console.models_api import router as console_models_router
from ghost_agent.server.console.page import router as console_page_router
from ghost_agent.server.cors import install_cors
from ghost_agent.server.embeddings.route import router as embeddings_router
from ghost_agent.server.errors import install_error_handlers
from ghost_agent.server.metrics import Metrics
from ghost_agent.server.middleware import GhostMiddleware
from ghost_agent.server.openapi import install_openapi
from ghost_agent.server.routes import router as misc_router
from ghost_agent.server.state import AppContext
from ghost_agent.server.status import router as ghost_status_router
from ghost_agent.settings import Settings
from ghost_agent.tools.registry import default_registry
from ghost_agent.trajectories.collector import TrajectoryCollector
from ghost_agent.watchdog.activity import UserActivityMiddleware
from ghost_agent.watchdog.clock import ActivityClock, Clock
from ghost_agent.watchdog.service import build_watchdog, start_watchdog

log = get_logger("server")

BACKGROUND_GRACE_S = 2.0


def model_names(settings: Settings, backend: LLMBackend) -> ModelNames:
    """The model names (docs/openai-api.md, "Model names"): advertised = the alias, else `--model`, else the
    local model (embedded) or the backend's own name (an upstream's is learned at startup)."""
    if backend.kind == "embedded":
        own = str(getattr(backend, "served_name", None) or settings.backend.local_model)
    else:
        own = str(getattr(backend, "model", None) or "ghost-agent")
    return ModelNames.configure(
        served_model_name=settings.backend.served_model_name, model=settings.backend.model, backend_kind=backend.kind,
        backend_name=own,
    )


def build_pipeline(
    services: AgentServices,
    metrics: Metrics | None = None,
    reflection: ReflectionScheduler | None = None,
    names: ModelNames | None = None,
) -> TurnPipeline:
    """The turn (DESIGN §4): context → correction check → memory bus → worked examples → router → reply (fast
    path, or tool loop → verifier); after delivery: record the trajectory, learn from a recovery, credit or
    demote the examples shown. A finisher that raises is counted in `metrics` (`ghost_finisher_failures_total`)."""
    settings = services.settings

    def count_failure(finisher: str) -> None:
        if metrics is not None:
            metrics.finisher_failures.labels(finisher).inc()

    pipeline = TurnPipeline(
        [
            ContextStage(recording=services.collector.enabled),
            CorrectionStage(services, hooks=[reflection.on_correction] if reflection is not None else None),
            MemoryStage(services),
            ExperienceStage(services),
            RouterStage(services),
            PrepareStage(names if names is not None else settings.backend.model, services.backend.context_limit),
            RespondStage(services),
            ReplyModelStage(),  # last: every reply names the same model, whichever path produced it
        ],
        finishers=[
            RecordTrajectory(
                services.collector, services.recent, refute_confidence=settings.agent.verifier_refute_confidence
            ),
            LearnOnRecovery(services),
            ExperienceOutcome(services),
            *([reflection] if reflection is not None else []),  # schedules a correction's reflection, if pending
        ],
        on_finisher_error=count_failure,
    )
    if metrics is not None:
        for finisher in pipeline.finishers:  # exported at 0, so an alert rule sees every series from the start
            metrics.finisher_failures.labels(finisher.name)
    return pipeline


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
    learning, home = ctx.settings.learning, ctx.home
    prm_path = learning.prm_model or (home.prm_checkpoint if home.prm_checkpoint.exists() else None)
    router_path = learning.router_model or (home.router_checkpoint if home.router_checkpoint.exists() else None)
    services = ctx.agent_services
    services.prm_scorer = PRMScorer.from_setting(prm_path)
    services.router = Router.from_setting(router_path, mode=ctx.settings.agent.router)
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


def open_experience_bank(ctx: AppContext) -> None:
    """Open the experience bank in the home (a corrupt file is set aside there and reported); one that cannot be
    opened at all is logged and the daemon runs without worked examples."""
    try:
        bank = ExperienceBank(ctx.home.experience_db, max_examples=ctx.settings.learning.experience_max_examples)
    except ExperienceBankError as exc:
        log.error("experience_bank_unavailable", path=str(ctx.home.experience_db), error=str(exc))
        return
    ctx.agent_services.experience = bank
    if bank.recovered_from is not None:
        ctx.health_extra["experience_bank_recovered_from"] = str(bank.recovered_from)


async def detect_sandbox(ctx: AppContext) -> None:
    """Probe the sandbox layers off the event loop and publish the result (cached per process and settings).

    Never fatal: without a usable sandbox the daemon still chats, and code-running tools report why they
    cannot run (the default when bubblewrap is missing: model-written code never runs unisolated unless opted
    into). An unisolated fallback is logged loudly by the detection itself.
    """
    from ghost_agent.sandbox.base import SandboxError, SandboxRefused
    from ghost_agent.sandbox.detect import get_detection

    try:
        ctx.sandbox = await asyncio.to_thread(get_detection, ctx.settings)
        ctx.agent_services.sandbox = ctx.sandbox.backend
    except SandboxError as exc:
        ctx.sandbox_refused = isinstance(exc, SandboxRefused)
        ctx.sandbox_error = ctx.agent_services.sandbox_error = str(exc)
        log.error("sandbox_unavailable", mode=ctx.settings.sandbox.mode, error=ctx.sandbox_error, code_tools="disabled")


async def clean_workspaces(ctx: AppContext) -> None:
    """Delete workspaces idle longer than `--workspace-max-age-days`, then the least recently used beyond
    `--workspace-max-count` (off the event loop; errors are logged)."""
    if ctx.workspaces is None:
        return
    try:
        await asyncio.to_thread(ctx.workspaces.cleanup)
        await asyncio.to_thread(ctx.workspaces.evict_over_cap)
    except OSError as exc:
        log.warning("workspace_cleanup_failed", error=repr(exc))


async def _start_backend(ctx: AppContext) -> None:
    try:
        await ctx.backend.start()
    except Exception as exc:  # noqa: BLE001 - reported on /health and every request, never fatal
        ctx.backend_error = str(exc) or repr(exc)
        log.error("backend_failed", kind=ctx.backend.kind, error=ctx.backend_error)
        return
    if ctx.backend.kind == "http":
        listed = await ctx.backend.list_models()  # also notes each model's context, where the upstream says
        if ctx.models.forward is None:
            # Advertise what the upstream serves rather than a made-up name (under an alias: what serves it).
            ctx.models.discovered(listed)
    ctx.backend_ready.set()
    log.info("backend_ready", kind=ctx.backend.kind, model=ctx.served_model)


def build_app(
    settings: Settings,
    backend: LLMBackend | None = None,
    *,
    configure_logs: bool = True,
    clock: Clock | None = None,
) -> FastAPI:
    """Create the daemon's ASGI app. `backend` overrides the one the settings select (tests, demos); `clock`
    is the idle clock's and the watchdog's time source (tests move a `ManualClock` instead of sleeping)."""
    if backend is None:
        from ghost_agent.llm.factory import make_backend

        backend = make_backend(settings.backend)
    home = GhostHome(settings.home)
    storage = settings.storage
    collector = TrajectoryCollector(
        home.trajectories, enabled=storage.record_trajectories, durability=storage.trajectory_durability,
        max_session_files=storage.trajectory_max_session_files,
    )
    services = AgentServices(settings=settings, backend=backend, collector=collector, registry=default_registry())
    services.selfhood = Selfhood(home.selfhood, enabled=settings.learning.selfhood)  # its narrative loads at startup
    metrics = Metrics()
    model_gate = ModelGate()
    # A user correction schedules a reflection on the corrected turn; its critique waits on the gate (chat first).
    reflection = build_reflection(services, model_gate)
    names = model_names(settings, backend)
    ctx = AppContext(
        settings=settings,
        home=home,
        backend=backend,
        agent=services,
        pipeline=build_pipeline(services, metrics, reflection, names),
        collector=collector,
        metrics=metrics,
        models=names,
        activity=ActivityClock(clock),
        model_gate=model_gate,
        reflection=reflection,
    )
    if reflection is not None:
        reflection.spawn = ctx.spawn  # reflection tasks are app tasks: shutdown gives them the grace, then cancels
    ctx.watchdog = build_watchdog(ctx)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        home.ensure()
        sink = None
        if configure_logs:
            sink = configure_logging(
                home.log_file,
                level=settings.logging.level,
                console_format=settings.logging.format,
                max_bytes=settings.logging.max_bytes,
                backups=settings.logging.backups,
            )
        log.info("startup", version=__version__, backend=backend.kind, settings=settings.public_dict())
        load_learned_models(ctx)
        open_lesson_store(ctx)
        await asyncio.to_thread(open_experience_bank, ctx)  # reads the bank's index: off the event loop
        if services.selfhood is not None:
            await asyncio.to_thread(services.selfhood.load)  # the wake-up prefix of the first turn
        ctx.agent_services.workspaces = Workspaces(
            home.workspace, quota_mb=settings.sandbox.workspace_quota_mb,
            max_age_days=settings.sandbox.workspace_max_age_days, max_count=settings.sandbox.workspace_max_count,
        )
        ctx.spawn(detect_sandbox(ctx), "sandbox-detect")
        ctx.spawn(clean_workspaces(ctx), "workspace-cleanup")
        # The asyncio.Event must belong to the serving loop, not the one (if any) that built the app.
        ctx.backend_ready = asyncio.Event()
        start = ctx.spawn(_start_backend(ctx), "backend-start")
        if collector.enabled and storage.trajectory_durability == "batch" and storage.trajectory_flush_s > 0:
            ctx.spawn(
                _flush_trajectories_periodically(ctx, storage.trajectory_flush_s), "trajectory-flush", service=True
            )
        start_watchdog(ctx)  # a held service: cancelled (mid-phase too) and awaited by stop_tasks
        if not getattr(backend, "slow_start", False):
            await start
        try:
            yield
        finally:
            log.info("shutdown_begin", background_tasks=len(ctx.tasks))
            # In-flight requests already had the grace period (uvicorn drains them before the lifespan
            # ends); background work is only given a moment to reach a checkpoint, then cancelled.
            await ctx.stop_tasks(min(BACKGROUND_GRACE_S, settings.server.shutdown_grace_s))
            await backend.aclose()
            if services.memory is not None:
                services.memory.close()
            if services.experience is not None:
                services.experience.close()
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
        # Swagger UI and ReDoc pages load their scripts from a CDN: a browser opening them would leave the
        # machine. /openapi.json stays; point any local viewer at it.
        docs_url=None,
        redoc_url=None,
    )
    app.state.ctx = ctx
    install_error_handlers(app)
    app.include_router(chat_router)
    app.include_router(completions_router)
    app.include_router(embeddings_router)
    app.include_router(misc_router)
    app.include_router(ghost_status_router)
    app.include_router(console_api_router)
    app.include_router(console_models_router)
    app.include_router(console_page_router)
    # Inside GhostMiddleware (added after it = outer): only authenticated chat requests are user activity.
    app.add_middleware(UserActivityMiddleware, activity=ctx.activity, gate=ctx.model_gate)
    app.add_middleware(GhostMiddleware, ctx=ctx)
    install_cors(app, settings.server)  # outermost: a preflight carries no api key and must not meet the auth check
    install_openapi(app, auth=bool(settings.server.api_key), max_n=settings.server.max_n)
    return app
