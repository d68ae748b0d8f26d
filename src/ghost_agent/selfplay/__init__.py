"""Self-play (phase 3): tasks the agent sets itself and can check, a frontier of where to practise, and the
experience bank its verified solutions fill (DESIGN §8)."""
