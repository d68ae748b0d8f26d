"""Pick the backend the settings ask for."""

from __future__ import annotations

from ghost_agent.llm.base import LLMBackend
from ghost_agent.settings import BackendSettings


def make_backend(settings: BackendSettings) -> LLMBackend:
    """An http upstream when `upstream_url` is set, else the embedded local model."""
    if settings.upstream_url:
        from ghost_agent.llm.http_upstream import HttpUpstreamBackend

        return HttpUpstreamBackend(
            settings.upstream_url,
            api_key=settings.upstream_api_key,
            connect_timeout=settings.upstream_connect_timeout,
            read_timeout=settings.upstream_timeout,
            retries=settings.upstream_retries,
            max_connections=settings.upstream_max_connections,
        )
    from ghost_agent.llm.embedded.backend import EmbeddedBackend

    return EmbeddedBackend(
        settings.local_model,
        cache_dir=settings.model_cache_dir,
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads or None,  # None: the CPUs this process may actually use
        queue_max=settings.queue_max,
        served_name=settings.served_model_name or settings.model,
        embeddings=settings.embeddings,
    )
