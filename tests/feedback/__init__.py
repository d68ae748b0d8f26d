"""Tests of outcome labelling."""
