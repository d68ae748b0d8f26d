"""Trajectories and the outcome signals every learning loop reads: store, redaction, heuristics."""
