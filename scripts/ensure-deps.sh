#!/usr/bin/env bash
# Installs the system packages Switchboard needs, when any is missing.
# Usage: scripts/ensure-deps.sh [--build-only] [extra-package ...]
#   --build-only   only what compiling needs (headers, pkg-config): no PostgreSQL server, no command-line tools
set -euo pipefail

packages=(libmicrohttpd-dev libpq-dev libcurl4-openssl-dev libssl-dev pkg-config)
if [ "${1:-}" = "--build-only" ]; then
    shift
else
    # The private cluster (server and psql) and the tools the README's examples use.
    packages+=(postgresql curl jq openssl)
fi
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
}
