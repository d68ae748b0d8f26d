#!/usr/bin/env bash
# Install Debian packages the project needs when their commands are missing: `apt_ensure.sh LABEL CMD:PACKAGE...`.
# Idempotent and quick when every command is present. Without root (and without passwordless sudo), or without
# apt-get, it prints what to run instead (and $MISSING_NOTE, when set) and exits 0: the caller degrades loudly
# rather than failing. Used by `make sandbox` (sandbox/setup.sh) and `make browser` (scripts/browser_setup.sh).
set -euo pipefail

label=$1; shift
missing=()
for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run=(sudo -n)
else
    echo "$label: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    [ -n "${MISSING_NOTE:-}" ] && echo "$label: $MISSING_NOTE" >&2
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "$label: no apt-get here; install ${missing[*]} with your package manager" >&2
    exit 0
fi

echo "$label: installing ${missing[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
if ! "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # a fresh machine may have no package lists yet
    "${run[@]}" apt-get update -q
    "${run[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
