"""Pick the backend the settings ask for."""

from __future__ import annotations

from ghost_agent.llm.base import LLMBackend
from ghost_agent.settings import Settings


def make_backend(settings: Settings) -> LLMBackend:
    """An http upstream when `upstream_url` is set, else the embedded local model."""
    if settings.backend.upstream_url:
        from ghost_agent.llm.http_upstream import HttpUpstreamBackend

        return HttpUpstreamBackend(
            settings.backend.upstream_url,
            api_key=settings.backend.upstream_api_key,
            connect_timeout=settings.backend.upstream_connect_timeout,
            read_timeout=settings.backend.upstream_timeout,
            retries=settings.backend.upstream_retries,
            max_connections=settings.backend.upstream_max_connections,
        )
    from ghost_agent.llm.embedded import EmbeddedBackend

    return EmbeddedBackend(
        settings.backend.local_model,
        cache_dir=settings.backend.model_cache_dir,
        n_ctx=settings.backend.n_ctx,
        n_threads=settings.backend.n_threads or None,  # None: the CPUs this process may actually use
        queue_max=settings.backend.queue_max,
        served_name=settings.backend.served_model_name or settings.backend.model,
        embeddings=settings.backend.embeddings,
    )
