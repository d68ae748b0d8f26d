"""LLM backends behind one small interface: http upstream, embedded local model, scripted fake."""

from __future__ import annotations

from ghost_agent.llm.base import BackendError, BackendHealth, LLMBackend

__all__ = ["BackendError", "BackendHealth", "LLMBackend"]
