#!/usr/bin/env bash
# Install what Ghost Agent's sandbox needs on Debian/Ubuntu: bubblewrap (bwrap) and setpriv (util-linux).
# Idempotent and quick when everything is present; `make sandbox` and `make test` run it. Without root (and
# without passwordless sudo) it prints what to run instead and exits 0, so the daemon falls back loudly to the
# unisolated restricted-subprocess sandbox rather than failing to start.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)

if [ ${#missing[@]} -eq 0 ]; then
    echo "sandbox: bubblewrap $(bwrap --version | awk '{print $2}') and setpriv present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run=(sudo -n)
else
    echo "sandbox: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    echo "sandbox: until then code runs in the UNISOLATED restricted-subprocess fallback" >&2
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "sandbox: no apt-get here; install ${missing[*]} with your package manager" >&2
    exit 0
fi

echo "sandbox: installing ${missing[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
if ! "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # a fresh machine may have no package lists yet
    "${run[@]}" apt-get update -q
    "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
echo "sandbox: bubblewrap $(bwrap --version | awk '{print $2}') installed"
