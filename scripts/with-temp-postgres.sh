#!/usr/bin/env bash
# Runs a command with DATABASE_URL pointing at a throw-away PostgreSQL cluster, which is stopped and removed
# afterwards, whatever the command's outcome. The command's exit status is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/switchboard-pg.XXXXXX)
chmod 755 "$dir"
cleanup() {
    "$here/pg.sh" stop "$dir/cluster"
    rm -rf "$dir"
}
trap cleanup EXIT
# The test suite runs many services at once against this one cluster, each with its pool, LISTEN connection and
# webhook worker: about 300 connections at its peak.
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-1000} "$here/pg.sh" start "$dir/cluster" 5432
DATABASE_URL=$("$here/pg.sh" url "$dir/cluster" 5432)
export DATABASE_URL
export SWITCHBOARD_PG_SCRIPT="$here/pg.sh"
set +e
"$@"
status=$?
set -e
exit $status
