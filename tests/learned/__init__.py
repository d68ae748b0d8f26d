"""Tests of the learned-model core."""
