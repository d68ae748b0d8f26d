"""The model's names: the one clients see, the one the backend receives, and the one every reply carries.

Three settings meet here (docs/openai-api.md, "Model names"):
- `served_model_name` (an alias): advertised at /v1/models and the `model` of every reply, whatever the
  client sent;
- `model`: sent to the backend in place of the client's name; advertised too when there is no alias;
- neither: the client's name goes through, and replies echo it (the embedded model has one name only).

One rule for the reply's `model` on every path (fast, agent, streaming or not, chat and legacy completions,
embeddings): `reply_model(requested)`. It is known before the first chunk, so a streamed agent turn's role
chunk carries the same name as its last chunk and as a non-streamed reply.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ghost_agent.jsonsafe import JSON


@dataclass
class ModelNames:
    """Which model name is advertised, forwarded and replied with (one per daemon, shared by every route).

    `forward` is the configured `model`; `alias` says `served_model_name` is set; `fixed` that the backend
    serves exactly one model (the embedded one); `upstream_default` is the first model an http upstream lists,
    learned at startup.
    """

    advertised: str
    forward: str | None = None
    alias: bool = False
    fixed: bool = False
    upstream_default: str | None = None

    @classmethod
    def configure(
        cls, *, served_model_name: str | None, model: str | None, backend_kind: str, backend_name: str
    ) -> ModelNames:
        """The names from the settings; `backend_name` is what the backend calls its model (advertised when
        nothing is configured)."""
        return cls(
            advertised=served_model_name or model or backend_name,
            forward=model or None,
            alias=bool(served_model_name),
            fixed=backend_kind == "embedded",
        )

    @property
    def pinned(self) -> bool:
        """True when every reply names the advertised model, not the client's."""
        return self.alias or self.forward is not None or self.fixed

    def discovered(self, upstream_models: list[str]) -> None:
        """Take in what the upstream lists (at startup): its first model is its default, and it is what the
        daemon advertises when no name was configured."""
        if not upstream_models:
            return
        self.upstream_default = upstream_models[0]
        if not self.pinned:
            self.advertised = upstream_models[0]

    def backend_model(self, requested: Any) -> str | None:
        """The `model` the backend receives for a client's `requested` one (None: send none)."""
        if self.forward:
            return self.forward
        if self.alias:
            # The alias means nothing to the upstream: its default model serves it.
            return self.upstream_default
        return requested if isinstance(requested, str) and requested else None

    def reply_model(self, requested: Any) -> str:
        """The `model` every reply to a request for `requested` carries."""
        if self.pinned or not isinstance(requested, str) or not requested:
            return self.advertised
        return requested

    def apply(self, body: JSON, *, other_models: bool = False) -> str:
        """Rewrite `body["model"]` in place into the backend's name; returns the reply's name.

        `other_models` (embeddings): a name other than the advertised one passes through untouched, and the
        reply echoes it, so an upstream's separate embedding model (`nomic-embed-text`) stays reachable under
        an alias; the embedded backend has one model and ignores the name.
        """
        requested = body.get("model")
        if other_models and not self.fixed and isinstance(requested, str) and requested not in ("", self.advertised):
            return requested
        reply = self.reply_model(requested)
        name = self.backend_model(requested)
        if name is None:
            body.pop("model", None)
        else:
            body["model"] = name
        return reply


async def renamed(chunks: AsyncIterator[JSON], model: str) -> AsyncIterator[JSON]:
    """Pass chunks through with `model` set on each (a stream that names one model throughout)."""
    try:
        async for chunk in chunks:
            if "model" in chunk or "choices" in chunk:
                chunk["model"] = model
            yield chunk
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


__all__ = ["ModelNames", "renamed"]
