#!/usr/bin/env bash
# A private PostgreSQL cluster for development and tests.
#   scripts/pg.sh start DIR PORT   create (if needed) and start a cluster in DIR, listening on a socket in DIR
#   scripts/pg.sh stop DIR         stop it (fast)
#   scripts/pg.sh status DIR       exit 0 when it is running
#   scripts/pg.sh url DIR PORT     print the libpq connection string
# initdb and postgres refuse to run as root, so as root they run as the postgres user.
set -euo pipefail

cmd=${1:?usage: pg.sh start|stop|status|url DIR [PORT]}
dir=$(realpath -m "${2:?DIR missing}")
port=${3:-5432}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "PostgreSQL server binaries not found; run scripts/ensure-deps.sh" >&2; exit 1; }

# runuser keeps the caller's working directory, which the postgres user may not be allowed to enter (a checkout under
# /root): initdb and pg_ctl then complain that they cannot change back to it. They run from / instead (every path
# they are given is absolute).
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# As root the cluster belongs to the postgres user, who must be able to reach DIR: a checkout under a mode-700
# home directory (or in a `mktemp -d` folder) is out of its reach. The cluster then lives under the postgres user's
# own home instead, and DIR becomes a link to it, so every later command finds it through DIR.
place_reachable() {
    [ "$(id -u)" -eq 0 ] || return 0
    mkdir -p "$(dirname "$dir")"
    as_owner test -x "$(dirname "$dir")" && return 0
    local home
    home=$(getent passwd postgres | cut -d: -f6)
    local target
    target="$home/switchboard/$(printf '%s' "$dir" | sha256sum | cut -c1-16)"
    install -d -o postgres -g postgres "$home/switchboard" "$target"
    # What an earlier failed attempt left there (an empty folder, initdb's log) holds no cluster.
    if [ -d "$dir" ] && [ ! -L "$dir" ] && [ ! -e "$dir/data/PG_VERSION" ]; then rm -rf "$dir"; fi
    ln -sfn "$target" "$dir"
    echo "note: the postgres user cannot reach $(dirname "$dir"); the cluster lives in $target (linked from $dir)" >&2
    dir=$target
}

case "$cmd" in
start)
    place_reachable
    if [ "$(id -u)" -eq 0 ]; then install -d -o postgres -g postgres "$dir"; else mkdir -p "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then exit 0; fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
        "-k $dir -p $port -c listen_addresses='' -c max_connections=${PG_MAX_CONNECTIONS:-300} -c shared_preload_libraries=pg_stat_statements -c fsync=${PG_FSYNC:-on}" >/dev/null \
        || { tail -n 30 "$dir/server.log" >&2; exit 1; }
    ;;
stop)
    [ -f "$dir/data/PG_VERSION" ] || exit 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
status)
    [ -f "$dir/data/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
    ;;
url)
    echo "host=$dir port=$port user=postgres dbname=postgres"
    ;;
*)
    echo "unknown command: $cmd" >&2; exit 2
    ;;
esac
