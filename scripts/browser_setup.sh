#!/usr/bin/env bash
# Install the headless browser the status page's tests drive: Debian's chromium and its chromedriver (apt; no
# browser download at install or test time). Idempotent and quick when present; `make browser` and `make test`
# run it. Without root (and without passwordless sudo) it prints what to run and exits 0: the browser tests
# then skip with that reason.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)

if [ ${#missing[@]} -eq 0 ]; then
    echo "browser: $(chromium --version 2>/dev/null | head -1) and chromedriver present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run=(sudo -n)
else
    echo "browser: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "browser: no apt-get here; install ${missing[*]} with your package manager" >&2
    exit 0
fi

echo "browser: installing ${missing[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
if ! "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    "${run[@]}" apt-get update -q
    "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
echo "browser: $(chromium --version 2>/dev/null | head -1) installed"
