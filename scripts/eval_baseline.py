"""`python -m scripts.eval_baseline freeze|compare ...`: run an eval suite, freeze a baseline, compare to it.

The seed's command line (seed 001, "Running the eval"); the same as `ghost-agent eval freeze|compare`. See
docs/eval.md for the flags and exit codes (0 ok, 1 the top-level pass rate dropped, 2 the run could not be made).
"""

from __future__ import annotations

import sys

from ghost_agent.cli.eval import main

if __name__ == "__main__":
    sys.exit(main())
