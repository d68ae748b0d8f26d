"""Tests of agent/stages."""
