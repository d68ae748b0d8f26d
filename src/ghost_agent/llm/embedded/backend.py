"""The embedded local model as the daemon's `LLMBackend`: chat on the in-process llama.cpp engine.

The engine (llm/embedded/engine.py: loading, the one worker thread, the queue, generations streamed to the event
loop) is the bottom layer; this module is chat on it: `complete` folds a generation's chunks back into a
`chat.completion`, `stream` passes them on, and `start` warms the model up before it reports ready. Legacy text
completion (llm/embedded/text.py) and embeddings (llm/embedded/embeddings.py) sit on the same engine and are
reached through `text_completion` and `embeddings`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendHealth, LLMBackend, not_supported
from ghost_agent.llm.embedded import text as embedded_text
from ghost_agent.llm.embedded.engine import EmbeddedEngine
from ghost_agent.llm.embedded.model_files import DEFAULT_MODEL
from ghost_agent.llm.stream_fold import ChunkFolder
from ghost_agent.logging import get_logger

log = get_logger("embedded")


# The warm-up request `start` runs before the backend reports ready: a bare user message, which the chat
# template gives its default system prompt — the prefix every fast-path turn and every answer-first draft
# starts with — so the first real request finds that prefix in the prompt cache and llama.cpp's first-graph
# setup (compute buffers, thread pool, KV pages) already done. One output token is enough.
WARMUP_BODY: JSON = {"messages": [{"role": "user", "content": "Hello."}], "max_tokens": 1, "temperature": 0.0}


class EmbeddedBackend(EmbeddedEngine, LLMBackend):
    """Serve a pip-installed GGUF model in-process (the `[local]` extra), OpenAI chat format in and out.

    One request generates at a time and up to `queue_max` more wait in order (0 = no waiting); beyond that
    a request fails at once with 503 `server_busy` and a `retry_after` estimate. `start` loads the model and,
    with `warmup` (the default), runs `warm_up` before returning, so "started" means "answers at full speed".
    """

    kind = "embedded"
    # A text-only model: image, audio and file parts are refused with a 400 rather than silently dropped.
    content_parts = frozenset({"text"})

    def __init__(
        self,
        model_key: str = DEFAULT_MODEL,
        *,
        cache_dir: Path,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        queue_max: int = 16,
        served_name: str | None = None,
        model_path: Path | None = None,
        warmup: bool = True,
        embeddings: str = "lazy",
    ) -> None:
        super().__init__(
            model_key, cache_dir=cache_dir, n_ctx=n_ctx, n_threads=n_threads, queue_max=queue_max,
            served_name=served_name, model_path=model_path,
        )
        self.warmup = warmup
        self.embeddings_mode = embeddings
        self.context_tokens = n_ctx  # no reply outgrows the context: a client's max_tokens is capped to it
        self._embedder: Any = None  # the embedding-mode engine (llm/embedded/embeddings.py), made on first use

    # -- lifecycle ---------------------------------------------------------------------------------------

    async def after_load(self) -> None:
        """With `warmup`, `warm_up` (under the start lock: a concurrent `start` returns only once it is done). A
        failed warm-up is logged and does not fail the start."""
        if self.warmup:
            await self.warm_up()

    async def warm_up(self) -> bool:
        """Generate one token for `WARMUP_BODY` through the normal request path; True when it ran.

        Measured on the 1.5B (2 vCPUs): without it, the first bare-message request after a load took 1.1 s
        against 0.56 s for the next one (33 s against 4 s while another job held a core); the warm-up itself
        takes 1-4 s, paid before ready (docs/embedded-model.md). Never raises: on a failure it logs
        `backend_warmup_failed` and the first real request pays the cost instead.
        """
        if not self.loaded:
            return False
        started = time.monotonic()
        try:
            reply = await self.complete(dict(WARMUP_BODY))
        except Exception as exc:  # noqa: BLE001 - an optimisation: never fatal
            log.warning("backend_warmup_failed", model=self.served_name, error=repr(exc))
            return False
        usage = reply.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        log.info(
            "backend_warmup",
            model=self.served_name,
            warmup_s=round(time.monotonic() - started, 2),
            prompt_tokens=usage.get("prompt_tokens"),
        )
        return True

    async def aclose(self) -> None:
        """Stop in-flight generations, wait for the worker, unload the model (and the embeddings engine).
        Idempotent."""
        self._closed = True
        if self._embedder is not None:
            await self._embedder.aclose()
        await super().aclose()

    # -- requests ----------------------------------------------------------------------------------------

    async def complete(self, body: JSON) -> JSON:
        """Run one chat completion to the end and return it as a `chat.completion` dict."""
        acc = ChunkFolder(self.served_name)
        async with self.generate(body) as gen:
            while (chunk := await gen.next()) is not None:
                acc.add(chunk)
        return acc.result()

    async def stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Yield `chat.completion.chunk` dicts as tokens arrive; the usage chunk only when asked for."""
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        async with self.generate(body) as gen:
            while (chunk := await gen.next()) is not None:
                if not chunk.get("choices") and "usage" in chunk and not include_usage:
                    continue
                chunk["model"] = self.served_name
                yield chunk

    async def text_completion(self, body: JSON) -> JSON:
        """Legacy `/v1/completions` on the same engine and queue as chat (llm/embedded/text.py)."""
        return await embedded_text.complete(self, body)

    def text_completion_stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Legacy `/v1/completions`, streamed (llm/embedded/text.py)."""
        return embedded_text.stream(self, body)

    async def embeddings(self, body: JSON) -> JSON:
        """`/v1/embeddings` on a second, embedding-mode engine loaded on first use (llm/embedded/embeddings.py);
        501 with `--embeddings off`."""
        if self.embeddings_mode == "off":
            raise not_supported(
                "embedded", "/v1/embeddings with --embeddings off",
                "start the daemon with --embeddings lazy (GHOST_EMBEDDINGS=lazy; it loads a second copy of the "
                "model, about 1.2 GB of RAM for the 1.5B, on the first request)",
            )
        if not self.loaded or self.model_file is None:
            raise self.not_loaded()
        if self._embedder is None:
            self._embedder = self._make_embedder()
        result: JSON = await self._embedder.embed(body)
        return result

    def _make_embedder(self) -> Any:
        """The embeddings engine's wrapper (not loaded yet); the seam tests replace."""
        from ghost_agent.llm.embedded.embeddings import LazyEmbedder

        return LazyEmbedder(self)

    # -- status ------------------------------------------------------------------------------------------

    async def health(self) -> BackendHealth:
        """Report whether the model is loaded, which file, and the queue depth."""
        loaded = self.loaded
        admitted = self.admitted
        if loaded:
            detail = f"{self.served_name} loaded from {self.model_file}"
        else:
            detail = self.load_error or "model not loaded yet"
        return BackendHealth(
            kind=self.kind,
            reachable=loaded,
            model_loaded=loaded,
            detail=detail,
            extra={
                "model": self.served_name,
                "model_key": self.model_key,
                "model_file": str(self.model_file) if self.model_file else None,
                "n_ctx": self.n_ctx,
                "n_threads": self.n_threads,
                "queue_max": self.queue_max,
                "requests_admitted": admitted,
                "embeddings": self._embedder.status() if self._embedder is not None else self.embeddings_mode,
            },
        )

    async def list_models(self) -> list[str]:
        """The single served model name."""
        return [self.served_name]


__all__ = ["WARMUP_BODY", "EmbeddedBackend"]
