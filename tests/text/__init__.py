"""Tests of the shared text helpers."""
