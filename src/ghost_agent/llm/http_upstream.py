"""An OpenAI-compatible upstream over HTTP (llama.cpp server, vLLM, Ollama, ...).

One pooled `httpx.AsyncClient` for the daemon's lifetime. Connect errors and 502/503/504 are retried with
jittered exponential backoff, but only before any byte reached the client: once a stream has yielded a
chunk, a failure ends that stream instead of replaying it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from ghost_agent import jsonsafe
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError, BackendHealth, LLMBackend
from ghost_agent.llm.fast_transport import FastAsyncTransport
from ghost_agent.privacy.redact import redact_text, redact_url

RETRY_STATUSES = frozenset({502, 503, 504})
# Upstream statuses that are the request's fault: the client gets them as-is, with the upstream's message.
CLIENT_STATUSES = frozenset({400, 404, 409, 413, 422, 429})
BACKOFF_BASE_S = 0.05
BACKOFF_MAX_S = 2.0


def normalize_base_url(url: str) -> str:
    """Accept a server root (`http://host:8080`) or an API base (`http://host:8080/v1`); return the base."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"upstream url must look like http://host:port[/v1], got {redact_url(url)!r}")
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


MESSAGE_CHARS = 500
_SCAN_CHARS = 16_384  # of an upstream error text redacted before the cut (a longer one is cut there first)


def _bounded(text: str) -> str:
    """Redact, then cut: a cut first could split a secret into pieces no rule recognises."""
    return redact_text(text[:_SCAN_CHARS])[:MESSAGE_CHARS]


def upstream_message(response_body: bytes, status: int) -> str:
    """The human message inside an upstream error body, whatever shape the server used; redacted, bounded."""
    try:
        data = orjson.loads(response_body)
    except orjson.JSONDecodeError:
        text = response_body.decode("utf-8", "replace").strip()
        return _bounded(text) or f"upstream returned HTTP {status}"
    if isinstance(data, dict):
        # OpenAI/llama.cpp `{"error": {...}}`, `{"error": "..."}`, FastAPI/vLLM `{"detail": ...}`, `{"message"}`.
        err = data.get("error") or data.get("detail") or data.get("message")
        text = _error_text(err)
        if text:
            return _bounded(text)
    return f"upstream returned HTTP {status}"


def _error_text(err: Any) -> str:
    if isinstance(err, dict):
        inner = err.get("message") or err.get("msg")
        return str(inner) if inner else orjson.dumps(err).decode()
    if isinstance(err, list):  # FastAPI validation errors: a list of {"loc", "msg", "type"}
        return "; ".join(filter(None, (_error_text(e) for e in err)))
    return str(err) if err else ""


def _retry_after(headers: httpx.Headers) -> float | None:
    """The upstream's `Retry-After` in seconds (the delta-seconds form; an HTTP date is ignored)."""
    try:
        value = float(headers.get("retry-after", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def _encode(body: JSON) -> bytes:
    """The request body as JSON; integers past 64 bits (valid JSON orjson cannot write) go through the stdlib."""
    try:
        return jsonsafe.dumps(body)
    except ValueError as exc:
        raise BackendError(f"request cannot be sent as JSON: {exc}", status=400, type="invalid_request_error") from None


def _status_error(status: int, body: bytes, headers: httpx.Headers) -> BackendError:
    message = upstream_message(body, status)
    if status in CLIENT_STATUSES:
        return BackendError(
            message, status=status, type="invalid_request_error", code="upstream_rejected",
            retry_after=_retry_after(headers) if status == 429 else None,
        )
    if status == 504:
        return BackendError(f"upstream timed out: {message}", status=504, type="upstream_timeout")
    return BackendError(
        f"upstream error (HTTP {status}): {message}", status=502, type="upstream_error", code=f"upstream_{status}"
    )


class HttpUpstreamBackend(LLMBackend):
    """Forward chat completions to an OpenAI-compatible server."""

    kind = "http"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 300.0,
        retries: int = 2,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = normalize_base_url(url)
        # What messages, /health and logs show: the base url without its userinfo (`user:password@`).
        self.display_url = redact_url(self.base_url)
        self.retries = retries
        self._api_key = api_key
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout, pool=connect_timeout)
        self._limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections, keepalive_expiry=30
        )
        self._transport: httpx.AsyncBaseTransport = transport or FastAsyncTransport(max_connections=max_connections)
        self._client: httpx.AsyncClient | None = None
        self._headers = httpx.Headers({"content-type": "application/json", "accept": "application/json"})
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._timeout_ext = self._timeout.as_dict()
        # Absolute, pre-parsed URLs: merging a relative path into base_url costs ~60 us per request.
        self._chat_url = httpx.URL(f"{self.base_url}/chat/completions")
        self._models_url = httpx.URL(f"{self.base_url}/models")
        self.model_contexts: dict[str, int] = {}  # model id -> context length, as its /v1/models entry says
        self._completions_url = httpx.URL(f"{self.base_url}/completions")
        self._embeddings_url = httpx.URL(f"{self.base_url}/embeddings")

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = {"content-type": "application/json"}
            if self._api_key:
                headers["authorization"] = f"Bearer {self._api_key}"
            self._client = httpx.AsyncClient(
                timeout=self._timeout,
                limits=self._limits,
                headers=headers,
                # Our lean HTTP/1.1 transport: httpx's default one costs ~0.9 ms CPU per request.
                transport=self._transport,
                trust_env=False,  # never route local traffic through a proxy from the environment
            )
        return self._client

    async def start(self) -> None:
        _ = self.client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _backoff(self, attempt: int) -> None:
        delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * (2**attempt))
        await asyncio.sleep(delay * (0.5 + random.random()))

    async def _send(self, payload: bytes, *, stream: bool, url: httpx.URL | None = None) -> httpx.Response:
        """POST one request (chat unless `url` says otherwise), retrying connect errors and 502/503/504; returns
        the 200 response.

        Retrying is safe here because nothing has reached our client yet: callers only start forwarding
        once this returns. With `stream=True` the body is left unread for the caller to iterate.
        """
        # The chat path talks to the client's pooled transport directly: the client layer would keep a
        # cookie jar shared by every user's requests (wrong for a proxy) and costs ~0.15 ms per request.
        _ = self.client
        request = httpx.Request(
            "POST", url or self._chat_url, headers=self._headers, content=payload,
            extensions={"timeout": self._timeout_ext},
        )
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = await self._transport.handle_async_request(request)
                response.request = request
                if not stream:
                    try:
                        await response.aread()
                    except BaseException:
                        await response.aclose()  # give the pooled connection back whatever happened
                        raise
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if last:
                    raise _connect_error(self.display_url, exc) from None
                await self._backoff(attempt)
                continue
            except httpx.TimeoutException:
                raise _timeout_error() from None
            except httpx.HTTPError as exc:
                raise BackendError(f"upstream connection failed: {exc!r}", status=502) from None
            if response.status_code == 200:
                return response
            try:
                body = await response.aread()
            except httpx.HTTPError:
                body = b""
            finally:
                await response.aclose()
            if response.status_code in RETRY_STATUSES and not last:
                await self._backoff(attempt)
                continue
            raise _status_error(response.status_code, body, response.headers)
        raise AssertionError("unreachable")  # pragma: no cover

    async def complete(self, body: JSON) -> JSON:
        return await self._post_json(body, self._chat_url)

    async def _post_json(self, body: JSON, url: httpx.URL) -> JSON:
        response = await self._send(_encode(body), stream=False, url=url)
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise BackendError("upstream returned a non-JSON body", status=502) from None
        if not isinstance(data, dict):
            raise BackendError("upstream returned JSON that is not an object", status=502)
        return data

    def stream(self, body: JSON) -> AsyncIterator[JSON]:
        return self._events(body, self._chat_url)

    async def embeddings(self, body: JSON) -> JSON:
        """Forward to the upstream's `/embeddings` (retried like chat; its errors relayed the same way)."""
        return await self._post_json(body, self._embeddings_url)

    async def text_completion(self, body: JSON) -> JSON:
        """Forward to the upstream's legacy `/completions`."""
        return await self._post_json(body, self._completions_url)

    def text_completion_stream(self, body: JSON) -> AsyncIterator[JSON]:
        """Forward a streamed legacy completion; its events pass through as they arrive."""
        return self._events(body, self._completions_url)

    async def _events(self, body: JSON, url: httpx.URL) -> AsyncIterator[JSON]:
        """POST a streaming request and yield its `data:` events as dicts until `[DONE]`."""
        response = await self._send(_encode(body), stream=True, url=url)
        events = 0
        try:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue  # blank separators, comments, `event:` lines
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                try:
                    item = orjson.loads(data)
                except orjson.JSONDecodeError:
                    item = None
                if not isinstance(item, dict):
                    raise BackendError("upstream sent a malformed stream event", status=502)
                if "error" in item and "choices" not in item:
                    raise BackendError(
                        f"upstream failed mid-stream: {upstream_message(data.encode(), 502)}", status=502
                    )
                events += 1
                yield item
            if events == 0:
                # E.g. a server that ignored `stream: true` and answered with one JSON body: without this the
                # client would get an empty, apparently successful stream.
                kind = response.headers.get("content-type", "no content type")
                raise BackendError(f"upstream sent no stream events ({kind})", status=502)
        except httpx.TimeoutException:
            raise _timeout_error() from None
        except httpx.HTTPError as exc:
            raise BackendError(f"upstream stream broke: {exc!r}", status=502) from None
        finally:
            await response.aclose()

    async def health(self) -> BackendHealth:
        try:
            response = await self.client.get(self._models_url, timeout=2.0)
        except httpx.HTTPError as exc:
            return BackendHealth(self.kind, False, False, f"{self.display_url} unreachable: {exc!r}")
        ok = response.status_code == 200
        return BackendHealth(
            self.kind, ok, ok, f"{self.display_url} answered HTTP {response.status_code}", {"url": self.display_url}
        )

    async def list_models(self) -> list[str]:
        """The ids the upstream lists; the context length each reports is noted for `context_limit`."""
        try:
            response = await self.client.get(self._models_url, timeout=2.0)
            data = response.json().get("data", [])
            models = [m for m in data if isinstance(m, dict) and "id" in m]
        except (httpx.HTTPError, ValueError, AttributeError, TypeError):
            return []  # whatever the upstream answered, /v1/models falls back to our own name
        for model in models:
            context = model_context_length(model)
            if context is not None:
                self.model_contexts[str(model["id"])] = context
        return [str(m["id"]) for m in models]

    def context_limit(self, model: object = None) -> int | None:
        """The context the upstream reported for `model` in its model list (None: not reported, the upstream
        bounds its own `max_tokens`)."""
        return self.model_contexts.get(model) if isinstance(model, str) else None


# Where OpenAI-compatible servers report a model's context in their /v1/models entries: vLLM
# (`max_model_len`), LM Studio and OpenRouter (`max_context_length`, `context_length`), llama.cpp's server
# (`meta.n_ctx`, else the trained `meta.n_ctx_train`).
_CONTEXT_FIELDS = ("max_model_len", "max_context_length", "context_length")


def model_context_length(entry: dict[str, object]) -> int | None:
    """The context length a /v1/models entry reports, if any (a positive int)."""
    meta = entry.get("meta")
    candidates = [entry.get(name) for name in _CONTEXT_FIELDS]
    if isinstance(meta, dict):
        candidates += [meta.get("n_ctx"), meta.get("n_ctx_train")]
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _connect_error(url: str, exc: Exception) -> BackendError:
    return BackendError(
        f"upstream {url} is unreachable ({type(exc).__name__})", status=502, type="upstream_unavailable",
        code="upstream_unreachable",
    )


def _timeout_error() -> BackendError:
    return BackendError("upstream did not answer in time", status=504, type="upstream_timeout", code="timeout")
