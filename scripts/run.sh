#!/usr/bin/env bash
# `make run`: installs what is missing, builds the release binary, starts a private PostgreSQL under .data/ when
# DATABASE_URL is unset (with an admin token generated once and kept in .data/admin-token), serves, and once the
# service is ready prints what to paste into another terminal. Ctrl-C stops the service; `make stop` the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
PG_DIR=${PG_DIR:-$PWD/.data/pg}
PG_PORT=${PG_PORT:-5432}

scripts/ensure-deps.sh
# SWITCHBOARD_BINARY (the tests' hook) serves an already built binary instead of building the release one.
binary=${SWITCHBOARD_BINARY:-}
if [ -z "$binary" ]; then
    # shellcheck disable=SC2086 # SWIFT_BUILD_FLAGS is a list of flags; unset, the runtime is linked in statically
    # as the Makefile does (set it empty for a dynamically linked build)
    "$SWIFT" build -c release ${SWIFT_BUILD_FLAGS---static-swift-stdlib}
    binary=$PWD/.build/release/switchboard
fi

private=""
if [ -z "${DATABASE_URL:-}" ]; then
    scripts/pg.sh start "$PG_DIR" "$PG_PORT"
    DATABASE_URL=$(scripts/pg.sh url "$PG_DIR" "$PG_PORT")
    export DATABASE_URL
    private=1
    if [ -z "${SWITCHBOARD_ADMIN_TOKEN:-}" ]; then
        token_file=$(dirname "$PG_DIR")/admin-token
        [ -s "$token_file" ] || (umask 077 && openssl rand -hex 24 >"$token_file")
        SWITCHBOARD_ADMIN_TOKEN=$(cat "$token_file")
        export SWITCHBOARD_ADMIN_TOKEN
    fi
fi

"$binary" serve &
server=$!
# Ctrl-C reaches the service too (same process group); forwarding is harmless, a second signal is ignored.
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM

port=${PORT:-8080}
host=${HOST:-127.0.0.1}
case "$host" in 0.0.0.0) host=127.0.0.1 ;; ::) host="[::1]" ;; *:*) host="[$host]" ;; esac
ready=""
if [ "$port" != 0 ]; then
    for _ in $(seq 1 600); do
        kill -0 "$server" 2>/dev/null || break
        if curl -fsS -o /dev/null --max-time 1 "http://$host:$port/readyz" 2>/dev/null; then ready=1; break; fi
        sleep 0.1
    done
fi

if [ -n "$ready" ]; then
    base="http://localhost:$port"
    {
        echo
        echo "Switchboard is serving on $base. In another terminal, from $PWD, paste:"
        echo
        echo "    export SWITCHBOARD=$base"
        [ -n "$private" ] && echo "    export DATABASE_URL='$DATABASE_URL'"
        if [ -n "${SWITCHBOARD_ADMIN_TOKEN:-}" ]; then
            echo "    export SWITCHBOARD_ADMIN_TOKEN='$SWITCHBOARD_ADMIN_TOKEN'"
        fi
        echo "    export PATH=\"$(dirname "$binary"):\$PATH\""
        echo "    switchboard tenants create \"Acme Bank\"        # prints the tenant's API key, once"
        echo
        echo "then follow the walk-through in README.md. Ctrl-C here stops the service;"
        if [ -n "$private" ] && [ "$PG_DIR" = "$PWD/.data/pg" ]; then
            echo "\`make stop\` then stops the private PostgreSQL ($PG_DIR)."
        elif [ -n "$private" ]; then
            echo "\`scripts/pg.sh stop $PG_DIR\` then stops the private PostgreSQL."
        fi
        [ -z "${SWITCHBOARD_ADMIN_TOKEN:-}" ] && echo "The admin API is off: set SWITCHBOARD_ADMIN_TOKEN to turn it on."
        echo
    } >&2
fi

set +e
while true; do
    wait "$server"
    status=$?
    kill -0 "$server" 2>/dev/null || break
done
exit "$status"
