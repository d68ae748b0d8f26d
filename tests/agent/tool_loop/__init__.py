"""Tests of agent/tool_loop."""
