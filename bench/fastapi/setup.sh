#!/usr/bin/env bash
# Creates bench/.venv with the FastAPI reference's pinned packages (requirements.txt), once per version of that
# file; prints the venv's path. Needs python3 with venv and pip, and PyPI.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv="$here/../.venv"
stamp=$(sha256sum "$here/requirements.txt" | cut -c1-16)
if [ ! -x "$venv/bin/uvicorn" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
    echo "$stamp" >"$venv/.requirements"
fi
realpath "$venv"
