"""`python -m ghost_agent` runs the CLI."""

from __future__ import annotations

import sys

from ghost_agent.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
