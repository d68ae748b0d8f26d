#!/usr/bin/env bash
# Install what Ghost Agent's sandbox needs on Debian/Ubuntu: bubblewrap (bwrap) and setpriv (util-linux).
# Idempotent and quick when everything is present; `make sandbox` and `make test` run it. Without root (and
# without passwordless sudo) it prints what to run instead and exits 0, so the daemon falls back loudly to the
# unisolated restricted-subprocess sandbox rather than failing to start.
set -euo pipefail
MISSING_NOTE="until then code runs in the UNISOLATED restricted-subprocess fallback" \
    "$(dirname "$0")/../scripts/apt_ensure.sh" sandbox bwrap:bubblewrap setpriv:util-linux
command -v bwrap >/dev/null 2>&1 && echo "sandbox: bubblewrap $(bwrap --version | awk '{print $2}') and setpriv present" || true
