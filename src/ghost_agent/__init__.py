"""Ghost Agent: a local, privacy-first, self-improving LLM agent daemon."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
