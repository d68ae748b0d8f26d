"""Repository scripts, runnable from the repo root as `python -m scripts.<name>`."""
