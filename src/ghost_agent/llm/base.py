"""The LLM backend interface every turn talks to.

Requests and replies are OpenAI chat-completions dicts (the wire format), so a backend can pass a client's
fields through untouched and the server never re-models what it does not need to understand.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from ghost_agent.jsonsafe import JSON

# Per-request timings (ms) a backend may fill in, e.g. `queue` for time spent waiting for a model slot.
# The turn sets a fresh dict before calling the backend; None outside a turn.
request_timings: ContextVar[dict[str, float] | None] = ContextVar("ghost_request_timings", default=None)


class BackendError(Exception):
    """A failure the server maps to an OpenAI error response.

    `status` is the HTTP status to answer with (502 upstream failure, 503 busy, 504 timeout, or a 4xx the
    upstream attributed to the request); `retry_after` (seconds) becomes a `Retry-After` header.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 502,
        type: str = "upstream_error",
        code: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.retry_after = retry_after


@dataclass
class BackendHealth:
    """What `/health` and `doctor` report about a backend."""

    kind: str
    reachable: bool
    model_loaded: bool
    detail: str = ""
    extra: JSON = field(default_factory=dict)


class LLMBackend(abc.ABC):
    """An OpenAI-compatible chat backend.

    `complete` returns a `chat.completion` dict; `stream` yields `chat.completion.chunk` dicts and ends
    after the last chunk (no `[DONE]` sentinel: that is the server's framing). Both raise `BackendError`
    for failures that happen before the first chunk; a failure mid-stream raises `BackendError` too and
    the server ends the stream with an error event. Cancelling the awaiting task cancels the generation.
    """

    kind: str = "abstract"
    # True when start() takes long (loading a model): the server then serves /health while it runs.
    slow_start: bool = False
    # Chat content-part types the model can read; None = whatever the client sends is passed on (an upstream
    # decides). A request with other parts is refused with a 400 naming the part (docs/openai-api.md).
    content_parts: frozenset[str] | None = None
    # The model's context in tokens, where this backend knows it (the embedded model's n_ctx): no reply can be
    # longer, so a client's `max_tokens` is bounded by it (`wire.bound_max_tokens`). None: unknown.
    context_tokens: int | None = None

    def context_limit(self, model: object = None) -> int | None:
        """The context in tokens of `model` (the name sent to the backend), where known; None: the backend
        bounds its own. One model per backend by default: `context_tokens`."""
        return self.context_tokens

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (connection pool, loaded model). Called once by the server lifespan."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Idempotent."""

    @abc.abstractmethod
    async def complete(self, body: JSON) -> JSON:
        """Run one non-streaming chat completion."""

    @abc.abstractmethod
    def stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Run one streaming chat completion, yielding chunk dicts."""

    @abc.abstractmethod
    async def health(self) -> BackendHealth:
        """Report reachability and whether a model is loaded, without raising."""

    async def list_models(self) -> list[str]:
        """Model ids this backend serves (used for `/v1/models`)."""
        return []

    # The rest of the OpenAI surface. A backend without one answers 501 (`not_supported`), never a 500.

    async def embeddings(self, body: JSON) -> JSON:
        """Run one `/v1/embeddings` request (OpenAI's body, `input` already validated); return its `list`
        object (`data[i].embedding` as floats, or base64 when `encoding_format` asked for it)."""
        raise not_supported(self.kind, "/v1/embeddings")

    async def text_completion(self, body: JSON) -> JSON:
        """Run one legacy `/v1/completions` request to the end; return its `text_completion` object."""
        raise not_supported(self.kind, "/v1/completions")

    def text_completion_stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Stream one legacy completion as `text_completion` chunk dicts (no `[DONE]` sentinel); raises
        `BackendError` as `stream` does, possibly already when called."""
        raise not_supported(self.kind, "/v1/completions")


def not_supported(kind: str, what: str, hint: str = "") -> BackendError:
    """The 501 a backend answers for a part of the API it does not serve."""
    message = f"the {kind} backend does not serve {what}"
    return BackendError(f"{message}; {hint}" if hint else message, status=501, type="not_supported_error",
                        code="not_supported")
