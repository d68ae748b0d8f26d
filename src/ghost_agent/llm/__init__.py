"""LLM backends behind one small interface (`base.LLMBackend`): the http upstream (`http_upstream`, on our own
HTTP/1.1 transport `fast_transport`), the embedded local model (`embedded/`), the scripted fake (`scripted`,
served over HTTP by `fake_server`); the OpenAI wire shapes they share (`wire`, `embedding_wire`,
`text_completion`, `stream_fold`, `content_parts`, `model_names`), the factory that picks one, and the
model-priority gate (`gate`: chat first) that the agent and the watchdog both hold."""

from __future__ import annotations

from ghost_agent.llm.base import BackendError, BackendHealth, LLMBackend

__all__ = ["BackendError", "BackendHealth", "LLMBackend"]
