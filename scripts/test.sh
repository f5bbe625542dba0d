#!/usr/bin/env bash
# The test command: installs what is missing, builds everything with zero warnings allowed, then runs the
# suite against a throw-away PostgreSQL. SANITIZE=thread runs it under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}

# Chromium and its driver for the agent console's browser test (Tests/contract/console_browser.py); a ClamAV daemon
# for the upload-scanning tests, which start their own with a one-signature database (nothing is downloaded).
scripts/ensure-deps.sh chromium chromium-driver clamav-daemon

flags=()
if [ -n "${SANITIZE:-}" ]; then flags+=(--sanitize="$SANITIZE"); fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Runs a build; it fails on an error and on any compiler warning. The one linker line let through is the toolchain's
# own: its static Foundation uses `mktemp` (see scripts/run.sh), which the linker names in every static link.
build_without_warnings() {
    if ! "$@" 2>&1 | tee "$log" >&2; then
        echo "build failed" >&2
        exit 1
    fi
    if grep -E "warning:" "$log" | grep -v "^ld" | grep -v "the use of \`mktemp' is dangerous" >/dev/null; then
        echo "build printed warnings; the project builds with none:" >&2
        grep -E "warning:" "$log" | sort -u >&2
        exit 1
    fi
}
echo "== build" >&2
build_without_warnings "$SWIFT" build --build-tests ${flags[@]+"${flags[@]}"}
if [ -z "${SANITIZE:-}" ]; then
    echo "== the release build (what make run and the image build)" >&2
    # The same flags as scripts/run.sh and the Dockerfile: a target that builds only for the tests (importing the
    # testing library, say) must not break them.
    build_without_warnings "$SWIFT" build -c release --static-swift-stdlib
fi
echo "== the client's command-line example" >&2
# The README's SwiftPM package that uses the SwitchboardClient product the way an app does.
build_without_warnings "$SWIFT" build --package-path examples/client-cli

echo "== doc comments" >&2
# Every public declaration carries a `///` comment; the checker uses only the standard library.
python3 -I scripts/check-docs.py Sources
python3 -I scripts/check-test-limits.py

echo "== python tools" >&2
# The project's own environment; the isolation check runs with a poisoned PYTHONPATH and user site (an
# openapi_spec_validator that refuses to import) to show that nothing outside .venv is read.
python=$(scripts/python-env.sh)
poison=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$poison"' EXIT
mkdir -p "$poison/openapi_spec_validator"
echo 'raise ImportError("the global openapi_spec_validator was imported")' >"$poison/openapi_spec_validator/__init__.py"
PYTHONPATH=$poison PYTHONUSERBASE=$poison "$python" -I Tests/tools/check_isolation.py
if global=$(python3 -c 'import importlib.metadata as m; print(m.version("openapi-spec-validator"))' 2>/dev/null); then
    echo "(the machine's global python3 has openapi-spec-validator $global; the tests use the pinned one)" >&2
fi

echo "== deployment files" >&2
"$python" -I scripts/check-compose.py
scripts/check-nginx.sh
"$python" -I - <<'PY'
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
spec, _ = read_from_filename("openapi.yaml")
validate(spec)
print("openapi.yaml: valid OpenAPI 3.1")
PY

echo "== test" >&2
# At most 8 tests run at once. Started all together (the test library's default), the suite's few hundred tests
# share the two threads that run tasks, so each test's wall-clock bounds (a 30 s connect, a 10 s wait) also pay for
# the work of every other test: under ThreadSanitizer, or on a machine busy with something else, trivial tests took
# 43 s to be scheduled and connects timed out. Bounded, a test's time is its own plus a few others'.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
# Some tests run on their own afterwards, because their claims are about a machine under normal load, not one
# saturated by the rest of the suite: cross-replica freshness, and the hundreds-of-concurrent-clients tests.
# Also run alone: tests whose claims rest on time (expiries, deadlines) or that load the machine themselves.
quiet="AcrossProcesses|ConcurrentRequests|ConcurrentColdReads|slowHeadsFromOneAddress|aLogNobodyReads|theFeedPagesKeptAreBounded"
quiet+="|theReadmeExampleLosesNoEventInFiftyRuns|aTokenThatExpiresMidStream|anExpiredSessionsStreamEnds|DatabaseBlackhole"
quiet+="|heartbeatsKeepAQuietConnectionOpen|sha256OfAMillionAs|WebhookTests|UnreadCountsAcrossReplicasTests"
quiet+="|connectTimesOutAgainstASilentServer|slowlorisLeavesNoHungWorker|WebhookAgentSideTests|PresenceTests"
# Two replicas each (their start-up migrates a database), waiting out an erasure's grace or racing writes: run with the
# quiet ones, so that the main run's timed tests are not starved of the cores under ThreadSanitizer.
quiet+="|ErasureTests|MessageRaceTests"
# Last, and each alone (one run per name): tests that put the machine under load themselves (tens of concurrent
# uploads), which would starve the timed claims of the quiet ones and of each other.
alone="AttachmentLoadTests|uploadsCutAtRandomLeaveNothingBehind|aLargeExportStreamsInConstantMemory"
# Then every operation's responses validated against openapi.yaml, the README's walk-through as a newcomer pastes it
# after `make run` (scripts/run.sh with its own private cluster), `make run` itself (ports in use, a restart with the
# pasted DATABASE_URL, a database that is down, a start that prints no warning), hostile values sent to every documented
# operation (no 5xx, every error problem+json), the agent console in headless Chromium, and event streams through the
# compose deployment's nginx.
bin=$("$SWIFT" build --show-bin-path ${flags[@]+"${flags[@]}"})/switchboard
# The throw-away cluster runs without fsync: the suite opens a few hundred databases at once (one per test), and
# on a slow disk the fsyncs of their creation held new connections past their 5 s connect timeout. No test is
# about the disk surviving a machine crash; every other guarantee is the same with or without. For the same reason
# (and ThreadSanitizer's slowdown of every process) the suite's connections may take 30 s to connect, not 5.
PG_FSYNC=off PYTHON=$python BIN=$bin scripts/with-temp-postgres.sh bash -c '
    export DATABASE_URL="$DATABASE_URL connect_timeout=30"
    "$0" test --skip-build --skip "$1|$2" "${@:3}" && "$0" test --skip-build --filter "$1" "${@:3}" &&
    for alone in ${2//|/ }; do "$0" test --skip-build --filter "$alone" "${@:3}" || exit 1; done &&
    psql "$DATABASE_URL" -q -c "CREATE DATABASE walkthrough" &&
    DATABASE_URL="$DATABASE_URL dbname=walkthrough" "$PYTHON" -I Tests/contract/walkthrough.py "$BIN" &&
    "$PYTHON" -I Tests/contract/readme_walkthrough.py "$BIN" &&
    "$PYTHON" -I Tests/contract/run_script.py "$BIN" &&
    psql "$DATABASE_URL" -q -c "CREATE DATABASE hostile" &&
    DATABASE_URL="$DATABASE_URL dbname=hostile" "$PYTHON" -I Tests/contract/hostile_input.py "$BIN" &&
    psql "$DATABASE_URL" -q -c "CREATE DATABASE console" &&
    DATABASE_URL="$DATABASE_URL dbname=console" "$PYTHON" -I Tests/contract/console_browser.py "$BIN" &&
    psql "$DATABASE_URL" -q -c "CREATE DATABASE nginx" &&
    DATABASE_URL="$DATABASE_URL dbname=nginx" scripts/check-nginx-streams.sh "$BIN"
' "$SWIFT" "$quiet" "$alone" ${flags[@]+"${flags[@]}"} "$@"
