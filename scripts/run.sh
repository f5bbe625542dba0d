#!/usr/bin/env bash
# `make run`: installs what is missing, builds the release binary, starts a private PostgreSQL under .data/ when
# DATABASE_URL is unset or names that cluster (with an admin token generated once and kept in .data/admin-token),
# serves, and once the service is ready prints what to paste into another terminal. Ctrl-C stops the service;
# `make stop` the cluster. It refuses to start when PORT or STREAM_PORT is already in use.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
PG_DIR=${PG_DIR:-$PWD/.data/pg}
PG_PORT=${PG_PORT:-5432}
port=${PORT:-8080}
# The streams' port: PORT+1 unless set; `off` means none; with PORT 0 (a free port) it is a free port too.
stream_port=${STREAM_PORT:-}
if [ -z "$stream_port" ]; then
    case "$port" in 0) stream_port=0 ;; *[!0-9]*) stream_port=off ;; *) stream_port=$((port + 1)) ;; esac
fi

# Inodes of the TCP sockets listening on port $1 (IPv4 and IPv6; state 0A is LISTEN).
listening_inodes() {
    local suffix
    suffix=$(printf ':%04X' "$1")
    awk -v suffix="$suffix" '$4 == "0A" && substr($2, length($2) - 4) == suffix { print $10 }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# Whether process $1 holds the socket with inode $2.
holds_socket() {
    local fd
    for fd in /proc/"$1"/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "socket:[$2]" ] && return 0
    done
    return 1
}
# Whether process $1 holds a socket listening on port $2.
owns_listener() {
    local inode
    for inode in $(listening_inodes "$2"); do
        holds_socket "$1" "$inode" && return 0
    done
    return 1
}
# Who listens on port $1, as " by pid N (name)", when this user can see it.
listener_owner() {
    local inode pid
    for inode in $(listening_inodes "$1"); do
        for pid in $(ls /proc | grep -E '^[0-9]+$'); do
            if holds_socket "$pid" "$inode"; then
                echo " by pid $pid ($(cat /proc/"$pid"/comm 2>/dev/null || echo unknown))"
                return
            fi
        done
    done
}
# Refuses to start when PORT or STREAM_PORT is already listened on (by another `make run`, say): the new server
# could not bind it, and a readiness check could reach the other process. The message suggests a free pair.
check_ports() {
    local name value suggestion
    for name in PORT STREAM_PORT; do
        if [ "$name" = PORT ]; then value=$port; else value=$stream_port; fi
        case "$value" in off | 0 | *[!0-9]*) continue ;; esac
        [ -n "$(listening_inodes "$value")" ] || continue
        suggestion=9090
        for candidate in $(seq $((port + 2)) 2 $((port + 200))); do
            if [ "$candidate" -lt 65535 ] && [ -z "$(listening_inodes "$candidate")" ] &&
                [ -z "$(listening_inodes $((candidate + 1)))" ]; then
                suggestion=$candidate
                break
            fi
        done
        echo "Not starting: port $value ($name) is already in use$(listener_owner "$value"), perhaps by another" \
            "\`make run\`. Choose other ports with PORT and STREAM_PORT (STREAM_PORT is PORT+1 unless set; \`off\`" \
            "for none), e.g. \`PORT=$suggestion make run\`$([ "$name" = STREAM_PORT ] && echo " or \`STREAM_PORT=off make run\`")." >&2
        exit 1
    done
}
check_ports

scripts/ensure-deps.sh
# SWITCHBOARD_BINARY (the tests' hook) serves an already built binary instead of building the release one.
binary=${SWITCHBOARD_BINARY:-}
if [ -z "$binary" ]; then
    # shellcheck disable=SC2086 # SWIFT_BUILD_FLAGS is a list of flags; unset, the runtime is linked in statically
    # as the Makefile does (set it empty for a dynamically linked build). Linked statically, the toolchain's own
    # Foundation brings glibc's mktemp (FoundationEssentials' Data+Writing, behind Data.write's atomic option, which
    # Switchboard never calls: it writes no files), and the linker warns about it on every build. Nothing in this
    # project calls mktemp and nothing can be done about it here, so that one line is left out of what a newcomer
    # sees; any other line, warning or not, is shown.
    set +o pipefail
    { "$SWIFT" build -c release ${SWIFT_BUILD_FLAGS---static-swift-stdlib} 2>&1 && status=0 || status=$?
      mkdir -p "$PWD/.build" && echo "$status" >"$PWD/.build/.run-build-status"; } \
        | grep -v "the use of \`mktemp' is dangerous" || true
    set -o pipefail
    built=$(cat "$PWD/.build/.run-build-status" 2>/dev/null || echo 1)
    [ "$built" = 0 ] || { echo "the build failed" >&2; exit 1; }
    binary=$PWD/.build/release/switchboard
fi

# Whether DATABASE_URL names the private cluster: its socket directory (PG_DIR, through any link) and PG_PORT, as
# in the line this script prints to paste (`make stop`, then `make run` again in that terminal, must start it).
names_private_cluster() {
    local word words host="" db_port=5432
    # key=value words (libpq allows spaces around `=` and single quotes around values)
    read -ra words <<<"$(printf '%s' "$1" | sed -E "s/[[:space:]]*=[[:space:]]*/=/g; s/'//g")"
    for word in ${words[@]+"${words[@]}"}; do
        case "$word" in host=*) host=${word#host=} ;; port=*) db_port=${word#port=} ;; esac
    done
    case "$host" in /*) ;; *) return 1 ;; esac
    [ "$db_port" = "$PG_PORT" ] && [ "$(realpath -m "$host")" = "$(realpath -m "$PG_DIR")" ]
}

private=""
if [ -z "${DATABASE_URL:-}" ] || names_private_cluster "$DATABASE_URL"; then
    scripts/pg.sh start "$PG_DIR" "$PG_PORT"
    DATABASE_URL=${DATABASE_URL:-$(scripts/pg.sh url "$PG_DIR" "$PG_PORT")}
    export DATABASE_URL
    private=1
    if [ -z "${SWITCHBOARD_ADMIN_TOKEN:-}" ]; then
        token_file=$(dirname "$PG_DIR")/admin-token
        [ -s "$token_file" ] || (umask 077 && openssl rand -hex 24 >"$token_file")
        SWITCHBOARD_ADMIN_TOKEN=$(cat "$token_file")
        export SWITCHBOARD_ADMIN_TOKEN
    fi
    # The audit chain's key, kept beside the cluster like the admin token (a deployment keeps its own out of the
    # database's reach: see "Data lifecycle" in the README).
    if [ -z "${AUDIT_SEAL_KEY:-}" ]; then
        key_file=$(dirname "$PG_DIR")/audit-seal-key
        [ -s "$key_file" ] || (umask 077 && openssl rand -hex 32 >"$key_file")
        AUDIT_SEAL_KEY=$(cat "$key_file")
        export AUDIT_SEAL_KEY
    fi
fi

check_ports
"$binary" serve &
server=$!
# Ctrl-C reaches the service too (same process group); forwarding is harmless, a second signal is ignored.
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM

host=${HOST:-127.0.0.1}
case "$host" in 0.0.0.0) host=127.0.0.1 ;; ::) host="[::1]" ;; *:*) host="[$host]" ;; esac
# Ready once the socket listening on PORT is this server's own (not another process's on the same port) and its
# /readyz answers: four times a second for the first minute, then every 2 s for as long as the server runs (a
# database that is down keeps it unready; the server says so in its log).
ready=""
if [ "$port" != 0 ]; then
    polls=0
    while kill -0 "$server" 2>/dev/null; do
        if owns_listener "$server" "$port" &&
            curl -fsS -o /dev/null --max-time 1 "http://$host:$port/readyz" 2>/dev/null; then
            ready=1
            break
        fi
        polls=$((polls + 1))
        if [ "$polls" -lt 240 ]; then sleep 0.25; else sleep 2; fi
    done
fi

# $1 in single quotes, for the shell it is pasted into.
quoted() {
    local q="'"
    printf "'%s'" "${1//$q/$q\\$q$q}"
}

if [ -n "$ready" ]; then
    base="http://localhost:$port"
    {
        echo
        echo "Switchboard is serving on $base. In another terminal, from $PWD, paste:"
        echo
        echo "    export SWITCHBOARD=$base"
        [ -n "$private" ] && echo "    export DATABASE_URL=$(quoted "$DATABASE_URL")"
        if [ -n "${SWITCHBOARD_ADMIN_TOKEN:-}" ]; then
            echo "    export SWITCHBOARD_ADMIN_TOKEN=$(quoted "$SWITCHBOARD_ADMIN_TOKEN")"
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
