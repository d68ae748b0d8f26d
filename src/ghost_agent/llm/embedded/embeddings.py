"""`/v1/embeddings` on the embedded model: a second llama.cpp engine of the same weights, in embedding mode.

llama.cpp serves either generations or embeddings from one engine (a chat request to an engine started with
`embedding = True` is refused, and the chat engine answers embeddings with 501), so the embeddings engine is
its own `xllamacpp.Server`: created on the first `/v1/embeddings` request (`--embeddings lazy`), mean
pooling, L2-normalised vectors as OpenAI's are, and held until shutdown. Its cost is a second copy of the
weights in RAM: about 1.2 GB for the 1.5B and 0.5 GB for the 0.5B (docs/openai-api.md), paid only by daemons
that are asked for embeddings.

`Server.handle_embeddings(dict)` blocks its thread until every input is embedded and cannot be interrupted, so
requests run on one worker thread of their own (the chat engine's queue is not involved), admitted like chat:
one running and up to `queue_max` waiting, beyond that 503 with Retry-After. A client that leaves does not stop
an embedding already running; it is short, and its slot is released when it ends.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import TYPE_CHECKING, Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm import embedding_wire
from ghost_agent.llm.base import BackendError
from ghost_agent.llm.embedded.engine import engine_params, error_from_payload, is_error
from ghost_agent.logging import get_logger

if TYPE_CHECKING:
    from ghost_agent.llm.embedded.engine import EmbeddedEngine

log = get_logger("embedded")

# Longest input, in tokens: llama.cpp embeds an input in one micro-batch, so n_ctx = n_batch = n_ubatch.
EMBED_CTX = 2048
# The models' hidden size, which is the size of their mean-pooled embeddings.
DIMENSIONS = {"qwen2.5-coder-1.5b": 1536, "qwen2.5-coder-0.5b": 896}


class LazyEmbedder:
    """The embedding-mode engine beside a chat engine (`EmbeddedBackend`), loaded on the first `embed` call from
    the chat engine's model file, threads and queue size.

    `_load` is the seam tests replace (it returns anything with `handle_embeddings(dict) -> dict`).
    """

    def __init__(self, chat_engine: EmbeddedEngine, *, n_ctx: int = EMBED_CTX) -> None:
        self.chat_engine = chat_engine
        self.n_ctx = n_ctx
        self.dimensions: int | None = DIMENSIONS.get(chat_engine.model_key)
        self._engine: Any = None
        self._load_error: str | None = None
        self._load_lock = asyncio.Lock()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()  # admission; released on the worker thread
        self._admitted = 0
        self._closed = False

    def status(self) -> str:
        """For /v1/ghost/health: `loaded`, `loading`, `failed: …` or `lazy` (not asked for yet)."""
        if self._engine is not None:
            return "loaded"
        if self._load_error is not None:
            return f"failed: {self._load_error}"
        return "loading" if self._load_lock.locked() else "lazy"

    async def embed(self, body: JSON) -> JSON:
        """Embed `body["input"]`; returns OpenAI's `list` object (vectors as floats or base64)."""
        self._check_dimensions(body.get("dimensions"))
        request = {"input": body.get("input")}
        self._admit()
        future: concurrent.futures.Future[Any] | None = None
        try:
            engine = await self._ensure_loaded()
            assert self._executor is not None
            future = self._executor.submit(self._run, engine, request)
            future.add_done_callback(self._released_if_never_ran)
        finally:
            if future is None:
                self._release()
        result = await asyncio.wrap_future(future)
        return self._reply(result, body)

    # -- the engine ------------------------------------------------------------------------------------

    async def _ensure_loaded(self) -> Any:
        async with self._load_lock:
            if self._engine is not None:
                return self._engine
            if self._closed:
                raise BackendError("the embedded model is shutting down", status=503, type="backend_unavailable")
            started = time.monotonic()
            log.warning(
                "embeddings_engine_loading", model=self.chat_engine.served_name, n_ctx=self.n_ctx,
                note="a second copy of the weights (about the model file's size in RAM), held until shutdown",
            )
            try:
                self._engine = await asyncio.to_thread(self._load)
            except Exception as exc:
                self._load_error = str(exc) or repr(exc)
                log.error("embeddings_engine_failed", model=self.chat_engine.served_name, error=self._load_error)
                raise BackendError(
                    f"the embeddings engine could not be loaded: {self._load_error}", status=503,
                    type="backend_unavailable", code="embeddings_unavailable", retry_after=30.0,
                ) from exc
            self._load_error = None
            self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ghost-embeddings")
            log.info("embeddings_engine_loaded", model=self.chat_engine.served_name,
                     load_s=round(time.monotonic() - started, 2))
            return self._engine

    def _load(self) -> Any:
        """Blocking: build the embedding-mode llama.cpp engine from the chat engine's model file."""
        import xllamacpp  # type: ignore[import-untyped]  # the [local] extra; loaded already by the chat engine

        chat = self.chat_engine
        assert chat.model_file is not None
        params = engine_params(
            xllamacpp, chat.model_file, n_ctx=self.n_ctx, n_threads=chat.n_threads,
            alias=chat.served_name, prompt_cache_mib=0,
        )
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        params.n_batch = self.n_ctx
        params.n_ubatch = self.n_ctx
        return xllamacpp.Server(params)

    def _run(self, engine: Any, request: JSON) -> Any:
        try:
            return engine.handle_embeddings(request)
        finally:
            self._release()

    # -- admission -------------------------------------------------------------------------------------

    def _admit(self) -> None:
        limit = 1 + self.chat_engine.queue_max
        with self._lock:
            if self._admitted >= limit:
                raise BackendError(
                    f"the embeddings engine is busy ({self._admitted} request(s) running or queued, at most "
                    f"{limit}); retry later", status=503, type="server_busy", code="queue_full", retry_after=2.0,
                )
            self._admitted += 1

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def _released_if_never_ran(self, future: concurrent.futures.Future[Any]) -> None:
        if future.cancelled():  # `_run` never started, so it never released
            self._release()

    async def aclose(self) -> None:
        """Drop the engine (its destructor joins llama.cpp's loop thread, off the event loop). Idempotent."""
        self._closed = True
        executor, self._executor = self._executor, None
        engine, self._engine = self._engine, None

        def unload() -> None:
            nonlocal engine
            if executor is not None:
                executor.shutdown(wait=True, cancel_futures=True)
            engine = None

        if executor is not None or engine is not None:
            await asyncio.to_thread(unload)

    # -- request and reply -----------------------------------------------------------------------------

    def _check_dimensions(self, dimensions: Any) -> None:
        if dimensions is None or dimensions == self.dimensions:
            return
        size = f"{self.dimensions} dimensions" if self.dimensions else "a fixed size"
        raise BackendError(
            f"the embedded model's embeddings have {size}; `dimensions` cannot shorten them: leave it out",
            status=400, type="invalid_request_error", param="dimensions", code="unsupported_parameter",
        )

    def _reply(self, result: Any, body: JSON) -> JSON:
        if not isinstance(result, dict):
            raise BackendError(f"unexpected reply from llama.cpp: {result!r:.200}", status=500, type="server_error")
        if is_error(result):
            raise _embedding_error(result)
        items = sorted((d for d in result.get("data") or () if isinstance(d, dict)), key=lambda d: d.get("index", 0))
        vectors = [d.get("embedding") or [] for d in items]
        if vectors and self.dimensions is None:
            self.dimensions = len(vectors[0])
        usage: JSON = result["usage"] if isinstance(result.get("usage"), dict) else {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0) or sum(
            embedding_wire.input_tokens(i) for i in embedding_wire.inputs(body.get("input"))
        )
        return embedding_wire.embedding_list(
            vectors, model=self.chat_engine.served_name, prompt_tokens=prompt_tokens,
            encoding_format=body.get("encoding_format"),
        )


def _embedding_error(payload: JSON) -> BackendError:
    """llama.cpp's error as a BackendError; an input longer than the micro-batch is the request's fault."""
    error = error_from_payload(payload)
    if "too large" in error.message or "batch size" in error.message:
        return BackendError(
            f"an input is longer than the {EMBED_CTX} tokens the embedded model embeds at once: {error.message}",
            status=400, type="invalid_request_error", param="input", code="context_length_exceeded",
        )
    return error


__all__ = ["DIMENSIONS", "EMBED_CTX", "LazyEmbedder"]
