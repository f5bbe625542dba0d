#!/usr/bin/env bash
# The project's own Python environment for test and benchmark tools: creates .venv (git-ignored) from
# Tests/tools/requirements.txt when it is missing or the pins changed, and prints its interpreter's path.
# Every package is pinned (dependencies included) and installed with --no-deps, so nothing is resolved against
# whatever the machine happens to have; the environment does not see the global site-packages.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=Tests/tools/requirements.txt
venv=.venv
stamp=$venv/requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "== python tools: creating $venv from $requirements" >&2
    rm -rf "$venv"
    python=$(command -v python3 || true)
    if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        scripts/ensure-deps.sh python3 python3-venv
        python=/usr/bin/python3
    fi
    "$python" -m venv "$venv"
    PYTHONNOUSERSITE=1 "$venv/bin/python" -I -m pip install --quiet --disable-pip-version-check --require-virtualenv \
        --no-deps -r "$requirements" >&2
    "$venv/bin/python" -I -m pip check >&2
    echo "$want" >"$stamp"
fi
echo "$PWD/$venv/bin/python"
