"""Tests of the embedded model (llm/embedded)."""
