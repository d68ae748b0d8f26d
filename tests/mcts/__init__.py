"""Tests of MCTS."""
