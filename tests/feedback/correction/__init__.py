"""Tests of the user-correction detector."""
