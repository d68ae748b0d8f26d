"""The OpenAI-compatible HTTP server: app factory, lifespan, routes, auth, errors."""

from __future__ import annotations

from ghost_agent.server.app import build_app

__all__ = ["build_app"]
