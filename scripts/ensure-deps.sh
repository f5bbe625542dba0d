#!/usr/bin/env bash
# Installs the system packages Switchboard needs to build, test and run, when any is missing.
# Usage: scripts/ensure-deps.sh [extra-package ...]
set -euo pipefail

packages=(libmicrohttpd-dev libpq-dev postgresql pkg-config "$@")
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
