"""Prometheus metrics, one registry per app (tests build many apps in one process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
KNOWN_PATHS = frozenset(
    {"/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models", "/v1/ghost/status",
     "/v1/ghost/health", "/health", "/metrics", "/openapi.json", "/ui", "/v1/ghost/now", "/v1/ghost/turns",
     "/v1/ghost/lessons", "/v1/ghost/skills", "/v1/ghost/watchdog/runs", "/v1/ghost/selfplay", "/v1/ghost/models",
     "/v1/ghost/evals"}
)


class Metrics:
    """The daemon's counters and histograms."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "ghost_requests", "HTTP requests by path and status.", ["path", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "ghost_request_duration_seconds",
            "Request latency until the last byte was sent.",
            ["path"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ttft = Histogram(
            "ghost_upstream_ttft_seconds",
            "Backend time to first token (first chunk, or the whole reply when not streaming).",
            ["stream"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tokens = Counter("ghost_tokens", "Tokens processed by the backend.", ["kind"], registry=self.registry)
        self.in_flight = Gauge("ghost_requests_in_flight", "Requests being served.", registry=self.registry)
        # Connections refused by the HTTP limits before the app saw them (server/http_limits.py).
        self.http_refused = Counter(
            "ghost_http_refused", "Requests refused before the app by reason (header or body size, timeouts).",
            ["reason"], registry=self.registry,
        )
        self.backend_errors = Counter(
            "ghost_backend_errors", "Backend failures by HTTP status returned.", ["status"], registry=self.registry
        )
        # Work after delivery that failed (e.g. `record`: a turn the client saw succeed has no trajectory).
        # Alert on any increase; the `finisher_failed` log event has the request id and the error.
        self.finisher_failures = Counter(
            "ghost_finisher_failures", "Post-delivery finishers that raised, by finisher.", ["finisher"],
            registry=self.registry,
        )
        # The biological watchdog: one run per phase execution, by how it ended (ok, skipped, yielded, failed,
        # cancelled); gating skips (window, cooldown, a user request) are not runs.
        self.phase_runs = Counter(
            "ghost_phase_runs", "Watchdog phase runs by phase and result status.", ["phase", "status"],
            registry=self.registry,
        )
        self.phase_duration = Histogram(
            "ghost_phase_duration_seconds", "Wall time of one watchdog phase run.", ["phase"],
            buckets=_LATENCY_BUCKETS, registry=self.registry,
        )

    @staticmethod
    def path_label(path: str) -> str:
        """Bound label cardinality: unknown paths are counted together."""
        if path.startswith("/v1/models/"):
            return "/v1/models/{id}"  # one label whatever the id (clients choose it)
        if path.startswith(("/v1/ghost/turns/", "/v1/ghost/lessons/", "/v1/ghost/skills/")):
            return path[: path.index("/", len("/v1/ghost/")) + 1] + "{id}"  # the status page's per-item paths
        if path.startswith("/ui/"):
            return "/ui/{asset}"
        return path if path in KNOWN_PATHS else "other"

    def render(self) -> bytes:
        """Prometheus text exposition."""
        return generate_latest(self.registry)
