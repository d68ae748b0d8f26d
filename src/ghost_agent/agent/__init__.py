"""The agent turn, split into stages with explicit inputs and outputs."""
