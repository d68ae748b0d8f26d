"""Tests of agent/checking."""
