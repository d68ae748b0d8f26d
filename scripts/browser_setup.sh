#!/usr/bin/env bash
# Install the headless browser the status page's tests drive: Debian's chromium and its chromedriver (apt; no
# browser download at install or test time). `make browser` and `make test` run it. Without root the browser
# tests skip, saying what to install.
set -euo pipefail
"$(dirname "$0")/apt_ensure.sh" browser chromium:chromium chromedriver:chromium-driver
command -v chromium >/dev/null 2>&1 && echo "browser: $(chromium --version 2>/dev/null | head -1) and chromedriver present" || true
