#!/usr/bin/env bash
# The test command: installs what is missing, builds everything with zero warnings allowed, then runs the
# suite against a throw-away PostgreSQL. SANITIZE=thread runs it under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}

scripts/ensure-deps.sh

flags=()
if [ -n "${SANITIZE:-}" ]; then flags+=(--sanitize="$SANITIZE"); fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== build" >&2
if ! "$SWIFT" build --build-tests ${flags[@]+"${flags[@]}"} 2>&1 | tee "$log" >&2; then
    echo "build failed" >&2
    exit 1
fi
if grep -E "warning:" "$log" | grep -v "^ld" >/dev/null; then
    echo "build printed warnings; the project builds with none:" >&2
    grep -E "warning:" "$log" | sort -u >&2
    exit 1
fi

echo "== deployment files" >&2
python3 -c 'import yaml, openapi_spec_validator, openapi_core' 2>/dev/null \
    || python3 -m pip install --quiet --root-user-action=ignore pyyaml openapi-spec-validator openapi-core >&2
python3 scripts/check-compose.py
python3 - <<'PY'
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
spec, _ = read_from_filename("openapi.yaml")
validate(spec)
print("openapi.yaml: valid OpenAPI 3.1")
PY

echo "== test" >&2
# Some tests run on their own afterwards, because their claims are about a machine under normal load, not one
# saturated by the rest of the suite: cross-replica freshness, and the hundreds-of-concurrent-clients tests.
quiet="AcrossProcesses|ConcurrentRequests|ConcurrentColdReads"
# Last, the README's walk-through against the built binary, every response validated against openapi.yaml.
scripts/with-temp-postgres.sh bash -c '
    "$0" test --skip-build --skip "$1" "${@:2}" && "$0" test --skip-build --filter "$1" "${@:2}" &&
    psql "$DATABASE_URL" -q -c "CREATE DATABASE walkthrough" &&
    DATABASE_URL="$DATABASE_URL dbname=walkthrough" python3 Tests/contract/walkthrough.py "$("$0" build --show-bin-path)/switchboard"
' "$SWIFT" "$quiet" ${flags[@]+"${flags[@]}"} "$@"
