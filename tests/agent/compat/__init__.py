"""Tests of agent/compat."""
